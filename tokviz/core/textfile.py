"""Read a text file exactly as it is on disk: bytes decoded as UTF-8, no newline translation.

A person opens a file to see how a tokenizer cuts *that file*, so CRLF stays CRLF, a leading BOM
stays a character, and a file that is not UTF-8 text is refused with where and what the first bad
byte is, never shown with replacement characters the tokenizer would then count. Qt-free.
"""

from __future__ import annotations

import os
from pathlib import Path

BINARY_PROBE = 8192  # a NUL in the first bytes says binary (what git and grep look at)


class NotTextError(ValueError):
    """A file that is not UTF-8 text; the message says which byte, where, and what it looks like."""


def read_text_exact(path: str | os.PathLike[str]) -> str:
    """Read `path` as UTF-8 text exactly (no newline translation, the BOM kept).

    Raises OSError when it cannot be read and NotTextError when it is binary or not UTF-8.
    """
    data = Path(path).read_bytes()
    return decode_exact(data, str(path))


def wide_text(head: bytes) -> str | None:
    """Why a file starting with `head` (its first 4 bytes are enough) is text but not UTF-8: a
    UTF-16 or UTF-32 byte-order mark, as Windows Notepad's "Unicode" and PowerShell's `>` write.
    None otherwise. (Such text is full of NUL bytes: without this it reads as binary.)

    >>> print(wide_text("hi".encode("utf-16-le")), wide_text(b"\\xff\\xfeh\\x00"))  # doctest: +NORMALIZE_WHITESPACE
    None UTF-16 text, not UTF-8 (it starts with a UTF-16 byte-order mark): save it as UTF-8 first
    (e.g. iconv -f UTF-16 -t UTF-8)
    """
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        encoding = "UTF-32"
    elif head.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "UTF-16"
    else:
        return None
    return (f"{encoding} text, not UTF-8 (it starts with a {encoding} byte-order mark): "
            f"save it as UTF-8 first (e.g. iconv -f {encoding} -t UTF-8)")


def file_wide_text(path: str | os.PathLike[str]) -> str | None:
    """`wide_text` of a file's first bytes (None when it cannot be read): for a reader that sees
    only a piece of the file, or that found out late."""
    try:
        with open(path, "rb") as f:
            return wide_text(f.read(4))
    except OSError:
        return None


def decode_exact(data: bytes, where: str) -> str:
    """Decode `data` as UTF-8 or say, in one line, why it is not text.

    >>> decode_exact("ok\\r\\n".encode(), "a.txt")
    'ok\\r\\n'
    >>> def why(data):
    ...     try:
    ...         decode_exact(data, "f.txt")
    ...     except NotTextError as e:
    ...         print(e)
    >>> why(b"caf\\xe9 au lait")  # doctest: +NORMALIZE_WHITESPACE
    f.txt is not UTF-8 text: byte 0xe9 at offset 3 (line 1, column 4), in b'caf\\xe9 au lait';
    it looks like Latin-1 or Windows-1252 text: save it as UTF-8 first (e.g. iconv -f CP1252 -t UTF-8)
    >>> why(b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00")
    f.txt looks binary, not text: a NUL byte at offset 8 (it starts b'\\x89PNG\\r\\n\\x1a\\n\\x00\\x00')
    """
    if (wide := wide_text(data[:4])) is not None:
        raise NotTextError(f"{where} is {wide}")
    nul = data.find(b"\x00", 0, BINARY_PROBE)
    if nul >= 0:
        raise NotTextError(f"{where} looks binary, not text: a NUL byte at offset {nul} (it starts {data[:16]!r})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotTextError(_not_utf8(data, e.start, where)) from None


def _not_utf8(data: bytes, offset: int, where: str) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    context = data[max(offset - 12, 0):offset + 12]
    head = (f"{where} is not UTF-8 text: byte 0x{data[offset]:02x} at offset {offset} "
            f"(line {line}, column {column}), in {context!r}")
    return f"{head}; it looks like Latin-1 or Windows-1252 text: save it as UTF-8 first (e.g. iconv -f CP1252 -t UTF-8)"
