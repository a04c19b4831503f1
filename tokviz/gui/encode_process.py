"""Tokenize in a child process and hand the result back as columns. Qt-free (runs in the child).

Why a process: the core builds a 1 MB text's ~300k `Token`s in C-level loops that hold the GIL
for 200-400 ms at a stretch, and a thread in the GUI process would freeze the window that long
(measured: 1-1.5 s stalls with four panes). In a child process those loops hold the child's GIL.
What comes back is a handful of numpy arrays and one entry per distinct (id, bytes): cheap to
pickle, and `TokenColumns` rebuilds any `Token` on demand, equal to the core's own.

Protocol on a `multiprocessing` pipe (child side in `serve`):
  -> ("encode", gen, text, policy)      <- ("done", gen, EncodedColumns) | ("failed", gen, message)
  -> ("stream", gen, ids)               <- ("stream", gen, naive, buffered)
  -> None (stop)
The child first sends ("loaded", TokenizerInfo) or ("load_failed", message).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence, overload

import numpy as np

from tokviz.core.tokenizer import SpecialPolicy, TokenizerError
from tokviz.core.tokens import Token, TokenKind, sanitize


@dataclass(frozen=True)
class TokenizerInfo:
    """What the GUI needs to know about a tokenizer that lives in another process."""

    name: str
    family: str
    vocab_size: int
    special_tokens: Mapping[str, int]
    description: str

    def describe(self) -> str:
        return self.description


@dataclass
class EncodedColumns:
    """One encode, column by column. `key_index[i]` points into `uniques` (id, bytes, kind, piece)."""

    ids: np.ndarray
    byte_starts: np.ndarray
    byte_ends: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    key_index: np.ndarray
    uniques: list[tuple[int, bytes, str, str]]
    n_bytes: int
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


def columns_from_tokens(tokens: Sequence[Token], n_bytes: int) -> EncodedColumns:
    """Columns of an encode; every pass over the tokens is C-level (transpose, dict, map)."""
    n = len(tokens)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return EncodedColumns(empty, empty, empty, empty, empty, np.zeros(0, dtype=np.int32), [], n_bytes)
    ids, datas, byte_starts, byte_ends, starts, ends, _kinds, _pieces = zip(*tokens)
    keys = list(zip(ids, datas))
    index_of = dict.fromkeys(keys, 0)
    for i, key in enumerate(index_of):
        index_of[key] = i
    where = dict(zip(keys, range(n)))  # one token per distinct key, for its kind and piece
    uniques = [(tokens[j].id, tokens[j].bytes, tokens[j].kind.value, tokens[j].piece) for j in where.values()]
    key_index = np.fromiter(map(index_of.__getitem__, keys), dtype=np.int32, count=n)

    def column(values: tuple) -> np.ndarray:
        return np.array(values, dtype=np.int64)

    return EncodedColumns(
        column(ids), column(byte_starts), column(byte_ends), column(starts), column(ends), key_index,
        uniques, n_bytes,
    )


class TokenColumns(Sequence[Token]):
    """A read-only sequence of `Token`s backed by columns: `Token`s are built when asked for."""

    def __init__(self, cols: EncodedColumns) -> None:
        self.cols = cols
        self._uniques = [(i, data, TokenKind(kind), piece) for i, data, kind, piece in cols.uniques]
        self._n = len(cols.ids)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Token: ...
    @overload
    def __getitem__(self, index: slice) -> list[Token]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("token index out of range")
        c = self.cols
        token_id, data, kind, piece = self._uniques[int(c.key_index[index])]
        return Token(
            token_id, data, int(c.byte_starts[index]), int(c.byte_ends[index]),
            int(c.starts[index]), int(c.ends[index]), kind, piece,
        )

    def __iter__(self) -> Iterator[Token]:
        return (self[i] for i in range(self._n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TokenColumns):
            other = list(other)
        return isinstance(other, list) and len(other) == self._n and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def unique_tokens(self) -> list[Token]:
        """One representative token (spans zero) per distinct (id, bytes), in `uniques` order."""
        return [Token(i, data, 0, 0, 0, 0, kind, piece) for i, data, kind, piece in self._uniques]


def info_of(tokenizer) -> TokenizerInfo:
    return TokenizerInfo(
        tokenizer.name, tokenizer.family, tokenizer.vocab_size, dict(tokenizer.special_tokens),
        tokenizer.describe(),
    )


def encode(tokenizer, text: str, policy: SpecialPolicy) -> EncodedColumns:
    import time

    t0 = time.perf_counter()
    tokens = tokenizer.encode_with(text, policy)
    cols = columns_from_tokens(tokens, len(sanitize(text).encode("utf-8")))
    cols.seconds = time.perf_counter() - t0
    return cols


def _lower_priority() -> None:
    """Let the window's own process win the CPU: four busy tokenizer processes on a two-core
    machine would otherwise starve the GUI thread for a scheduler slice at a time."""
    try:
        import os

        os.nice(10)
    except (AttributeError, OSError):  # no nice() on this platform, or not allowed
        pass


def serve(conn, spec: str) -> None:
    """The child process: load `spec`, then answer requests until told to stop."""
    import gc

    # tokens and columns hold no reference cycles; the collector's full passes over 300k live
    # tokens would double the time of an encode (measured: columns 1.4 s with it, 0.3 s without)
    gc.disable()
    _lower_priority()
    from tokviz.core.catalog import load
    from tokviz.core.decoding import buffered_stream, naive_stream

    try:
        tokenizer = load(spec)
    except TokenizerError as e:
        conn.send(("load_failed", str(e)))
        return
    except Exception as e:  # a backend bug must not hang the pane
        conn.send(("load_failed", f"cannot load {spec}: {type(e).__name__}: {e}"))
        return
    conn.send(("loaded", info_of(tokenizer)))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message[0] == "encode":
            _, gen, text, policy = message
            try:
                reply = ("done", gen, encode(tokenizer, text, policy))
            except ValueError as e:  # disallowed special token: tiktoken's message names the way out
                reply = ("failed", gen, str(e))
            except Exception as e:
                reply = ("failed", gen, f"{type(e).__name__}: {e}")
        else:
            _, gen, ids = message
            reply = ("stream", gen, list(naive_stream(tokenizer, ids)), list(buffered_stream(tokenizer, ids)))
        conn.send(reply)
        del reply
        gc.collect()  # cheap now that the request's tokens are gone; keeps the child from growing
