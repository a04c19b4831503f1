"""Pieces of corpus files, and chunk counts in a form cheap to send between processes.

Shared by the in-process count (`corpus`) and the worker processes (`pool`); it knows neither.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from tokviz.core.textfile import file_wide_text
from tokviz.core.walk import Skipped
from tokviz.training.pretokenize import ChunkCounter

NonUtf8 = Literal["skip", "replace"]


class SkipFile(Exception):
    """This file cannot be used; the message is the reason reported."""


Piece = tuple[str, int, int]  # (path, start byte, end byte or -1 for the end of the file)
T = TypeVar("T")


def piece_size(piece: Piece, sizes: Mapping[str, int]) -> int:
    """The bytes of `piece`; `sizes` gives a file's size, for a piece that runs to its end."""
    path, start, end = piece
    return (end if end >= 0 else sizes.get(path, 0)) - start


def batched(items: Iterable[T], size_of: Callable[[T], int], limit: int) -> list[list[T]]:
    """`items` in order, in batches closed once they reach `limit` (by `size_of`).

    >>> batched([3, 1, 1, 5, 2], lambda n: n, 4)
    [[3, 1], [1, 5], [2]]
    """
    out: list[list[T]] = []
    batch: list[T] = []
    size = 0
    for item in items:
        batch.append(item)
        size += size_of(item)
        if size >= limit:
            out.append(batch)
            batch, size = [], 0
    if batch:
        out.append(batch)
    return out


def read_piece(piece: Piece, *, non_utf8: NonUtf8) -> tuple[str, int, bool]:
    """Return `(text, n_bytes, replaced)` for one piece of a file; raise SkipFile with the reason."""
    text, data, replaced = _read(piece, non_utf8)
    return text, len(data), replaced


def _read(piece: Piece, non_utf8: NonUtf8) -> tuple[str, bytes, bool]:
    """`read_piece`, with the piece's bytes themselves rather than their count."""
    path, start, end = piece
    try:
        with open(path, "rb") as f:
            if start:
                f.seek(start)
            data = f.read() if end < 0 else f.read(end - start)
    except OSError as e:
        raise SkipFile(f"unreadable: {e.strerror or e}") from e
    if b"\0" in data:
        raise SkipFile(file_wide_text(path) or "binary (NUL bytes)")  # a piece may start mid-file
    try:
        return data.decode("utf-8"), data, False
    except UnicodeDecodeError as e:
        if non_utf8 == "skip":
            raise SkipFile(f"not UTF-8 (byte {start + e.start}: {e.reason})") from e
        return data.decode("utf-8", errors="replace"), data, True


@dataclass
class PieceLog:
    """What counting some pieces found, per piece: read `(path, bytes, replaced)` or skipped."""

    read: list[tuple[str, int, bool]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def count_pieces(
    pieces: Sequence[Piece],
    counter: ChunkCounter,
    non_utf8: NonUtf8,
    on_bytes: Callable[[int], None] | None = None,
) -> PieceLog:
    """Add the chunks of each readable piece to `counter`; `on_bytes(n)` may raise to cancel."""
    log = PieceLog()
    for piece in pieces:
        try:
            text, data, replaced = _read(piece, non_utf8)
        except SkipFile as e:
            log.skipped.append(Skipped(piece[0], str(e)))
            continue
        size = len(data)
        counter.add(text, None if replaced else data)  # a replaced text's UTF-8 is not `data`
        del text, data
        log.read.append((piece[0], size, replaced))
        if on_bytes is not None:
            on_bytes(size)
    return log


def compact(counts: Mapping[str, int]) -> tuple[bytes, bytes]:
    """Chunk counts as two flat buffers: the chunks' UTF-8 joined by NUL, and int64 counts.

    A file with a NUL byte is never counted, so NUL cannot occur in a chunk. Cheap to pickle
    across a pipe (a dict of a million strings is not), and `expand` turns it into `chunk_key`s
    with one decode instead of one per chunk.
    """
    return "\0".join(counts).encode("utf-8"), array("q", counts.values()).tobytes()


def expand(keys: bytes, values: bytes, *, as_text: bool = False) -> dict[str, int]:
    """`compact`'s buffers back to `chunk_key -> count` (one character per byte), or with
    `as_text` to the strings themselves."""
    if not keys and not values:
        return {}
    counts = array("q")
    counts.frombytes(values)
    return dict(zip(keys.decode("utf-8" if as_text else "latin-1").split("\0"), counts))


def add_counts(into: dict[str, int], other: Mapping[str, int], sign: int = 1) -> None:
    """`into[k] += sign * other[k]` for every k, in C (map and zip, no Python-level loop)."""
    common = list(into.keys() & other.keys())
    if sign == 1:
        fresh = other.keys() - into.keys()
        into.update(zip(common, map(operator.add, map(into.__getitem__, common), map(other.__getitem__, common))))
        into.update(zip(fresh, map(other.__getitem__, fresh)))
        return
    into.update(zip(common, map(operator.sub, map(into.__getitem__, common), map(other.__getitem__, common))))
    for key in [k for k in common if not into[k]]:
        del into[key]
