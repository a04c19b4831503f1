"""`tokviz overlap -t A -t B`: which tokens vocabularies share (by their bytes), by script and length.

When exactly two are given and every token of the first is in the second (an extension, a trained
BPE with more merges), the new merges of the second are listed too.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from tokviz.analysis.overlap import Breakdown, NewMerge, Overlap, new_merges, overlap_of, shown_bytes
from tokviz.cli.errors import CliError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("overlap", help="which tokens vocabularies share, by script and length")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC", required=True,
                   help="catalog name or vocabulary file; at least two")
    p.add_argument("--json", action="store_true", help="machine-readable output (every token only one has)")
    p.add_argument("--limit", type=int, default=10, metavar="N",
                   help="list at most N tokens only one vocabulary has, and N new merges (0: all; default 10)")
    p.add_argument("--by", choices=("script", "length", "both"), default="both", help="breakdown tables to print")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    if len(args.tokenizers) < 2:
        raise CliError("overlap needs at least two vocabularies (-t A -t B)")
    if args.limit < 0:
        raise CliError(f"--limit must be 0 (all) or more, not {args.limit}")
    tokenizers = [catalog.load(spec) for spec in args.tokenizers]
    result = overlap_of(tokenizers)
    merges = None
    if len(tokenizers) == 2 and not result.only[0] and result.only[1]:
        merges = new_merges(result.sets[0], tokenizers[1])
    if args.json:
        json.dump(overlap_json(result, merges), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_overlap(sys.stdout, result, merges, limit=args.limit, by=args.by)
    return 0


def overlap_json(result: Overlap, merges: list[NewMerge] | None) -> dict:
    n = len(result.names)
    out: dict = {
        "vocabularies": [
            {"name": name, "tokens": len(s), "only": len(result.only[i]),
             "only_tokens": [{"id": i_, "bytes": d.hex(), "text": d.decode("utf-8", "replace")}
                             for i_, d in result.only_rows(i)],
             "specials": sorted(result.specials[i])}
            for i, (name, s) in enumerate(zip(result.names, result.sets))
        ],
        "shared": result.shared_count,
        "union": result.union_count,
        "pairs": [{"a": result.names[a], "b": result.names[b], "common": result.common(a, b),
                   "same_ids": result.same_ids(a, b), "jaccard": result.jaccard(a, b)}
                  for a in range(n) for b in range(a + 1, n)],
        "by_script": _rows_json(result, "script"),
        "by_length": _rows_json(result, "length"),
    }
    if merges is not None:
        out["new_merges"] = [
            {"id": m.id, "bytes": m.data.hex(), "text": m.data.decode("utf-8", "replace"),
             "parents": list(m.parents) if m.parents else None}
            for m in merges
        ]
    return out


def _rows_json(result: Overlap, by: Breakdown) -> list[dict]:
    return [{"label": label, "tokens": totals, "shared": shared, "only": only}
            for label, totals, shared, only in result.breakdown(by)]


def print_overlap(out: TextIO, result: Overlap, merges: list[NewMerge] | None, *, limit: int, by: str) -> None:
    names = result.names
    width = max(len(n) for n in names)
    for i, name in enumerate(names):
        out.write(f"{name:<{width}}  {len(result.sets[i]):>7,} tokens  {len(result.only[i]):>7,} only here\n")
    out.write(f"shared by all: {result.shared_count:,} of {result.union_count:,} distinct tokens\n")
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            out.write(f"{names[a]} & {names[b]}: {result.common(a, b):,} common "
                      f"({result.same_ids(a, b):,} under the same id), Jaccard {result.jaccard(a, b):.4f}\n")
    kinds: tuple[Breakdown, ...] = ("script", "length") if by == "both" else (by,)  # type: ignore[assignment]
    for kind in kinds:
        _table(out, result, kind)
    for i, name in enumerate(names):
        rows = result.only_rows(i)
        if not rows:
            continue
        out.write(f"\nonly in {name} ({len(rows):,}):\n")
        for k, (token_id, data) in enumerate(rows):
            if limit and k == limit:
                out.write(f"  … {len(rows) - limit:,} more (--limit 0 lists all)\n")
                break
            out.write(f"  {token_id:>7}  {shown_bytes(data)}\n")
    if merges:
        out.write(f"\nnew merges in {names[1]} ({len(merges):,}):\n")
        for k, m in enumerate(merges):
            if limit and k == limit:
                out.write(f"  … {len(merges) - limit:,} more (--limit 0 lists all)\n")
                break
            made = (f"{shown_bytes(m.parent_bytes[0])} + {shown_bytes(m.parent_bytes[1])}"
                    f"  ({m.parents[0]} + {m.parents[1]})" if m.parents and m.parent_bytes else "(no merge)")
            out.write(f"  {m.id:>7}  {shown_bytes(m.data)}  <- {made}\n")


def _table(out: TextIO, result: Overlap, by: Breakdown) -> None:
    rows = result.breakdown(by)
    names = result.names
    cols = [*(n for n in names), "shared", *(f"only {n}" for n in names)]
    widths = [max(len(c), 7) for c in cols]
    label_width = max(10, *(len(r[0]) for r in rows))
    out.write(f"\nby {by}:\n{'':<{label_width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cols, widths)) + "\n")
    for label, totals, shared, only in rows:
        cells = [*totals, shared, *only]
        out.write(f"{label:<{label_width}}  " + "  ".join(f"{c:>{w},}" for c, w in zip(cells, widths)) + "\n")
