"""A text's tokens as columns: what crosses a process boundary and what a 1 MB view keeps.

`Tokenizer.encode_columns` gives the same facts as `encode` without building one `Token` per
token: numpy arrays for ids and spans, and one entry per distinct (id, bytes) for the rest.
`TokenColumns` reads as a sequence of `Token`s, built only when asked for, equal to `encode`'s.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Any, cast, overload

import numpy as np

from tokviz.core.layout import Laid, TokenInfo, gc_paused
from tokviz.core.tokens import Token, TokenKind


@dataclass
class EncodedColumns:
    """One encode, column by column. `key_index[i]` points into `uniques` (id, bytes, kind, piece).

    The id column follows from the key column (token i's id is `uniques[key_index[i]][0]`), so
    it may be left out (`_ids` None, as `without_ids` does: 4 bytes a token less to send and to
    keep); `ids` then makes it when read."""

    _ids: np.ndarray | None
    byte_starts: np.ndarray  # or a `RunningColumn`, indexed as an array is (`share_bounds`)
    byte_ends: np.ndarray
    starts: np.ndarray
    ends: np.ndarray | PatchedEnds  # indexed as an array is (`share_bounds`)
    key_index: np.ndarray
    uniques: list[tuple[int, bytes, str, str]]
    n_bytes: int
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.key_index)

    @property
    def ids(self) -> np.ndarray:
        """Every token's id (made from the key column when left out; int32 where ids fit)."""
        if self._ids is not None:
            return self._ids
        key_ids = np.fromiter((u[0] for u in self.uniques), dtype=np.int64, count=len(self.uniques))
        if len(key_ids) and int(key_ids.max()) < np.iinfo(np.int32).max:
            key_ids = key_ids.astype(np.int32)
        ids: np.ndarray = key_ids[self.key_index]
        return ids

    def without_ids(self) -> EncodedColumns:
        """These columns without their id column (`ids` makes it when read)."""
        return replace(self, _ids=None)


def columns_from_tokens(tokens: Sequence[Token], n_bytes: int) -> EncodedColumns:
    """Columns of an encode; every pass over the tokens is C-level (transpose, dict, map)."""
    n = len(tokens)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return EncodedColumns(empty, empty, empty, empty, empty, np.zeros(0, dtype=np.int32), [], n_bytes)
    with gc_paused():  # the transposed tuples hold no cycles; collections would only rescan them
        ids, datas, byte_starts, byte_ends, starts, ends, _kinds, _pieces = zip(*tokens)
        keys = list(zip(ids, datas))
        index_of = dict.fromkeys(keys, 0)
        for i, key in enumerate(index_of):
            index_of[key] = i
        where = dict(zip(keys, range(n)))  # one token per distinct key, for its kind and piece
        uniques = [(tokens[j].id, tokens[j].bytes, tokens[j].kind.value, tokens[j].piece) for j in where.values()]
        key_index = np.fromiter(map(index_of.__getitem__, keys), dtype=np.int32, count=n)

    def column(values: tuple[int, ...]) -> np.ndarray:
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
        self._n = len(cols.key_index)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> Token: ...
    @overload
    def __getitem__(self, index: slice) -> list[Token]: ...

    def __getitem__(self, index: int | slice) -> Token | list[Token]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._n)
            if step == 1:
                return self._built(start, stop)
            return [self[i] for i in range(start, stop, step)]
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
        for start in range(0, self._n, 1 << 12):
            yield from self._built(start, min(start + (1 << 12), self._n))

    def _built(self, start: int, stop: int) -> list[Token]:
        """Tokens `start` to `stop`, each column read once as a list (not one numpy read per
        value of each token)."""
        if stop <= start:
            return []
        c, uniques = self.cols, self._uniques
        byte_starts, byte_ends = c.byte_starts, c.byte_ends
        if isinstance(byte_ends, RunningColumn) and isinstance(byte_starts, RunningColumn):
            bounds = byte_ends.bounds.values(start, stop + 1)  # both columns in one read
            starts_of, ends_of = bounds[:-1], bounds[1:]
        else:
            starts_of, ends_of = byte_starts[start:stop].tolist(), byte_ends[start:stop].tolist()
        return [
            Token(uniques[k][0], uniques[k][1], bs, be, s, e, uniques[k][2], uniques[k][3])
            for k, bs, be, s, e in zip(
                c.key_index[start:stop].tolist(), starts_of, ends_of, c.starts[start:stop].tolist(),
                c.ends[start:stop].tolist(),
            )
        ]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TokenColumns):
            other = list(other)
        return isinstance(other, list) and len(other) == self._n and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def unique_tokens(self) -> list[Token]:
        """One representative token (spans zero) per distinct (id, bytes), in `uniques` order."""
        return [Token(i, data, 0, 0, 0, 0, kind, piece) for i, data, kind, piece in self._uniques]


def token_ids(tokens: Sequence[Token]) -> np.ndarray:
    """The id of every token of `tokens` as an array (from the key column for `TokenColumns`)."""
    if isinstance(tokens, TokenColumns):
        return tokens.cols.ids
    return np.fromiter((t.id for t in tokens), dtype=np.int64, count=len(tokens))


def distinct_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(ids, return_inverse=True)` for token ids (small non-negative integers), in
    linear time: a table as long as the largest id marks the ids present. For 300k tokens that
    is ~3 ms against `np.unique`'s sort, 30-70 ms. The inverse is int32.

    >>> distinct, inverse = distinct_ids(np.array([7, 3, 7, 0]))
    >>> distinct.tolist(), inverse.tolist()
    ([0, 3, 7], [2, 1, 2, 0])
    """
    if not len(ids):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    present = np.zeros(int(ids.max()) + 1, dtype=bool)
    present[ids] = True
    rank = np.cumsum(present, dtype=np.int32)
    rank -= 1
    return np.flatnonzero(present), rank[ids]


def columns_from_laid(parts: Sequence[Laid], info_for: Callable[[list[int]], TokenInfo],
                      n_bytes: int) -> EncodedColumns:
    """Columns from the arrays backends lay out: tokens are told apart by (id, bytes) only where a
    token's bytes are not its id's (unknown tokens); otherwise the id alone is the key.
    `info_for(ids)` gives the bytes, kind and piece of the distinct ids.

    Every pass over the tokens is in numpy (`distinct_ids` finds the keys); Python code runs once
    per distinct id, and once per token only in a part that carries its own bytes (`Laid.datas`).
    A per-token dict of (id, bytes) keys was 0.4 s of a 1 MB SentencePiece encode."""
    if not parts:
        return columns_from_tokens([], n_bytes)
    ids = np.concatenate([np.asarray(p.ids, dtype=np.int64) for p in parts])
    distinct, key_index = distinct_ids(ids)
    ids_present = distinct.tolist()
    info = info_for(ids_present)
    uniques = [(i, info.data[i], info.kind[i].value, info.piece[i]) for i in ids_present]
    offset = 0
    own: dict[tuple[int, bytes], int] = {}  # (id, bytes) of tokens whose bytes are not their id's
    for part in parts:
        if part.datas is not None:
            data_of = info.data.__getitem__
            for k, (i, d) in enumerate(zip(part.ids, part.datas)):
                if d != data_of(i):
                    key = (i, d)
                    if key not in own:
                        own[key] = len(uniques)
                        uniques.append((i, d, info.kind[i].value, info.piece[i]))
                    key_index[offset + k] = own[key]
        offset += len(part.ids)
    return EncodedColumns(
        ids, np.concatenate([p.byte_starts for p in parts]), np.concatenate([p.byte_ends for p in parts]),
        np.concatenate([p.starts for p in parts]), np.concatenate([p.ends for p in parts]), key_index,
        uniques, n_bytes,
    )


def span_columns(tokens: Sequence[Token]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`(byte_starts, byte_ends, starts)` as arrays, free for `TokenColumns` (made where a
    column is kept otherwise, as `share_bounds` keeps them), one pass otherwise."""
    if isinstance(tokens, TokenColumns):
        c = tokens.cols
        return np.asarray(c.byte_starts), np.asarray(c.byte_ends), np.asarray(c.starts)
    n = len(tokens)
    return (
        np.fromiter((t.byte_start for t in tokens), dtype=np.int64, count=n),
        np.fromiter((t.byte_end for t in tokens), dtype=np.int64, count=n),
        np.fromiter((t.start for t in tokens), dtype=np.int64, count=n),
    )


def with_tokens_around(cols: EncodedColumns, before: Sequence[Token], after: Sequence[Token]) -> EncodedColumns:
    """`cols` with `before` put in front and `after` behind (the BOS/EOS a model adds, from
    `Tokenizer.added_tokens`); the text's own columns are reused, not rebuilt."""
    if not before and not after:
        return cols
    index_of = {(u[0], u[1]): i for i, u in enumerate(cols.uniques)}
    uniques = list(cols.uniques)

    def key(token: Token) -> int:
        k = (token.id, token.bytes)
        if k not in index_of:
            index_of[k] = len(uniques)
            uniques.append((token.id, token.bytes, token.kind.value, token.piece))
        return index_of[k]

    def joined(column: np.ndarray, pick: Callable[[Token], int], dtype: Any = np.int64) -> np.ndarray:
        return np.concatenate([np.array([pick(t) for t in before], dtype=dtype), column,
                               np.array([pick(t) for t in after], dtype=dtype)])

    return EncodedColumns(
        joined(cols.ids, lambda t: t.id), joined(cols.byte_starts, lambda t: t.byte_start),
        joined(cols.byte_ends, lambda t: t.byte_end), joined(cols.starts, lambda t: t.start),
        joined(np.asarray(cols.ends), lambda t: t.end), joined(cols.key_index, key, np.int32),
        uniques, cols.n_bytes, cols.seconds, dict(cols.extra),
    )


class ArrayReads:
    """What a column kept in another form reads as an array does from its whole (`_whole`):
    `np.asarray`, iteration and `tolist`."""

    ndim = 1

    def _whole(self) -> np.ndarray:
        raise NotImplementedError

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = self._whole()
        return whole if dtype is None else whole.astype(dtype)

    def __iter__(self) -> Iterator[int]:
        return iter(self.tolist())

    def tolist(self) -> list[int]:
        values: list[int] = self._whole().tolist()
        return values


class SortedReads(ArrayReads):
    """A non-decreasing column kept in another form (span bounds): besides `ArrayReads`, it
    compares and adds as the array does, and `np.searchsorted` (which calls `searchsorted`) is
    a binary search over it that reads ~20 values, not the whole column."""

    # arithmetic and comparisons as the array's (an object's own == would compare identity)
    def __add__(self, other: Any) -> np.ndarray:
        total: np.ndarray = self._whole() + other
        return total

    def __sub__(self, other: Any) -> np.ndarray:
        difference: np.ndarray = self._whole() - other
        return difference

    def __eq__(self, other: object) -> Any:
        return self._whole() == other

    def __ne__(self, other: object) -> Any:
        return self._whole() != other

    def __lt__(self, other: Any) -> Any:
        return self._whole() < other

    def __le__(self, other: Any) -> Any:
        return self._whole() <= other

    def __gt__(self, other: Any) -> Any:
        return self._whole() > other

    def __ge__(self, other: Any) -> Any:
        return self._whole() >= other

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        if sorter is not None or np.ndim(v):
            return np.searchsorted(np.asarray(self), v, side=side, sorter=sorter)  # type: ignore[call-overload]
        lo, hi = 0, len(self)
        while lo < hi:  # the first i with value i >= v (left) or > v (right)
            mid = (lo + hi) // 2
            value = self[mid]
            if value < v or (side == "right" and value == v):
                lo = mid + 1
            else:
                hi = mid
        return np.intp(lo)


class PatchedColumn(ArrayReads):
    """A column kept as another one patched at a few places: value i is `base[i]`, except at
    the sorted indices `at`, where it is `value`. Read as a numpy array is: an index gives a
    value, a slice or an index array an array, `np.asarray` the whole column. What a pane keeps
    where most of a column is one it has already (a cell index that is the key column but for
    the joined cells of fragment runs; span ends that are the next span's start but for a few).

    >>> column = PatchedColumn(np.array([4, 5, 6, 7, 8], dtype=np.uint16), np.array([1, 3]), np.array([70000, 9]))
    >>> len(column), column[1], column[2], column[-2], column[0:5].tolist(), column[::2].tolist(), column[4:1].tolist()
    (5, 70000, 6, 9, [4, 70000, 6, 9, 8], [4, 6, 8], [])
    >>> column[np.array([3, -4])].tolist(), column.dtype
    ([9, 70000], dtype('int64'))
    """

    def __init__(self, base: np.ndarray, at: np.ndarray, value: np.ndarray) -> None:
        self.base = base
        self.at = np.ascontiguousarray(at, dtype=np.int32 if len(base) < np.iinfo(np.int32).max else np.int64)
        same = np.asarray(value).astype(base.dtype)
        self.value = np.ascontiguousarray(same if np.array_equal(same, value) else value)
        self.dtype = np.result_type(base.dtype, self.value.dtype)
        # one value at a time through memoryviews of the same memory: `bisect` and an index on
        # them take ~1 us, where numpy's scalar `searchsorted` (which copies `at` to int64 for a
        # Python int) and indexing took ~30 (a token read one by one, 100x slower)
        self._at, self._value = self.at.data, self.value.data
        # (a `RunningColumn` base reads one value itself: it keeps no array of them)
        self._base = np.ascontiguousarray(base).data if isinstance(base, np.ndarray) else base

    def __len__(self) -> int:
        return len(self.base)

    @property
    def shape(self) -> tuple[int]:
        return (len(self.base),)

    def __getitem__(self, index: Any) -> Any:
        n = len(self.base)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                return self[np.arange(start, stop, step, dtype=np.int64)]
            out = self.base[start:stop].astype(self.dtype)  # a copy, which is patched
            lo, hi = bisect_left(self._at, start), bisect_left(self._at, max(start, stop))
            out[self.at[lo:hi] - start] = self.value[lo:hi]
            return out
        if isinstance(index, (np.ndarray, list)):
            indices = np.asarray(index, dtype=np.int64)
            indices = np.where(indices < 0, indices + n, indices)
            out = self.base[indices].astype(self.dtype)  # a copy (IndexError out of range), patched
            if len(self.at) and len(indices):
                near = np.minimum(self.at.searchsorted(indices.astype(self.at.dtype)), len(self.at) - 1)
                hit = self.at[near] == indices
                out[hit] = self.value[near[hit]]
            return out
        given = int(index)
        i = given + n if given < 0 else given
        if not 0 <= i < n:
            raise IndexError("index out of range")
        k = bisect_left(self._at, i)
        return self._value[k] if k < len(self._at) and self._at[k] == i else self._base[i]

    def _whole(self) -> np.ndarray:
        whole: np.ndarray = self[0:len(self.base)]
        return whole


class PatchedEnds(PatchedColumn, SortedReads):
    """A column of span ends kept as the spans' shared bounds and the ends that are not the
    next span's start: end i is `bounds[i + 1]`, except at the sorted indices `at`, where it is
    `value`. What `share_bounds` keeps where most spans meet but not all (the fragments of one
    character each span that character; normalised text leaves gaps): 4 bytes a span less,
    8 bytes more per span that does not meet. Besides a `PatchedColumn`'s reads, it reads as a
    `SortedReads` does.

    >>> ends = PatchedEnds(np.array([0, 0, 2, 3]), np.array([0]), np.array([1]))  # spans 0-1, 0-2, 2-3
    >>> len(ends), int(ends[0]), int(ends[-1]), ends[0:3].tolist(), ends[np.array([2, 0])].tolist(), ends[::2].tolist()
    (3, 1, 3, [1, 2, 3], [3, 1], [1, 3])
    >>> np.asarray(ends).tolist(), int(np.searchsorted(ends, 2)), int(np.searchsorted(ends, 2, side="right"))
    ([1, 2, 3], 1, 2)
    """

    def __init__(self, bounds: np.ndarray, at: np.ndarray, value: np.ndarray) -> None:
        super().__init__(bounds[1:], at, value)

    @classmethod
    def over(cls, ends: Any, at: np.ndarray, value: np.ndarray) -> PatchedEnds:
        """The ends `ends` (the next spans' starts, as a `RunningColumn`), but `value` at `at`."""
        patched = cls.__new__(cls)
        PatchedColumn.__init__(patched, ends, at, value)
        return patched


class RunningBounds:
    """The bounds of spans that meet, kept as the lengths they add up from: bound 0 is where the
    first span starts and bound i + 1 is bound i plus token i's length, the byte length of its
    key's bytes (`lengths[key_index[i]]`), except at the sorted tokens `at`, whose span is
    `delta` longer (a SentencePiece text's first token, whose bytes hold the dummy-prefix space
    the text does not). Every `STEP`-th bound is kept, so one is read by adding at most `STEP`
    lengths. A byte-level BPE's byte spans are exactly its tokens' bytes in a row: the key column
    a pane keeps anyway gives them all, and the bounds' 4 bytes a token are not kept.

    `starts` and `ends` are its two columns (`RunningColumn`), read as numpy arrays are.

    Sixteen tokens; token 1 spans 9 bytes, its key's bytes are 4:

    >>> keys = np.array([0, 2, 1] + [0] * 13, dtype=np.uint16)
    >>> bounds = RunningBounds.of(np.array([3, 5, 14, 15, *range(17, 43, 2)]), np.array([2, 1, 4]), keys)
    >>> bounds.at.tolist(), bounds.delta.tolist(), bounds.kept.tolist()
    ([1], [5], [3])
    >>> bounds.ends[:4].tolist(), bounds.starts[1], bounds.ends[-1], bounds.starts[np.array([3, 0])].tolist()
    ([5, 14, 15, 17], 5, 41, [15, 3])
    """

    STEP = 32

    def __init__(self, kept: np.ndarray, lengths: np.ndarray, key_index: np.ndarray, at: np.ndarray,
                 delta: np.ndarray) -> None:
        self.key_index = key_index
        self.n = len(key_index)
        self.kept = np.ascontiguousarray(kept, dtype=np.int64)  # bound STEP * k
        self.lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        self.at = np.ascontiguousarray(at, dtype=np.int64)
        self.delta = np.ascontiguousarray(delta, dtype=np.int64)
        # one bound at a time through memoryviews (as `PatchedColumn` reads): ~5 us a bound, a
        # token read one by one (`TokenColumns[i]`, a tooltip's) ~18 us against ~6 with arrays
        self._keys = np.ascontiguousarray(key_index).data
        self._kept, self._lengths = self.kept.data, self.lengths.data
        self._at, self._delta = self.at.data, self.delta.data
        self._delta_sums = np.concatenate([[0], np.cumsum(self.delta)])  # of the deltas before each of `at`
        self.starts, self.ends = RunningColumn(self, 0), RunningColumn(self, 1)

    @classmethod
    def of(cls, bounds: np.ndarray, lengths: np.ndarray, key_index: np.ndarray) -> RunningBounds | None:
        """`bounds` (n + 1 of them) kept as running lengths, or None where more than one token in
        16 is not as long as its key's bytes (kept as an array, that is smaller)."""
        n = len(key_index)
        if len(bounds) != n + 1 or not n:
            return None
        own = np.take(np.asarray(lengths, dtype=np.int64), key_index)  # take: ~3x indexing's speed with uint16 keys
        steps = np.diff(bounds.astype(np.int64))
        at = np.flatnonzero(steps != own)
        if len(at) * 16 > n:
            return None
        return cls(bounds[:: cls.STEP], lengths, key_index, at, steps[at] - own[at])

    def bound(self, j: int) -> int:
        """Bound `j` (0 <= j <= n)."""
        lo = j - j % self.STEP
        total: int = self._kept[j // self.STEP] + sum(map(self._lengths.__getitem__, self._keys[lo:j]))
        at = self._at
        if len(at):
            a, b = bisect_left(at, lo), bisect_left(at, j)
            total += sum(self._delta[a:b])
        return total

    def gather(self, js: np.ndarray) -> np.ndarray:
        """Bounds `js` (each 0 <= j <= n), in numpy: each one's block of at most `STEP` lengths
        is added up in one pass over all of them."""
        k = js // self.STEP
        lo = k * self.STEP
        tokens = lo[:, None] + np.arange(self.STEP)  # (len(js), STEP): each bound's block
        steps = self.lengths[self.key_index[np.minimum(tokens, self.n - 1)]]
        total: np.ndarray = self.kept[k] + np.where(tokens < js[:, None], steps, 0).sum(axis=1)
        if len(self.at):
            total += self._delta_sums[np.searchsorted(self.at, js)] - self._delta_sums[np.searchsorted(self.at, lo)]
        return total

    def values(self, i: int, j: int) -> list[int]:
        """Bounds `i` to `j - 1` as a list: a few added up in Python from bound `i` (a fragment
        run's tokens, read one run at a time), more through `span`."""
        if j - i > 2 * self.STEP or j <= i:
            out: list[int] = self.span(i, j).tolist()
            return out
        at = self._at
        if len(at) and bisect_left(at, i) != bisect_left(at, j - 1):  # a token not as long as its bytes
            out = self.span(i, j).tolist()
            return out
        total = self.bound(i)
        out = [total]
        lengths = self._lengths
        for key in self._keys[i : j - 1]:
            total += lengths[key]
            out.append(total)
        return out

    def span(self, i: int, j: int) -> np.ndarray:
        """Bounds `i` to `j - 1` (0 <= i <= j <= n + 1) as an array."""
        if j <= i:
            return np.zeros(0, dtype=np.int64)
        k = i // self.STEP
        lo = k * self.STEP
        steps = np.take(self.lengths, self.key_index[lo : j - 1])
        a, b = bisect_left(self._at, lo), bisect_left(self._at, j - 1)
        steps[self.at[a:b] - lo] += self.delta[a:b]
        out = np.empty(j - lo, dtype=np.int64)
        out[0] = self.kept[k]
        np.cumsum(steps, out=out[1:])
        out[1:] += out[0]
        return out[i - lo :]


class RunningColumn(SortedReads):
    """The starts (`shift` 0: bounds 0 to n - 1) or ends (`shift` 1: bounds 1 to n) of a
    `RunningBounds`, read as a numpy array is: an index gives a value, a slice or an index array
    an array, `np.asarray` the whole column."""

    dtype = np.dtype(np.int64)

    def __init__(self, bounds: RunningBounds, shift: int) -> None:
        self.bounds, self.shift = bounds, shift

    def __len__(self) -> int:
        return self.bounds.n

    @property
    def shape(self) -> tuple[int]:
        return (self.bounds.n,)

    def __getitem__(self, index: Any) -> Any:
        n, shift = self.bounds.n, self.shift
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                return self._whole()[index]
            return self.bounds.span(start + shift, max(start, stop) + shift)
        if isinstance(index, (np.ndarray, list)):
            indices = np.asarray(index, dtype=np.int64)
            if len(indices) > n // 8:  # many: one pass over the whole column
                return self._whole()[indices]
            if len(indices) and not ((-n <= indices) & (indices < n)).all():
                raise IndexError("index out of range")
            return self.bounds.gather(np.where(indices < 0, indices + n, indices) + shift)
        given = int(index)
        i = given + n if given < 0 else given
        if not 0 <= i < n:
            raise IndexError("index out of range")
        return self.bounds.bound(i + shift)

    def _whole(self) -> np.ndarray:
        return self.bounds.span(self.shift, self.bounds.n + self.shift)


def share_bounds(cols: EncodedColumns) -> EncodedColumns:
    """`cols` with each pair of span columns whose spans meet (every token ends where the next
    one starts, as a byte-level BPE's byte spans always do) made two views of one array of
    `n + 1` bounds: `starts = bounds[:-1]`, `ends = bounds[1:]`. Same values, 4 bytes a token
    less per pair; the views are read-only (a write into one would move the other's value).
    A pair where some spans do not meet (fragments of one character, normalised text) keeps
    its starts as the bounds and its ends as `PatchedEnds`, where that is smaller. Byte spans
    that meet and are (nearly all) as long as their tokens' bytes, as a byte-level BPE's are,
    keep no bounds at all: `RunningBounds` adds them up from the key column (4 bytes a token).

    Two tokens, bytes 0-2 and 2-3, both of character 0 (the fragments of one character):

    >>> ids, byte_starts, byte_ends, starts, ends = (np.array(v) for v in ([5, 6], [0, 2], [2, 3], [0, 0], [1, 1]))
    >>> uniques = [(5, b"\\xea\\xb5", "fragment", ""), (6, b"\\xad", "fragment", "")]
    >>> cols = EncodedColumns(ids, byte_starts, byte_ends, starts, ends, np.array([0, 1]), uniques, n_bytes=3)
    >>> shared = share_bounds(cols)
    >>> type(shared.byte_ends).__name__, shared.byte_ends.tolist(), type(shared.ends).__name__
    ('RunningColumn', [2, 3], 'PatchedEnds')
    """

    def shared(starts: np.ndarray, ends: Any) -> tuple[np.ndarray, Any, np.ndarray | None, np.ndarray]:
        """(starts, ends, their bounds if shared, the spans whose end is not the next start)"""
        n = len(starts)
        none = np.zeros(0, dtype=np.int64)
        if not n or not isinstance(ends, np.ndarray) or starts.dtype != ends.dtype:
            return starts, ends, None, none
        apart = np.flatnonzero(ends[:-1] != starts[1:])
        if len(apart) and len(apart) * (4 + ends.itemsize) >= n * ends.itemsize:
            return starts, ends, None, none
        bounds = np.concatenate([starts, ends[-1:]])
        bounds.setflags(write=False)
        if not len(apart):
            return bounds[:-1], bounds[1:], bounds, apart
        return bounds[:-1], PatchedEnds(bounds, apart, ends[apart]), bounds, apart

    byte_starts, byte_ends, bounds, apart = shared(cols.byte_starts, cols.byte_ends)
    if len(apart):  # byte ends that do not all meet stay an array
        byte_starts, byte_ends = cols.byte_starts, cols.byte_ends
    elif bounds is not None:  # they meet
        lengths = np.fromiter(map(len, map(itemgetter(1), cols.uniques)), dtype=np.int64, count=len(cols.uniques))
        running = RunningBounds.of(bounds, lengths, cols.key_index)
        if running is not None:  # columns read as arrays are (typed as the arrays they stand for)
            byte_starts, byte_ends = cast(np.ndarray, running.starts), cast(np.ndarray, running.ends)
    starts, ends, bounds, apart = shared(cols.starts, cols.ends)
    if bounds is not None:  # character spans, as long as each key's usual span (nearly all)
        running = RunningBounds.of(bounds, _usual_steps(bounds, cols.key_index, len(cols.uniques)), cols.key_index)
        if running is not None:
            starts = cast(np.ndarray, running.starts)
            patched = PatchedEnds.over(running.ends, apart, cols.ends[apart]) if len(apart) else running.ends
            ends = cast(np.ndarray, patched)
    return replace(cols, byte_starts=byte_starts, byte_ends=byte_ends, starts=starts, ends=ends)


def _usual_steps(bounds: np.ndarray, key_index: np.ndarray, keys: int) -> np.ndarray:
    """For each of the `keys` keys, how far the bounds step over one of its tokens (its middle
    one in the text): the characters a token of that key spans, the same for nearly every one of
    them (a fragment that ends a character steps over it, one that begins it does not)."""
    steps = np.diff(bounds.astype(np.int64))
    order = np.argsort(key_index, kind="stable")  # a radix sort for 2-byte keys
    ordered = key_index[order]
    firsts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    counts = np.diff(np.append(firsts, len(ordered)))
    lengths = np.zeros(keys, dtype=np.int64)
    lengths[ordered[firsts]] = steps[order[firsts + counts // 2]]
    return lengths
