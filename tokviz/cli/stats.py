"""`tokviz stats`: what a text or a folder costs in tokens, per tokenizer and per script.

    tokviz stats PATH... -t SPEC... [--baseline SPEC] [--chars-per-token 4]
                 [--price SPEC=USD_PER_MTOK ...] [--limit N] [--csv FILE|-] [--json FILE|-] [--text TEXT]

The numbers come from `tokviz.analysis`; this module parses options, draws the progress bar
(stderr, folders only, when it is a terminal) and prints tables. Errors are raised as `CliError`
(or TokenizerError): `tokviz.cli.main` prints them as one line.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from tokviz.analysis.export import csv_text, json_text, to_csv, to_json
from tokviz.analysis.inflation import format_inflation
from tokviz.analysis.stats import Analysis, StatsOptions, analyze_paths, analyze_text, stats_rows
from tokviz.cli.errors import CliError, check_policy, decode_input
from tokviz.cli.outputs import check_output_folder
from tokviz.cli.progress import ProgressBar
from tokviz.core.scripts import SCRIPTS
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("stats", help="token counts, cost and context budget per tokenizer")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders, or - for stdin")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC",
                   help="catalog name or vocabulary file; repeatable (default cl100k_base)")
    p.add_argument("--text", help="analyse this text instead of files")
    p.add_argument("--baseline", metavar="SPEC", help="ratios are to this tokenizer (default: the first)")
    p.add_argument("--chars-per-token", default="4", metavar="X",
                   help="the characters rule the real counts are compared with (default 4)")
    p.add_argument("--price", action="append", default=[], metavar="SPEC=USD_PER_MTOK",
                   help="price in US dollars per million tokens for one tokenizer; repeatable")
    p.add_argument("--limit", metavar="N", help="context limit in tokens: where it falls, how much fits")
    p.add_argument("--special", default="none", metavar="all|none|raise|TOKEN,...",
                   help="special-token text in the input (as for encode; default: plain text)")
    p.add_argument("--formats", action="store_true",
                   help="also show format inflation: minified vs indented JSON, tabs vs spaces")
    p.add_argument("--include-hidden", action="store_true", help="also read hidden files and folders")
    p.add_argument("--csv", metavar="FILE|-", help="write the per-tokenizer table as CSV")
    p.add_argument("--json", metavar="FILE|-", help="write everything as JSON")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    if args.csv == "-" and args.json == "-":
        raise CliError("--csv - and --json - both want stdout; send one of them to a file")
    for option, path in (("--csv", args.csv), ("--json", args.json)):  # before any counting
        if path and path != "-":
            check_output_folder(option, path)
    specs = list(dict.fromkeys(args.tokenizers or ["cl100k_base"]))
    if args.baseline and args.baseline not in specs:
        specs.append(args.baseline)
    tokenizers = [catalog.load(spec) for spec in specs]
    by_spec = dict(zip(specs, tokenizers))
    _check_unique(tokenizers)
    options = StatsOptions(
        chars_per_token=_positive_float(args.chars_per_token, "--chars-per-token"),
        prices=parse_prices(args.price, by_spec),
        limit=None if args.limit is None else _limit(args.limit),
        baseline=by_spec[args.baseline].name if args.baseline else None,
        policy=SpecialPolicy.parse(args.special),
    )
    check_policy(options.policy, tokenizers)
    analysis, text = _run(args, tokenizers, options)
    for s in analysis.skipped:
        print(f"tokviz: skipped {s.path}: {s.reason}", file=sys.stderr)
    if not analysis.files:
        raise CliError(f"no text files to analyse ({len(analysis.skipped)} skipped)")
    if args.formats and text is None:
        raise CliError("--formats needs one text: a single file, stdin or --text")
    _export(analysis, args)
    if "-" not in (args.csv, args.json):
        print_report(sys.stdout, analysis)
        if args.formats and text is not None:
            print_inflation(sys.stdout, text, tokenizers, options.policy)
    return 0


def _run(
    args: argparse.Namespace, tokenizers: list[Tokenizer], options: StatsOptions
) -> tuple[Analysis, str | None]:
    if args.text is not None:
        if args.paths:
            raise CliError("give either --text or paths, not both")
        return analyze_text(args.text, tokenizers, options=options), args.text
    if args.paths == ["-"]:
        text = decode_input(sys.stdin.buffer.read(), "stdin")
        return analyze_text(text, tokenizers, options=options), text
    if not args.paths:
        raise CliError("nothing to analyse: give files or folders, - for stdin, or --text TEXT")
    if "-" in args.paths:
        raise CliError("- (stdin) cannot be mixed with paths")
    for path in args.paths:
        if not Path(path).exists():
            raise CliError(f"{path}: no such file or folder")
    bar = ProgressBar(sys.stderr, width=30, log_every=None) if any(Path(p).is_dir() for p in args.paths) else None
    try:
        analysis = analyze_paths(
            args.paths, tokenizers, options=options, progress=FilesProgress(bar) if bar else None,
            cancel=threading.Event(), include_hidden=args.include_hidden,
        )
    finally:
        if bar is not None:
            bar.close()
    single = analysis.files[0].path if len(analysis.files) == 1 else None
    # the whole text only for --formats: a large file is otherwise never held in memory
    return analysis, (Path(single).read_text("utf-8") if single and args.formats else None)


def _check_unique(tokenizers: Sequence[Tokenizer]) -> None:
    names = [t.name for t in tokenizers]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise CliError(f"tokenizer {', '.join(twice)} given twice (under two names?)")


def parse_prices(items: Sequence[str], by_spec: dict[str, Tokenizer]) -> dict[str, float]:
    """`SPEC=USD` items -> {tokenizer name: USD per million tokens}; SPEC is a -t spec or a name."""
    names = {t.name: t.name for t in by_spec.values()} | {s: t.name for s, t in by_spec.items()}
    prices: dict[str, float] = {}
    for item in items:
        spec, sep, value = item.rpartition("=")
        if not sep or not spec:
            raise CliError(f"--price {item!r}: expected SPEC=USD_PER_MTOK, e.g. --price cl100k_base=2.50")
        if spec not in names:
            raise CliError(f"--price {item!r}: {spec} is not one of the tokenizers ({', '.join(by_spec)})")
        prices[names[spec]] = _positive_float(value, f"--price {item!r}", allow_zero=True)
    return prices


def _positive_float(value: str, what: str, *, allow_zero: bool = False) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not (number > 0 or allow_zero and number == 0) or number == float("inf"):
        raise CliError(f"{what}: {value!r} is not a {'non-negative' if allow_zero else 'positive'} number")
    return number


def _limit(value: str) -> int:
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit < 0:
        raise CliError(f"--limit: {value!r} is not a whole number of tokens >= 0")
    return limit


def _export(analysis: Analysis, args: argparse.Namespace) -> None:
    if args.csv == "-":
        sys.stdout.write(csv_text(stats_rows(analysis)))
    elif args.csv:
        _write(to_csv, stats_rows(analysis), args.csv)
        print(f"tokviz: wrote {args.csv}", file=sys.stderr)
    if args.json == "-":
        sys.stdout.write(json_text(analysis.to_dict()))
    elif args.json:
        _write(to_json, analysis.to_dict(), args.json)
        print(f"tokviz: wrote {args.json}", file=sys.stderr)


# -- output ---------------------------------------------------------------------------------------


class FilesProgress:
    """`progress(done, total)` for `analyze_paths`: `[#####.....] 12/30 files` on a progress bar."""

    def __init__(self, bar: ProgressBar) -> None:
        self.bar = bar

    def __call__(self, done: int, total: int) -> None:
        self.bar.show(self.line(done, total), last=done >= total)

    def line(self, done: int, total: int) -> str:
        return f"{self.bar.gauge(done, total)} {done}/{total} files"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-align the first column, right-align the rest."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
    lines = []
    for row in (headers, *rows):
        cells = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _num(x: float | None, fmt: str = ".2f") -> str:
    return "—" if x is None else format(x, fmt)


def _money(x: float | None) -> str:
    return "—" if x is None else f"${x:,.2f}" if x >= 1 else f"${x:.6f}"


def print_report(out: TextIO, analysis: Analysis) -> None:
    t = analysis.text
    rule = analysis.options.chars_per_token
    out.write(f"{t.files} file(s), {t.chars:,} chars, {t.bytes:,} bytes, {t.words:,} words\n\n")
    headers = ["tokenizer", "tokens", "chars/tok", "bytes/tok", f"est@{rule:g}", "est err %",
               f"x {analysis.baseline}"]
    prices = any(r.price_per_mtok is not None for r in analysis.results)
    limit = analysis.options.limit
    headers += ["cost"] * prices + ([f"fits {limit:,}"] if limit is not None else [])
    rows = []
    for r in analysis.results:
        row = [r.name, f"{r.tokens:,}", _num(r.chars_per_token), _num(r.bytes_per_token),
               f"{r.estimate:,.0f}", _num(r.estimate_error_pct, "+.1f"), _num(r.ratio_to_baseline, ".3f")]
        if prices:
            row.append(_money(r.cost))
        if r.budget is not None:
            b = r.budget
            where = "all" if b.fits else f"{b.fraction:.1%} (to char {b.fit_chars:,})"
            if b.files > 1:
                where = f"{b.fraction:.1%}, {b.files_fitting}/{b.files} files whole"
            row.append(where)
        rows.append(row)
    out.write(table(headers, rows))
    present = [s for s in SCRIPTS if t.script_chars[s]]
    out.write("\ntokens per script (tokens/char)\n")
    script_table = [
        [s, f"{t.script_chars[s]:,}",
         *(f"{r.script_tokens[s]:,.1f} ({r.script_tokens[s] / t.script_chars[s]:.2f})" for r in analysis.results)]
        for s in present
    ]
    out.write(table(["script", "chars", *(r.name for r in analysis.results)], script_table))


def print_inflation(out: TextIO, text: str, tokenizers: Sequence[Tokenizer], policy: SpecialPolicy) -> None:
    """The same content minified vs indented (JSON) or with tabs vs spaces (anything else)."""
    rows = format_inflation(text, tokenizers, policy=policy)
    out.write("\nformat inflation (tokens)\n")
    out.write(table(["variant", "chars", *(t.name for t in tokenizers)],
                    [[r.variant, f"{r.chars:,}", *(f"{r.tokens[t.name]:,}" for t in tokenizers)] for r in rows]))


def _write(write: Callable[[Any, str], None], data: Any, path: str) -> None:
    """An output file, or one line naming it and the cause (a full disk, a read-only folder)."""
    try:
        write(data, path)
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror or e}") from None
