"""Building many tokens fast: what every backend shares once it has ids and spans.

Tokens are built from parallel lists with `map` and `tuple.__new__` (no Python loop per token),
per-id fields come from dicts filled once per id, and the cyclic GC is paused meanwhile.
This module does not decide spans: backends do, then hand them here.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tokviz.core.tokens import OffsetMap, Token, TokenKind


class TokenInfo:
    """Per-id bytes, kind and piece in three dicts, so a whole text's fields are gathered with
    `map(dict.__getitem__, ids)` in C rather than a Python loop."""

    def __init__(self) -> None:
        self.data: dict[int, bytes] = {}
        self.kind: dict[int, TokenKind] = {}
        self.piece: dict[int, str] = {}

    def add(self, token_id: int, data: bytes, kind: TokenKind, piece: str) -> None:
        self.data[token_id] = data
        self.kind[token_id] = kind
        self.piece[token_id] = piece


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many tuples: they hold no cycles, and
    the collections their allocation triggers would scan the growing list again and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_tokens(
    ids: Sequence[int],
    byte_starts: Sequence[int],
    byte_ends: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    info: TokenInfo,
    datas: Sequence[bytes] | None = None,
) -> list[Token]:
    """Tokens from parallel lists. `datas` overrides the per-id bytes (an unknown token stands
    for the original text it replaced)."""
    data = map(info.data.__getitem__, ids) if datas is None else datas
    fields = zip(ids, data, byte_starts, byte_ends, starts, ends, map(info.kind.__getitem__, ids),
                 map(info.piece.__getitem__, ids))
    with gc_paused():
        return list(map(tuple.__new__, itertools.repeat(Token), fields))


@dataclass
class Laid:
    """One segment's tokens as arrays, before any Token object exists (spans on the whole text);
    `datas` overrides the per-id bytes, as in `build_tokens`."""

    ids: list[int]
    byte_starts: np.ndarray
    byte_ends: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    datas: list[bytes] | None = None

    def to_tokens(self, info: TokenInfo) -> list[Token]:
        """The segment's tokens, their per-id fields from `info`."""
        return build_tokens(
            self.ids, self.byte_starts.tolist(), self.byte_ends.tolist(), self.starts.tolist(),
            self.ends.tolist(), info, self.datas,
        )

    @classmethod
    def of_tokens(cls, tokens: Sequence[Token]) -> Laid:
        """The arrays of tokens that already exist."""
        n = len(tokens)

        def column(field: int) -> np.ndarray:
            return np.fromiter((t[field] for t in tokens), dtype=np.int64, count=n)

        return cls([t.id for t in tokens], column(2), column(3), column(4), column(5), [t.bytes for t in tokens])


def tokens_from_bytes(omap: OffsetMap, ids: Sequence[int], info: TokenInfo, *, byte_base: int = 0) -> list[Token]:
    """Lay tokens whose bytes concatenate to exactly the text's UTF-8 bytes over it.

    Byte-level BPE (tiktoken, trained vocabularies) satisfies that, so spans follow from running
    byte offsets; `byte_base` places a segment that starts later in the text. A mismatch is a bug
    in the caller, reported as ValueError.
    """
    lengths = np.fromiter(map(len, map(info.data.__getitem__, ids)), dtype=np.int64, count=len(ids))
    ends = np.cumsum(lengths) + byte_base
    starts = ends - lengths
    total = int(ends[-1]) if len(ends) else byte_base
    if total > len(omap.data):
        raise ValueError("token bytes do not add up to the text's UTF-8 bytes")
    cstarts, cends = omap.char_spans(starts, ends)
    return build_tokens(ids, starts.tolist(), ends.tolist(), cstarts, cends, info)


def fill_gaps(starts: np.ndarray, ends: np.ndarray, length: int) -> None:
    """Make spans ordered and covering: a dropped run goes to the following token, a trailing one
    to the last token."""
    np.maximum.accumulate(starts, out=starts)
    np.maximum(ends, starts, out=ends)
    np.maximum.accumulate(ends, out=ends)
    np.minimum(starts, np.concatenate(([0], ends[:-1])), out=starts)
    ends[-1] = length
