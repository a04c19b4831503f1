"""The CLI's one error type and the helpers that turn errors and raw input into one line.

Commands raise `CliError` (or let `TokenizerError`, `ValueError`, `OSError` through);
`tokviz.cli.main` catches them once and prints `one_line(error)`.
"""

from __future__ import annotations


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
        raise CliError(
            f"{where} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
            f"convert it first, e.g. iconv -f LATIN1 -t UTF-8"
        ) from None
