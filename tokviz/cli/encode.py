"""`tokviz encode`: how tokenizers cut a text, as coloured boundaries and ids or as JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from tokviz.analysis.export import encoding_record
from tokviz.cli.errors import CliError, check_policy, decode_input, one_line
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import Token, TokenKind, display_text, hex_bytes

# Backgrounds from the 256-colour cube: light, distinct neighbours; fragments and specials apart.
_BACKGROUNDS = (153, 187, 224, 194, 230, 189, 223, 157, 217, 195, 229, 183)
_KIND_STYLE = {
    TokenKind.SPECIAL: "\x1b[48;5;97;38;5;231;1m",
    TokenKind.FRAGMENT: "\x1b[48;5;209;38;5;16;4m",
    TokenKind.BYTE_FALLBACK: "\x1b[48;5;215;38;5;16;4m",
    TokenKind.UNKNOWN: "\x1b[48;5;196;38;5;231m",
}
_RESET = "\x1b[0m"


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

    specs = args.tokenizers or ["cl100k_base"]
    text = read_text(args)
    policy = SpecialPolicy.parse(args.special)
    tokenizers = [catalog.load(spec) for spec in specs]
    check_policy(policy, tokenizers)
    results = []
    for tokenizer in tokenizers:
        try:
            tokens = tokenizer.encode_with(text, policy)
        except ValueError as e:
            raise CliError(f"{tokenizer.name}: {one_line(e)}") from None
        results.append((tokenizer, tokens))
    out = sys.stdout
    if args.json:
        json.dump([encoding_json(tok, tokens) for tok, tokens in results], out, ensure_ascii=False)
        out.write("\n")
        return 0
    color = args.color == "always" or args.color == "auto" and out.isatty() and "NO_COLOR" not in os.environ
    for tokenizer, tokens in results:
        print_encoding(out, tokenizer, text, tokens, color=color, visible_whitespace=not args.no_whitespace)
    return 0


def encoding_json(tokenizer: Tokenizer, tokens: list[Token]) -> dict:
    return encoding_record(tokenizer.name, tokenizer.family, tokens)


def shown_token(t: Token, *, visible_whitespace: bool = True) -> str:
    """A token as the terminal shows it: its text (whitespace visible), a fragment's bytes in hex
    after it, a special token by its name."""
    if t.kind == TokenKind.SPECIAL:
        return t.piece
    shown = display_text(t.bytes, visible_whitespace=visible_whitespace)
    if t.kind in (TokenKind.FRAGMENT, TokenKind.BYTE_FALLBACK):
        shown = f"{shown}⟨{hex_bytes(t.bytes)}⟩"
    return shown


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
