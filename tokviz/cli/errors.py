"""The CLI's one error type and the helpers that turn errors and raw input into one line.

Commands raise `CliError` (or let `TokenizerError`, `ValueError`, `OSError` through);
`tokviz.cli.main` catches them once and prints `one_line(error)`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tokviz.core.textfile import wide_text

if TYPE_CHECKING:
    from tokviz.core.tokenizer import SpecialPolicy, Tokenizer


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def one_line(e: BaseException) -> str:
    """The error as one line: an OSError names its file, a multi-line message is joined.

    >>> one_line(ValueError("bad\\ninput"))
    'bad input'
    >>> one_line(FileNotFoundError(2, "No such file or directory", "x.txt"))
    'x.txt: No such file or directory'
    """
    if isinstance(e, OSError) and e.filename:
        return f"{e.filename}: {e.strerror or e}"
    text = str(e).strip()
    return " ".join(text.split("\n")) if text else type(e).__name__


def decode_input(data: bytes, where: str) -> str:
    """Decode UTF-8 input, or raise a CliError saying where the first bad byte is and what to do."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise not_utf8(where, data, e.start) from None


def not_utf8(where: str, data: bytes, index: int, offset: int = 0) -> CliError:
    """The error for the bad byte `data[index]`, where `data` starts at `offset` in the input
    (a block of it): a UTF-16/32 input says so, anything else gets the Latin-1 advice."""
    head = f"{where} is not UTF-8 text (byte 0x{data[index]:02x} at offset {offset + index})"
    if offset == 0 and (wide := wide_text(data[:4])) is not None:
        return CliError(f"{head}: it is {wide}")
    return CliError(f"{head}; convert it first, e.g. iconv -f LATIN1 -t UTF-8")


def check_argument(text: str, where: str = "the text argument") -> str:
    r"""Refuse a command-line argument that was not UTF-8, as `decode_input` refuses stdin.

    Python hands undecodable argv bytes over as lone surrogates (surrogateescape); encoding would
    silently turn them into U+FFFD, so they are refused here with the byte and its offset.

    >>> check_argument("café")
    'café'
    >>> check_argument("caf\udce9")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tokviz.cli.errors.CliError: the text argument is not UTF-8 text (byte 0xe9 at offset 3); ...
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return decode_input(text.encode("utf-8", "surrogateescape"), where)
    return text


def check_policy(policy: SpecialPolicy, tokenizers: Sequence[Tokenizer]) -> None:
    """Refuse a `--special` set naming a token no given vocabulary has; warn (one stderr line each)
    about the vocabularies that lack one the others have, since there it stays plain text."""
    missing = {t.name: policy.unknown_to(t.special_tokens) for t in tokenizers}
    nowhere = set.intersection(*(set(m) for m in missing.values())) if missing else set()
    if nowhere:
        names = ", ".join(repr(n) for n in sorted(nowhere))
        known = ", ".join(t.name for t in tokenizers)
        raise CliError(f"--special names {names}, not a special token of {known}; "
                       f"`tokviz vocabs` lists the vocabularies, --special all parses every special token")
    for name, tokens in missing.items():
        if tokens:
            listed = ", ".join(repr(n) for n in tokens)
            print(f"tokviz: warning: {listed} is not a special token of {name}: plain text there", file=sys.stderr)
