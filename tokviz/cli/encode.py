"""`tokviz encode`: how tokenizers cut a text, as coloured boundaries and ids or as JSON."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from tokviz.analysis.export import encoding_record
from tokviz.analysis.html import HtmlPane, comparison_html
from tokviz.cli.encode_stream import (
    _BACKGROUNDS,
    _KIND_STYLE,
    _RESET,
    InputText,
    JsonEncoding,
    TextEncoding,
    gaps_line,
    shown_token,
)
from tokviz.cli.errors import CliError, check_policy, decode_input, one_line
from tokviz.cli.outputs import check_output_folder
from tokviz.core.files import write_atomic
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import Token, TokenKind


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    enc = subparsers.add_parser("encode", help="show how tokenizers cut a text")
    enc.add_argument("text", nargs="?", default="-", help="the text, or - (default) for stdin")
    enc.add_argument("-t", "--tokenizer", action="append", dest="tokenizers", metavar="SPEC",
                     help="catalog name or vocabulary file (.tiktoken, .model, tokenizer.json); repeatable")
    enc.add_argument("--special", default="none", metavar="all|none|raise|TOKEN,...",
                     help="special-token text in the input: plain text (none, default), parsed (all), "
                          "an error (raise), or parse only these tokens")
    enc.add_argument("--file", "-f", help="read the text from this file")
    enc.add_argument("--json", action="store_true", help="machine-readable output")
    enc.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    enc.add_argument("--no-whitespace", action="store_true", help="do not make whitespace visible")
    enc.add_argument("--html", metavar="OUT", help="write the comparison as one self-contained HTML page "
                                                   "(tokens, fragments' bytes, counts) to OUT")
    enc.set_defaults(run=run)
    return enc


def read_text(args: argparse.Namespace) -> str:
    if args.file:
        with open(args.file, "rb") as f:
            return decode_input(f.read(), args.file)
    if args.text == "-":
        return decode_input(sys.stdin.buffer.read(), "stdin")
    return args.text


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog
    from tokviz.core.stream import encode_stream

    specs = args.tokenizers or ["cl100k_base"]
    if args.html:
        check_output_folder("--html", args.html)
    if args.file:
        source = InputText(path=args.file)
    elif args.text == "-":
        source = InputText(stdin=sys.stdin.buffer)
    else:
        source = InputText(text=args.text)
    out = sys.stdout
    color = args.color == "always" or args.color == "auto" and out.isatty() and "NO_COLOR" not in os.environ
    texts: list[TextEncoding] = []
    jsons: list[JsonEncoding] = []
    try:
        policy = SpecialPolicy.parse(args.special)
        tokenizers = [catalog.load(spec) for spec in specs]
        check_policy(policy, tokenizers)
        if args.html:
            write_html(args.html, "".join(source.blocks()), tokenizers, policy)
            print(f"wrote {args.html}: {len(tokenizers)} tokenizer{'s' * (len(tokenizers) != 1)}", file=sys.stderr)
            return 0
        for tokenizer in tokenizers:
            if args.json:
                jsons.append(JsonEncoding())
            else:
                texts.append(TextEncoding())
            parts = encode_stream(tokenizer, source.blocks(), allowed_special=policy.allowed_special,
                                  disallowed_special=policy.disallowed_special)
            try:
                for cols in parts:
                    if args.json:
                        jsons[-1].add(cols)
                    else:
                        texts[-1].add(cols, color=color, visible_whitespace=not args.no_whitespace)
            except ValueError as e:
                raise CliError(f"{tokenizer.name}: {one_line(e)}") from None
        if args.json:
            out.write("[")
            for n, (tokenizer, spool) in enumerate(zip(tokenizers, jsons)):
                out.write(", " if n else "")
                spool.write_to(out, tokenizer.name, tokenizer.family)
            out.write("]\n")
        for tokenizer, text_spool in zip(tokenizers, texts):
            text_spool.write_to(out, tokenizer.describe(), source.chars)
        return 0
    finally:
        for text_spool in texts:
            text_spool.close()
        for json_spool in jsons:
            json_spool.close()
        source.close()


def write_html(path: str, text: str, tokenizers: list[Tokenizer], policy: SpecialPolicy) -> None:
    """The page of analysis.html, written atomically (a failed write leaves no half page). A page
    is read by a person: the text is encoded whole, not streamed."""
    panes = []
    for tokenizer in tokenizers:
        try:
            tokens = tokenizer.encode_with(text, policy)
        except ValueError as e:
            raise CliError(f"{tokenizer.name}: {one_line(e)}") from None
        panes.append(HtmlPane(tokenizer.name, tokenizer.describe(), tokens))
    try:
        write_atomic(path, comparison_html(text, panes).encode("utf-8"))
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror or e}") from None


def encoding_json(tokenizer: Tokenizer, tokens: list[Token]) -> dict:
    return encoding_record(tokenizer.name, tokenizer.family, tokens)


def print_encoding(
    out: TextIO, tokenizer: Tokenizer, text: str, tokens: list[Token], *, color: bool, visible_whitespace: bool
) -> None:
    chars = len(text)
    ratio = f"{chars / len(tokens):.2f} chars/token" if tokens else "no tokens"
    out.write(f"── {tokenizer.describe()}: {len(tokens)} tokens, {chars} chars, {ratio}\n")
    parts = []
    for n, t in enumerate(tokens):
        shown = shown_token(t, visible_whitespace=visible_whitespace)
        if color:
            style = _KIND_STYLE.get(t.kind) or f"\x1b[48;5;{_BACKGROUNDS[n % len(_BACKGROUNDS)]};38;5;16m"
            parts.append(f"{style}{shown}{_RESET}")
        else:
            parts.append(f"[{shown}]")
        if t.bytes.endswith(b"\n") and t.kind != TokenKind.SPECIAL:
            parts.append("\n")
    out.write("".join(parts).rstrip("\n") + "\n")
    out.write("ids: " + " ".join(str(t.id) for t in tokens) + "\n")
    gaps, reached = [], 0
    for t in tokens:
        if t.start > reached:
            gaps.append((reached, t.start))
        reached = max(reached, t.end)
    out.write(gaps_line(gaps + ([(reached, chars)] if reached < chars else [])))
