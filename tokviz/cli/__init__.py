"""The `tokviz` command line: encode, diff, overlap, vocabs, train, stats, extend, chat, gui.

One module per command (`encode`, `diff`, `overlap`, `vocabs`, `train`, `stats`, `extend`, `chat`), each with
`add_parser(subparsers)`, which sets the parser's `run(args) -> int`. A command named first in argv
imports its own module alone (`tokviz train` does not pay for the analysis layer's or jinja2's
imports); `tokviz --help` and anything else import them all. Errors are caught once, here in
`main`: one clear line on stderr, a non-zero exit, never a traceback. The app itself is opened by
`tokviz.__main__` (no command, `gui`, or an option of the app's): this package does not import the
GUI; `gui` is listed here so that `tokviz --help` names it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import select
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from tokviz import __version__
from tokviz.cli.errors import CliError, check_argument, one_line
from tokviz.core.backends.panics import is_panic
from tokviz.core.catalog_check import CatalogWarning
from tokviz.core.stream import StreamWarning
from tokviz.core.tokenizer import TokenizerError

__all__ = ["COMMANDS", "CliError", "build_parser", "main"]

COMMANDS = ("encode", "diff", "overlap", "vocabs", "train", "stats", "extend", "chat", "dataset")  # in --help's order


def _merge_loop() -> str:
    """Which merge loop `tokviz train` runs, for bug reports: "compiled", or "Python" when tokviz was
    installed without a C compiler (found, not imported: the trainer's imports are not paid here)."""
    return "compiled" if importlib.util.find_spec("tokviz.training._merge") is not None else "Python"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command, or only the command `only` (its module alone is imported)."""
    parser = argparse.ArgumentParser(
        prog="tokviz", description="See how real tokenizers cut text. With no command: the app."
    )
    parser.add_argument("--version", action="version", version=f"tokviz {__version__} ({_merge_loop()} merge loop)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"tokviz.cli.{name}")
        except ImportError:
            if name != "train":
                raise
            continue  # the trainer is optional for the rest of the CLI
        module.add_parser(sub)
    if only is None:
        sub.add_parser("gui", help="open the compare window (the default; `tokviz gui --help` lists its options)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        parser.print_help()
        return 2
    return run_command(args)


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command: the one place where errors become one stderr line and an exit status.

    A command may set `prog` (the prefix of its messages, default `tokviz`), `interrupted`
    (what to say on Ctrl-C) and `error_status` (default 1; `diff` uses 2, its 1 meaning "differ")
    with `set_defaults`.
    """
    prog = getattr(args, "prog", "tokviz")
    with warnings.catch_warnings():
        for category in (CatalogWarning, StreamWarning):  # once per message, as one line
            warnings.simplefilter("default", category)
        warnings.showwarning = _show_warning
        return _run(args, prog)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"tokviz: warning: {one_line(message) if isinstance(message, Exception) else message}", file=sys.stderr)


def _run(args: argparse.Namespace, prog: str) -> int:
    try:
        if isinstance(getattr(args, "text", None), str):  # the text to encode or diff, as given in argv
            check_argument(args.text)
        status = int(args.run(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError as e:
        if not _reader_gone(sys.stdout):  # a pipe to a process of our own: an error like any other
            print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
            return int(getattr(args, "error_status", 1))
        # the reader went away (`tokviz encode ... | head`): stop quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool that pipe killed
    except (CliError, TokenizerError, ValueError, OSError) as e:
        print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
        return int(getattr(args, "error_status", 1))
    except KeyboardInterrupt:
        print(f"{prog}: {getattr(args, 'interrupted', 'interrupted')}", file=sys.stderr)
        return 130
    except BaseException as e:  # a Rust panic (pyo3's PanicException) no backend caught
        if not is_panic(e):
            raise
        print(f"{prog}: error: the tokenizer library failed: {one_line(e)}", file=sys.stderr)
        return int(getattr(args, "error_status", 1))


def _reader_gone(stream: TextIO) -> bool:
    """Whether `stream` is a pipe whose reader has closed it (poll reports an error on its end).
    Where that cannot be told (no file descriptor, no `poll`), assume it is."""
    try:
        fd = stream.fileno()
        poller = select.poll()
    except (OSError, ValueError, AttributeError):
        return True
    poller.register(fd, 0)  # errors and hang-ups are reported whatever the mask
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
