"""`tokviz dataset`: what a whole dataset costs in each tokenizer, example by example.

    tokviz dataset PATH... -t SPEC... [--field NAME] [--limit N | --sample N --seed S]
                   [--context N] [--price SPEC=USD_PER_MTOK ...] [--template FILE|NAME]
                   [--scripts] [--per-example FILE.csv|.parquet|.jsonl] [--json FILE|-] [--strict]
                   [--jobs N] [--scheduler tcp://HOST:8786 | local[:N]]

Conversations are rendered with each tokenizer's own chat template, as `tokviz chat` renders
them; texts are counted as `tokviz encode` counts them. The work is `tokviz.analysis.dataset`'s;
this module parses options, draws the progress bar and prints. A record that cannot be counted
is one stderr line naming the file and line or row, and the run goes on (`--strict`: stops).
With `--scheduler` (or `TOKVIZ_SCHEDULER`) the shards are counted on a Dask cluster
(`tokviz.analysis.dataset_cluster`, docs/scaling.md); without it Dask is not imported.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from contextlib import ExitStack
from typing import TextIO

from tokviz.analysis.chat import template_variables
from tokviz.analysis.dataset import DatasetOptions, DatasetSummary, ExampleCount, Progress, Remote, count_dataset
from tokviz.analysis.dataset_output import PerExampleWriter, per_example_format
from tokviz.analysis.export import json_text, to_json
from tokviz.cli.errors import CliError
from tokviz.cli.outputs import check_output_folder
from tokviz.cli.progress import ProgressBar
from tokviz.cli.stats import _check_unique, _money, _num, parse_prices, table
from tokviz.core.cluster import ClusterError, scheduler_address
from tokviz.core.records import DatasetError, Skip


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("dataset", help="token counts of a dataset (JSONL, Parquet, CSV, ...) per tokenizer, "
                                              "conversations through each model's chat template")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (a Hugging Face datasets cache too)")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC",
                   help="catalog name or vocabulary file; repeatable (default cl100k_base)")
    p.add_argument("--field", metavar="NAME", help="the field holding the text or messages (dotted: a.b.0)")
    p.add_argument("--limit", metavar="N", help="only the first N records")
    p.add_argument("--sample", metavar="N", help="N records drawn at random (with --seed), in input order")
    p.add_argument("--seed", type=int, default=0, help="the seed of --sample (default 0)")
    p.add_argument("--context", metavar="N", help="context limit in tokens: how many examples are over it")
    p.add_argument("--price", action="append", default=[], metavar="SPEC=USD_PER_MTOK",
                   help="price in US dollars per million tokens for one tokenizer; repeatable")
    p.add_argument("--template", metavar="FILE|NAME", help="the chat template, as for `tokviz chat`")
    p.add_argument("--generation-prompt", action="store_true", help="end each chat with the assistant's turn opened")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="variables",
                   help="a template variable, as for `tokviz chat`; repeatable")
    p.add_argument("--scripts", action="store_true",
                   help="also the tokens per script (Latin, Han, Hangul, ...), as tokviz stats gives them; slower")
    p.add_argument("--per-example", metavar="FILE", help="one row per example: .csv, .parquet or .jsonl")
    p.add_argument("--json", metavar="FILE|-", help="write the summary as JSON")
    p.add_argument("--strict", action="store_true", help="stop at the first record that cannot be counted")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes (default: one per core)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="count on a Dask cluster: a scheduler's tcp://host:8786, or local[:N] to start N "
                        "workers here (default: $TOKVIZ_SCHEDULER, else tokviz's own processes)")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    for option, path in (("--per-example", args.per_example), ("--json", args.json)):
        if path and path != "-":
            check_output_folder(option, path)
    if args.per_example:
        per_example_format(args.per_example)
    if args.jobs < 1:
        raise CliError(f"--jobs {args.jobs}: at least 1")
    for path in args.paths:
        if not os.path.exists(path):
            raise CliError(f"{path}: no such file or folder")
    specs = tuple(dict.fromkeys(args.tokenizers or ["cl100k_base"]))
    tokenizers = [catalog.load(spec) for spec in specs]
    _check_unique(tokenizers)
    names = [t.name for t in tokenizers]
    try:
        variables = template_variables(args.variables)
    except ValueError as e:
        raise CliError(f"--set {e}") from None
    options = DatasetOptions(specs, template=args.template, generation_prompt=args.generation_prompt,
                             template_kwargs=variables, field=args.field, jobs=args.jobs,
                             scripts=args.scripts)
    summary = DatasetSummary(names, context=None if args.context is None else _positive(args.context, "--context"),
                             prices=parse_prices(args.price, dict(zip(specs, tokenizers))))
    local = tokenizers if args.jobs == 1 else None
    if local is None:  # the workers load their own: this process needs only the names
        del tokenizers
        _give_back_memory()
    limit = None if args.limit is None else _positive(args.limit, "--limit")
    sample = None if args.sample is None else _positive(args.sample, "--sample")
    cancel = threading.Event()
    with ExitStack() as stack:
        remote = _remote(stack, scheduler_address(args.scheduler), options, cancel)
        _count(args, options, local, summary, limit, sample, remote, cancel)
    if not summary.examples:
        raise CliError(f"no examples to count ({summary.skipped} skipped)")
    if args.json == "-":
        sys.stdout.write(json_text(summary.to_dict()))
        return 0
    if args.json:
        to_json(summary.to_dict(), args.json)
        print(f"tokviz: wrote {args.json}", file=sys.stderr)
    print_report(sys.stdout, summary)
    return 0


def _give_back_memory() -> None:
    """Free what the vocabularies held (loaded here to check the specs and name the columns)."""
    import gc

    from tokviz.core.heap import trim_heap

    gc.collect()
    trim_heap()


def _remote(stack: ExitStack, address: str | None, options: DatasetOptions,
            cancel: threading.Event) -> Remote | None:
    """With a scheduler: the connected cluster's counter (closed with `stack`); else None."""
    if address is None:
        return None
    from tokviz.analysis.dataset_cluster import ClusterCounts
    from tokviz.core.cluster import Cluster

    try:
        cluster = stack.enter_context(Cluster(address))
        return ClusterCounts(cluster, options, cancel=cancel)
    except ClusterError as e:
        raise CliError(str(e)) from None


def _count(args: argparse.Namespace, options: DatasetOptions, tokenizers: list | None, summary: DatasetSummary,
           limit: int | None, sample: int | None, remote: Remote | None, cancel: threading.Event) -> None:
    names = summary.names
    writer = PerExampleWriter(args.per_example, names) if args.per_example else None
    bar = ProgressBar(sys.stderr, width=30, log_every=None)
    meter = _Meter(bar)
    ok = False
    try:
        for result in count_dataset(args.paths, options, limit=limit, sample=sample, seed=args.seed,
                                    progress=meter, cancel=cancel, tokenizers=tokenizers, remote=remote):
            if isinstance(result, Skip):
                bar.close()
                if args.strict:
                    raise CliError(f"{result} (--strict)")
                print(f"tokviz: skipped {result}", file=sys.stderr)
            elif isinstance(result, ExampleCount) and writer is not None:
                writer.add(result.index, result.tokens)
            summary.add(result)
        ok = True
    except (DatasetError, ClusterError) as e:
        raise CliError(str(e)) from None
    finally:
        bar.close()
        if writer is not None:
            if ok:
                writer.close()
            else:
                writer.discard()
    if writer is not None:
        print(f"tokviz: wrote {args.per_example}", file=sys.stderr)


def _positive(value: str, what: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise CliError(f"{what}: {value!r} is not a whole number >= 1")
    return n


class _Meter:
    """`progress(Progress)`: `[####....] 40.1/120.0 MB · 12,345 examples · 3.2 MB/s · ETA 25s`."""

    def __init__(self, bar: ProgressBar) -> None:
        self.bar = bar
        self.start = time.monotonic()

    def __call__(self, p: Progress) -> None:
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = p.done_bytes / elapsed
        eta = (p.total_bytes - p.done_bytes) / rate if rate > 0 else 0.0
        self.bar.show(f"{self.bar.gauge(p.done_bytes, p.total_bytes)} {p.done_bytes / 1e6:,.1f}/"
                      f"{p.total_bytes / 1e6:,.1f} MB · {p.examples:,} examples · {rate / 1e6:.1f} MB/s · "
                      f"ETA {eta:.0f}s", last=p.done_bytes >= p.total_bytes)


def print_report(out: TextIO, summary: DatasetSummary) -> None:
    results = summary.results()
    out.write(f"{summary.examples:,} examples ({summary.chats:,} conversations), {summary.chars:,} chars"
              f"{f', {summary.skipped:,} skipped' if summary.skipped else ''}\n\n")
    headers = ["tokenizer", "tokens", "mean", "median", "p90", "p99", "max", "chars/tok", f"x {results[0].name}"]
    if summary.context is not None:
        headers.append(f"over {summary.context:,}")
    prices = any(r.cost is not None for r in results)
    headers += ["cost"] * prices
    if summary.chats:
        headers.append("template/ex")
    headers.append("findings")
    rows = []
    for r in results:
        row = [r.name, f"{r.tokens:,}", _num(r.mean, ".1f"), _num(r.median, ".0f"), _num(r.p90, ".0f"),
               _num(r.p99, ".0f"), f"{r.max:,}" if r.max is not None else "—", _num(r.chars_per_token),
               _num(r.ratio_to_first, ".3f")]
        if r.over_context is not None:
            row.append(f"{r.over_context:,}")
        if prices:
            row.append(_money(r.cost))
        if summary.chats:
            row.append(_num(r.template_overhead_mean, ".1f"))
        row.append(f"{r.findings:,} in {r.examples_with_findings:,}" if r.findings else "0")
        rows.append(row)
    out.write(table(headers, rows))
    disagreements = summary.disagreements()
    if len(summary.names) > 1 and disagreements:
        out.write("\nwhere the tokenizers disagree most (largest count / smallest)\n")
        out.write(table(["example", "where", *summary.names, "spread"],
                        [[str(d.index), d.source, *(f"{n:,}" for n in d.tokens), f"{d.spread:.2f}"]
                         for d in disagreements]))
    if summary.script_chars is not None:
        out.write("\ntokens per script (tokens/char), texts and message contents\n")
        cells = {(r["script"], r["tokenizer"]): r for r in summary.script_rows()}
        scripts = list(dict.fromkeys(script for script, _ in cells))
        out.write(table(["script", "chars", *summary.names], [
            [s, f"{cells[s, summary.names[0]]['chars']:,}",
             *(f"{cells[s, n]['tokens']:,.1f} ({cells[s, n]['tokens_per_char']:.2f})" for n in summary.names)]
            for s in scripts]))
    if summary.findings:
        out.write("\nspecial-token text in message content\n")
        for index, source, name, note in summary.findings:
            out.write(f"  ! example {index} ({source}), {name}: {note}\n")
    if summary.skipped:
        out.write(f"\nskipped: {summary.skipped:,} record(s) (listed on stderr)\n")
