"""`tokviz diff`: where tokenizers cut one text differently, and whether their ids are the same.

Exit status (as diff(1)): 0 when every tokenizer gives the reference's ids, 1 when some differ,
2 for trouble (a bad option, a vocabulary that does not load, unreadable input).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from tokviz.analysis.diff import BoundaryDiff, Stretch, diff_texts
from tokviz.cli.encode import read_text, shown_token
from tokviz.cli.errors import CliError, check_policy, one_line
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import Token, display_text, sanitize

TROUBLE = 2


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "diff", help="where tokenizers cut a text differently (exit 0 identical ids, 1 differ, 2 trouble)"
    )
    p.add_argument("text", nargs="?", default="-", help="the text, or - (default) for stdin")
    p.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC", required=True,
                   help="catalog name or vocabulary file; at least two; the first is the reference")
    p.add_argument("--special", default="none", metavar="all|none|raise|TOKEN,...",
                   help="special-token text in the input, as for encode (default: plain text)")
    p.add_argument("--file", "-f", help="read the text from this file")
    p.add_argument("--json", action="store_true", help="machine-readable output (every stretch)")
    p.add_argument("--limit", type=int, default=20, metavar="N",
                   help="print at most N differing stretches per tokenizer (0: all; default 20)")
    p.add_argument("--no-whitespace", action="store_true", help="do not make whitespace visible")
    p.set_defaults(run=run, error_status=TROUBLE)
    return p


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    if len(args.tokenizers) < 2:
        raise CliError("diff needs at least two tokenizers (-t A -t B)")
    text = read_text(args)
    policy = SpecialPolicy.parse(args.special)
    tokenizers = [catalog.load(spec) for spec in args.tokenizers]
    check_policy(policy, tokenizers)
    text = sanitize(text)  # the text the tokenizers cut and the spans refer to
    for tokenizer in tokenizers:  # which vocabulary refuses the text, named as encode names it
        try:
            for _ in tokenizer.split_special(text, policy.allowed_special, policy.disallowed_special):
                pass
        except ValueError as e:
            raise CliError(f"{tokenizer.name}: {one_line(e)}") from None
    result = diff_texts(text, tokenizers, policy)
    identical = all(result.identical(0, i) for i in range(1, len(tokenizers)))
    if args.json:
        json.dump(diff_json(result, tokenizers, text, identical), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_diff(sys.stdout, result, tokenizers, text, limit=args.limit,
                   visible_whitespace=not args.no_whitespace)
    return 0 if identical else 1


def diff_json(result: BoundaryDiff, tokenizers: list[Tokenizer], text: str, identical: bool) -> dict:
    sides = []
    for i, tokenizer in enumerate(tokenizers):
        side = {
            "tokenizer": tokenizer.name, "family": tokenizer.family, "count": len(result.tokens[i]),
            "cuts": len(result.cuts[i]), "agreement": result.agreement[i],
            "identical": result.identical(0, i),
        }
        if i:
            side["stretches"] = [stretch_json(s, text) for s in result.stretches(0, i)]
        sides.append(side)
    return {"identical": identical, "reference": tokenizers[0].name, "chars": result.n_chars, "tokenizers": sides}


def stretch_json(s: Stretch, text: str) -> dict:
    def tokens(ts: list[Token]) -> list[dict]:
        return [{"id": t.id, "text": t.text, "bytes": t.bytes.hex(), "start": t.start, "end": t.end,
                 "kind": t.kind.value} for t in ts]

    return {"start": s.start, "end": s.end, "text": text[s.start:s.end],
            "reference": tokens(s.left), "other": tokens(s.right)}


def print_diff(
    out: TextIO, result: BoundaryDiff, tokenizers: list[Tokenizer], text: str, *, limit: int,
    visible_whitespace: bool,
) -> None:
    ref = tokenizers[0]
    width = max(len(t.name) for t in tokenizers)

    def line(tokenizer: Tokenizer, ts: list[Token]) -> str:
        cut = "".join(f"[{shown_token(t, visible_whitespace=visible_whitespace)}]" for t in ts)
        return f"  {tokenizer.name:<{width}}  {cut}  {' '.join(str(t.id) for t in ts)}\n"

    for i, other in enumerate(tokenizers[1:], start=1):
        n = result.count_stretches(0, i)
        out.write(f"── {ref.name} vs {other.name}: agreement {result.agreement[i]:.1f}% of boundaries, "
                  f"{n} differing stretch{'es' if n != 1 else ''}, "
                  f"{'identical ids' if result.identical(0, i) else 'ids differ'}\n")
        for k, s in enumerate(result.stretches(0, i)):
            if limit and k == limit:
                out.write(f"  … {n - limit} more (--limit 0 shows all)\n")
                break
            shown = display_text(text[s.start:s.end], visible_whitespace=visible_whitespace)
            out.write(f"chars {s.start}-{s.end} {shown}\n")
            out.write(line(ref, s.left))
            out.write(line(other, s.right))
