"""`tokviz dataset PATH... -t SPEC...`: what a whole dataset costs in each tokenizer.

Reads JSONL, JSON, CSV, Parquet, Arrow and text files (and folders of them) with
`tokviz.core.records`, counts with `tokviz.analysis.dataset`, and prints a table per tokenizer
(a progress line on stderr while it reads), or `--json`; `--per-example FILE` writes one row per
example. Rows that cannot be read are one line each on stderr and counted; `--strict` stops at the
first.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

from tokviz.cli.errors import CliError
from tokviz.cli.progress import ProgressBar

SHOWN_SKIPS = 10  # skipped rows named on stderr; the rest are counted


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("dataset", help="what a dataset (JSONL, Parquet, CSV, ...) costs in each tokenizer, "
                                              "with each model's chat template")
    p.add_argument("paths", nargs="+", metavar="PATH", help="dataset files or folders (.jsonl .json .csv .parquet "
                                                             ".arrow .txt .md)")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC",
                   help="catalog name, vocabulary file or hf:/ollama: spec; repeatable (default cl100k_base)")
    p.add_argument("--field", metavar="NAME", help="the field to count (a dotted path); default: messages, "
                                                    "conversations, prompt+completion or text")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N examples")
    p.add_argument("--sample", type=int, metavar="N", help="a random sample of N examples (with --seed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--template", metavar="FILE|NAME", help="the chat template for every tokenizer (default: each "
                                                            "one's own)")
    p.add_argument("--generation-prompt", action="store_true", help="end each conversation with the assistant's "
                                                                     "turn opened")
    p.add_argument("--context", type=int, metavar="N", help="count the examples longer than N tokens")
    p.add_argument("--price", action="append", default=[], metavar="SPEC=USD",
                   help="price per million tokens of a tokenizer, for the cost column; repeatable")
    p.add_argument("--per-example", metavar="FILE", help="one row per example: .csv, .jsonl or .parquet")
    p.add_argument("--json", action="store_true", help="the summary as JSON")
    p.add_argument("--strict", action="store_true", help="stop at the first row that cannot be counted")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tokviz.analysis.chat_sources import TemplateSourceError, choose_template
    from tokviz.analysis.chat_template import ChatTemplate
    from tokviz.analysis.dataset import count_dataset
    from tokviz.cli.stats import parse_prices
    from tokviz.core import catalog
    from tokviz.core.records import dataset_files, read_examples

    for name in ("limit", "sample", "context"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise CliError(f"--{name} {value}: must be at least 1")
    if args.per_example and Path(args.per_example).suffix.lower() not in (".csv", ".jsonl", ".parquet"):
        raise CliError(f"--per-example {args.per_example}: name a .csv, .jsonl or .parquet file")
    dataset_files(args.paths)  # a missing path or an unknown file is an error before any work
    specs = args.tokenizers or ["cl100k_base"]
    tokenizers = [catalog.load(spec) for spec in specs]
    names = [t.name for t in tokenizers]
    if len(set(names)) != len(names):
        raise CliError(f"tokenizer {', '.join(sorted({n for n in names if names.count(n) > 1}))} given twice")
    prices = parse_prices(args.price, dict(zip(specs, tokenizers)))
    templates: dict[str, ChatTemplate | None] = {}
    for spec, tokenizer in zip(specs, tokenizers):
        try:
            templates[tokenizer.name] = choose_template(spec, args.template)
        except TemplateSourceError:
            templates[tokenizer.name] = None  # its conversations are skipped for it, said below
    bar = ProgressBar(sys.stderr, log_every=None)  # a live line on a terminal only
    began = time.monotonic()

    def progress(done: int) -> None:
        rate = done / max(time.monotonic() - began, 1e-9)
        bar.show(f"{done:,} examples counted, {rate:,.0f}/s")

    items = read_examples(args.paths, field=args.field, limit=args.limit, sample=args.sample, seed=args.seed)
    try:
        result = count_dataset(items, tokenizers, templates, add_generation_prompt=args.generation_prompt,
                               strict=args.strict, progress=progress)
    except ValueError as e:
        raise CliError(f"{e} (--strict)") from None
    finally:
        bar.close()
    for skipped in result.skipped[:SHOWN_SKIPS]:
        print(f"tokviz dataset: skipped {skipped.where}: {skipped.reason}", file=sys.stderr)
    for counts in result.tokenizers:
        for number, why in counts.failed[:SHOWN_SKIPS]:
            print(f"tokviz dataset: {counts.name} skipped example {number}: {why}", file=sys.stderr)
    if args.per_example:
        write_per_example(args.per_example, list(result.per_example()), names)
        print(f"tokviz dataset: wrote {args.per_example}", file=sys.stderr)
    rows = [t.summary(context=args.context, price=prices.get(t.name)) for t in result.tokenizers]
    first = rows[0]["tokens"] if rows else 0
    for row in rows:
        row["ratio_to_first"] = row["tokens"] / first if first else None
    if args.json:
        json.dump({"examples": result.examples, "skipped": len(result.skipped), "tokenizers": rows,
                   "disagreements": [{"example": i, "ratio": r} for i, r in result.disagreements()]},
                  sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(summary_text(result.examples, len(result.skipped), rows, result.disagreements()))
    return 0


def summary_text(examples: int, skipped: int, rows: list[dict[str, Any]], worst: list[tuple[int, float]]) -> str:
    out = io.StringIO()
    out.write(f"{examples:,} examples ({skipped:,} skipped)\n")
    columns = [("tokenizer", "tokenizer", "{}"), ("examples", "examples", "{:,}"), ("tokens", "tokens", "{:,}"),
               ("mean", "mean", "{:,.1f}"), ("median", "median", "{:,.0f}"), ("p90", "p90", "{:,.0f}"),
               ("p99", "p99", "{:,.0f}"), ("max", "max", "{:,}"), ("chars/tok", "chars_per_token", "{:.2f}"),
               ("vs first", "ratio_to_first", "{:.3f}x"), ("template", "template_overhead", "{:,}"),
               ("over ctx", "over_context", "{:,}"), ("USD", "cost_usd", "{:,.2f}"), ("findings", "findings", "{:,}"),
               ("skipped", "skipped", "{:,}")]
    shown = [(h, k, f) for h, k, f in columns if any(k in r and r[k] is not None for r in rows)]
    cells = [[h for h, _, _ in shown]]
    for row in rows:
        cells.append([f.format(row[k]) if row.get(k) is not None else "-" for _, k, f in shown])
    widths = [max(len(c[i]) for c in cells) for i in range(len(shown))]
    for line in cells:
        out.write("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
                  .rstrip() + "\n")
    if worst:
        out.write("most different: " + ", ".join(f"example {i} ({r:.2f}x)" for i, r in worst[:5]) + "\n")
    return out.getvalue()


def write_per_example(path: str, rows: list[dict[str, Any]], names: list[str]) -> None:
    """The rows as CSV, JSONL or Parquet, written whole or not at all."""
    from tokviz.core.files import write_atomic

    suffix = Path(path).suffix.lower()
    columns = ["example", *names]
    try:
        if suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.table({c: [r[c] for r in rows] for c in columns})
            sink = pa.BufferOutputStream()
            pq.write_table(table, sink)
            write_atomic(path, sink.getvalue().to_pybytes())
        elif suffix == ".jsonl":
            write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))
        else:
            text = io.StringIO()
            writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
            write_atomic(path, text.getvalue().encode("utf-8"))
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror or e}") from None
