"""Count the segments of a UTF-8 text with numpy: the same counts as `SEGMENT.findall`, exactly.

`ChunkCounter` (in `pretokenize`) cuts a text into segments before a space that follows a
non-space, and counts the distinct middle segments. Done with `re` that is two calls per
segment (making each string, then counting it); here one call per block of text finds every
cut, hashes every segment, groups equal hashes (`np.unique`) and makes one string per distinct
segment only.

Exactness does not rest on the hash. Every occurrence is compared with the representative of its
hash group, byte by byte (vectorized): a group holds one string, or the caller counts the text
the slow way (`count_block` returns None). A hash collision thus costs time, never a wrong count.

The cut rule is `SEGMENT`'s, on bytes: a space (0x20) whose preceding character is not
whitespace as the `re` module's `\\s` defines it (`str.isspace`). ASCII bytes never occur inside
a multi-byte UTF-8 sequence, so the byte before a space is either an ASCII character or the last
byte of one non-ASCII character, which is decoded from its last two or three bytes when it could
be one of the few non-ASCII whitespace characters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tokviz.core.heap import trim_heap

#: ASCII bytes that are not whitespace for `re` (`str.isspace`: 9-13, 28-31 and the space)
_NONSPACE = np.ones(256, dtype=bool)
_NONSPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = False
_NONSPACE[128:] = False  # decided from the whole character (`_non_ascii_space`)

#: the non-ASCII characters `str.isspace` holds (bidirectional class WS, B or S, or category Zs),
#: written out: finding them among the code points would cost every `tokviz train` milliseconds at
#: start-up (`test_segcount` checks every code point against this table)
_NON_ASCII_SPACES = (
    "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
#: the same, as the value of their UTF-8 bytes read as one integer, by length: ascending
_SPACE2 = np.array([int.from_bytes(c.encode(), "big") for c in _NON_ASCII_SPACES if c < "\u0800"], dtype=np.int64)
_SPACE3 = np.array([int.from_bytes(c.encode(), "big") for c in _NON_ASCII_SPACES if c >= "\u0800"], dtype=np.int64)
# no whitespace character needs four bytes in UTF-8 (`test_segcount` checks every code point)

_BASE = np.uint64(0x100000001B3)  # odd: invertible modulo 2**64
_BASE_INV = np.uint64(pow(0x100000001B3, -1, 1 << 64))
_LENGTH_MIX = np.uint64(0x9E3779B97F4A7C15)


def cut_points(b: npt.NDArray[np.uint8]) -> npt.NDArray[np.int64]:
    """The positions of the spaces `SEGMENT` cuts before (never 0): each starts a segment.

    >>> cut_points(np.frombuffer("a b  c\\u00a0 d e".encode(), np.uint8)).tolist()
    [1, 3, 10]
    """
    spaces = np.flatnonzero(b[1:] == 32) + 1
    before = b[spaces - 1]
    cut = _NONSPACE[before]
    high = np.flatnonzero(before >= 128)
    if high.size:
        at = spaces[high]
        cut[high] = ~_non_ascii_space(b, at)
    return spaces[cut].astype(np.int64, copy=False)


def _non_ascii_space(b: npt.NDArray[np.uint8], at: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
    """Whether the non-ASCII character ending just before each position in `at` is whitespace."""
    last = b[at - 1].astype(np.int64)
    two = np.where(at >= 2, b[np.maximum(at - 2, 0)].astype(np.int64), 0)
    three = np.where(at >= 3, b[np.maximum(at - 3, 0)].astype(np.int64), 0)
    return _member((two << 8) | last, _SPACE2) | _member((three << 16) | (two << 8) | last, _SPACE3)


def _member(values: npt.NDArray[np.int64], ascending: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """`np.isin(values, ascending)` for a small ascending set (`np.isin` would import numpy.ma).

    >>> _member(np.array([1, 4, 9, 0]), np.array([1, 9])).tolist()
    [True, False, True, False]
    """
    at = np.minimum(np.searchsorted(ascending, values), ascending.size - 1)
    found: npt.NDArray[np.bool_] = ascending[at] == values
    return found


WINDOW = 1 << 18  # bytes of segments hashed at a time: bounds the arrays a block needs (~8 per byte)
_powers_cache: list[npt.NDArray[np.uint64]] = []


def _powers(n: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """`BASE**i` and `BASE**-i` (modulo 2**64) for i < n; kept for windows of the usual size."""
    if _powers_cache and _powers_cache[0].size >= n:
        return _powers_cache[0][:n], _powers_cache[1][:n]
    size = max(n, WINDOW + 1)
    out = []
    for base in (_BASE, _BASE_INV):
        p = np.full(size, base, dtype=np.uint64)
        p[0] = 1
        np.cumprod(p, out=p)  # wraps: arithmetic modulo 2**64
        out.append(p)
    if size <= 2 * (WINDOW + 1):
        _powers_cache[:] = out
    return out[0][:n], out[1][:n]


U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]
Column = npt.NDArray[Any]  # int32, or int64 once values may not fit (`SegmentTable`)


def _hashes(b: U8, starts: I64, ends: I64) -> npt.NDArray[np.uint64]:
    """A 64-bit polynomial hash of each `b[start:end]` (wrapping arithmetic), mixed with its length;
    `b` is the window the segments are in (positions relative to it)."""
    powers, inverse = _powers(b.size)
    prefix = np.empty(b.size + 1, dtype=np.uint64)
    prefix[0] = 0
    np.multiply(b, powers, out=prefix[1:])
    np.cumsum(prefix, out=prefix)
    h = (prefix[ends] - prefix[starts]) * inverse[starts]
    h += (ends - starts).astype(np.uint64) * _LENGTH_MIX
    return h


def count_block(data: bytes) -> tuple[str, str, list[Block]] | None:
    """Segment a valid UTF-8 text with `SEGMENT`'s cuts; return `(first segment, last segment,
    the distinct middle segments of each window of about `WINDOW` bytes)`, or None when the text
    has fewer than three segments, holds a NUL, or a hash group did not hold one string (count it
    with `re` then).

    >>> first, last, blocks = count_block(b"a b c b c d")
    >>> first, last, blocks[0].counts.tolist(), blocks[0].data
    ('a', ' d', [2, 2], b' b c')
    """
    if b"\0" in data:
        return None  # the pieces are joined with NUL separators (`pieces.compact`)
    b = np.frombuffer(data, dtype=np.uint8)
    cuts = cut_points(b)
    if cuts.size < 2:
        return None
    lo, hi = int(cuts[0]), int(cuts[-1])
    # windows: runs of whole segments, cut at the first cut at or after each multiple of WINDOW
    marks = np.searchsorted(cuts, np.arange(lo, hi, WINDOW, dtype=np.int64))
    bounds = [*sorted(set(marks.tolist())), cuts.size - 1]  # (`np.unique` would import numpy.ma)
    blocks = []
    for a, z in zip(bounds, bounds[1:]):
        if z <= a:
            continue
        block = _window(b, cuts[a : z + 1])
        if block is None:
            return None
        blocks.append(block)
    return data[:lo].decode("utf-8"), data[hi:].decode("utf-8"), blocks


def _window(b: npt.NDArray[np.uint8], cuts: npt.NDArray[np.int64]) -> Block | None:
    """The distinct segments between consecutive `cuts`, verified; None on a hash collision."""
    lo, hi = int(cuts[0]), int(cuts[-1])
    w = b[lo:hi]
    starts, ends = cuts[:-1] - lo, cuts[1:] - lo
    lengths = ends - starts
    keys = _hashes(w, starts, ends)
    unique, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)  # numpy 2.0.x gives it the input's shape; the same here (1-D)
    rep_starts, rep_lengths = starts[first], lengths[first]
    if not np.array_equal(rep_lengths[inverse], lengths):
        return None
    # every byte against the same byte of its segment's representative (the segments tile `w`)
    if not np.array_equal(w[_ranges(rep_starts[inverse], lengths)], w):
        return None
    return Block(unique, counts.astype(np.int64), rep_lengths, w[_ranges(rep_starts, rep_lengths)].tobytes())


@dataclass
class Block:
    """Distinct segments: their hashes (ascending), counts, lengths and bytes one after another."""

    keys: npt.NDArray[np.uint64]
    counts: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]
    data: bytes


def _take(src: U8, starts: I64, lengths: I64) -> U8:
    """`src[s:s+n]` for every `(s, n)`, one after another; gathered a few hundred kB at a time
    (the positions take 8 bytes per byte)."""
    ends = np.cumsum(lengths)
    cuts = [0, *np.searchsorted(ends, np.arange(WINDOW, int(ends[-1]) if ends.size else 0, WINDOW), "right").tolist()]
    cuts.append(starts.size)
    parts = [src[_ranges(starts[a:z], lengths[a:z])] for a, z in zip(cuts, cuts[1:]) if z > a]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint8)


def _ranges(starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The positions `s, s+1, ..., s+n-1` of every `(s, n)`, one after another."""
    offsets = np.cumsum(lengths) - lengths
    index = np.repeat(starts - offsets, lengths)
    index += np.arange(index.size, dtype=np.int64)
    return index


#: the largest value an int32 column holds (see `SegmentTable`)
NARROW_MAX = int(np.iinfo(np.int32).max)


def _widened(column: Column, bound: int) -> Column:
    """`column` as int64 once values up to `bound` may not fit its int32, else itself."""
    return column.astype(np.int64) if bound > NARROW_MAX and column.dtype != np.int64 else column


class SegmentTable:
    """Distinct segments and their counts, in numpy arrays and one byte buffer: far less memory
    than a dict of strings, and a Python string is made only once per distinct segment, when it
    is split (`batches`).

    The counts, offsets and lengths are int32 (20 bytes a segment with the hash, not 32) while two totals show
    they fit: no count exceeds the segments added so far (`seen`), and no offset
    or length exceeds the bytes in `buf`. A column whose total passes 2**31 - 1 is widened to
    int64 (`_widened`), so a corpus of billions of segments counts exactly too.

    `sent` holds, per segment, the count already given out to be split (`share`, while the
    corpus is still read); `batches` gives out the rest, so every occurrence is split once.

    Blocks (`add`) wait until they hold `PENDING` segments, then are merged in (`flush`): equal
    hashes among them are summed, and each hash already in the table (found by binary search) is
    added to its count, the rest inserted. Every segment whose hash matches another's is first
    compared with it byte by byte; one that differs (a hash collision) goes to `overflow`, a dict
    of strings counted exactly the slow way.
    """

    #: segments (distinct per window) pending before a flush. Each flush copies the table's
    #: columns (`np.insert`), yet fewer, larger flushes save no CPU time here, while the pending
    #: blocks and what merging them takes at once grow with this number (bench/bench_train.py).
    PENDING = 1 << 16

    def __init__(self) -> None:
        self.keys = np.empty(0, dtype=np.uint64)  # ascending
        self.counts: Column = np.empty(0, dtype=np.int32)
        self.offsets: Column = np.empty(0, dtype=np.int32)  # where each segment's bytes start in `buf`
        self.lengths: Column = np.empty(0, dtype=np.int32)
        self.sent: Column | None = None  # of each count, what `share` gave out (None: nothing yet)
        self.seen = 0  # segments added (occurrences): a bound on every count
        self.buf = bytearray()  # grows in place (realloc), unlike an array that is copied
        self.pending: list[Block] = []
        self.pending_size = 0
        # `share`'s batches of the segments unsent at the last flush, and the one declined
        self._offers: Iterator[tuple[int, list[bytes], npt.NDArray[np.intp]]] | None = None
        self._declined: tuple[int, list[bytes], npt.NDArray[np.intp]] | None = None

    def __len__(self) -> int:
        """Distinct segments in the table (after `flush`)."""
        return int(self.keys.size)

    def add(self, block: Block, overflow: dict[str, int]) -> None:
        """Add a block's segments; they are merged in (`flush`) once enough are pending."""
        self.pending.append(block)
        self.pending_size += int(block.keys.size)
        if self.pending_size >= self.PENDING:
            self.flush(overflow)

    def flush(self, overflow: dict[str, int]) -> None:
        """Merge the pending blocks into the table; collisions go to `overflow` as strings."""
        if not self.pending:
            return
        blocks, self.pending, self.pending_size = self.pending, [], 0
        self._offers = self._declined = None  # their rows move
        data = np.frombuffer(b"".join(b.data for b in blocks), dtype=np.uint8)
        lengths = np.concatenate([b.lengths for b in blocks])
        keys = np.concatenate([b.keys for b in blocks])
        counts = np.concatenate([b.counts for b in blocks])
        del blocks
        self.seen += int(counts.sum())
        self.counts = _widened(self.counts, self.seen)
        if self.sent is not None:
            self.sent = _widened(self.sent, self.seen)
        offsets = np.cumsum(lengths) - lengths  # within `data`
        # equal hashes among the new blocks: one entry each, counts summed
        keys, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        rep = first[inverse]
        bad = _differ(data, offsets, lengths, data, offsets[rep], lengths[rep], rep != np.arange(rep.size))
        self._overflow(data, offsets, lengths, counts, bad, overflow)
        counts = np.bincount(inverse[~bad], weights=counts[~bad], minlength=keys.size).astype(np.int64)
        offsets, lengths = offsets[first], lengths[first]
        del inverse, rep, bad, first
        # against the table: add to the entries there, insert the others
        at = np.searchsorted(self.keys, keys)
        found = at < self.keys.size
        found[found] = self.keys[at[found]] == keys[found]
        if found.any():
            buf = np.frombuffer(self.buf, dtype=np.uint8)
            there = at[found]
            bad = np.zeros(keys.size, dtype=bool)
            bad[found] = _differ(data, offsets[found], lengths[found], buf, self.offsets[there],
                                 self.lengths[there], np.ones(there.size, dtype=bool))
            del buf
            self._overflow(data, offsets, lengths, counts, bad, overflow)
            good = found & ~bad
            np.add.at(self.counts, at[good], counts[good])
            found |= bad  # handled
            del there, good, bad
        fresh = ~found
        if fresh.any():
            base = len(self.buf)
            self.buf += _take(data, offsets[fresh], lengths[fresh]).tobytes()
            self.offsets = _widened(self.offsets, len(self.buf))
            self.lengths = _widened(self.lengths, len(self.buf))
            where = at[fresh]
            new_lengths = lengths[fresh]
            new_offsets = base + np.cumsum(new_lengths) - new_lengths
            self.keys = np.insert(self.keys, where, keys[fresh])
            self.counts = np.insert(self.counts, where, counts[fresh])
            self.offsets = np.insert(self.offsets, where, new_offsets)
            self.lengths = np.insert(self.lengths, where, new_lengths)
            if self.sent is not None:
                self.sent = np.insert(self.sent, where, 0)
        trim_heap()  # the old arrays and the blocks' went back to the heap: return what can be

    @staticmethod
    def _overflow(
        data: npt.NDArray[np.uint8],
        offsets: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.int64],
        counts: npt.NDArray[np.int64],
        bad: npt.NDArray[np.bool_],
        overflow: dict[str, int],
    ) -> None:
        for i in np.flatnonzero(bad).tolist():
            text = data[offsets[i] : offsets[i] + lengths[i]].tobytes().decode("utf-8")
            overflow[text] = overflow.get(text, 0) + int(counts[i])

    def share(self, size: int, take: Callable[[int, list[bytes]], bool]) -> None:
        """Offer the segments no batch has held yet, `batches`' way, to `take(n, joined)` until it
        declines one; each batch taken counts as split (`sent`). Counts that grow later are given
        out again by `batches`, for the growth only. The batches of the segments new at the last
        `flush` are made once: a batch declined is offered again at the next call."""
        if self.sent is None:
            self.sent = np.zeros_like(self.counts)
        if self._offers is None:
            fresh = np.flatnonzero(self.sent == 0)
            order = fresh[np.argsort(self.counts[fresh], kind="stable")]
            batches = self._joined(self.counts[order], self.offsets[order], self.lengths[order], size)
            self._offers = ((n, joined, order[rows]) for n, joined, rows in batches)
            self._declined = None
        while True:
            offer = self._declined or next(self._offers, None)
            if offer is None:
                return
            n, joined, rows = offer
            if not take(n, joined):
                self._declined = offer
                return
            self._declined = None
            self.sent[rows] = n

    def batches(self, size: int, check: Callable[[], None] | None = None) -> Iterator[tuple[int, list[bytes]]]:
        """Yield `(count, the bytes of up to `size` segments seen that many times, joined: the
        ASCII ones, then (if any) the others)` for every segment, emptying the table first; the
        count is what `share` has not given out yet.

        The segments are gathered into their batches before the first is yielded and the table is
        let go: the hashes are not needed to split, and the batches, freed as they are consumed,
        shrink while the caller's chunk counts grow. Splitting from the table itself held it
        whole until the last batch, beside the chunks found: that was the peak of each counting
        process. `check` is called before each batch is gathered (a cancel: gathering a large
        table takes a while).
        """
        batches = list(self._gather(size, check))
        self.clear()
        batches.reverse()  # consumed from the end: the list shrinks in place
        while batches:
            yield batches.pop()

    def _gather(self, size: int, check: Callable[[], None] | None) -> Iterator[tuple[int, list[bytes]]]:
        if not self.keys.size:
            return
        left = self.counts if self.sent is None else self.counts - self.sent
        order = np.argsort(left, kind="stable")
        if self.sent is not None:
            order = order[np.searchsorted(left[order], 1):]  # the segments given out whole are done
        counts, offsets, lengths = left[order], self.offsets[order], self.lengths[order]
        del left, order
        empty = np.empty(0, dtype=np.int32)  # the columns are not needed to split
        self.keys, self.counts, self.offsets, self.lengths = np.empty(0, dtype=np.uint64), empty, empty, empty
        self.sent = None
        for n, joined, _ in self._joined(counts, offsets, lengths, size, check):
            yield n, joined

    def _joined(self, counts: Column, offsets: Column, lengths: Column, size: int,
                check: Callable[[], None] | None = None) -> Iterator[tuple[int, list[bytes], slice]]:
        """Batches of segments (by their `counts`, ascending, `offsets` and `lengths`): `(count,
        joined bytes as `batches` gives them, the batch's slice of the three)`."""
        if not counts.size:
            return
        buf = np.frombuffer(self.buf, dtype=np.uint8)
        bounds = (np.flatnonzero(np.diff(counts)) + 1).tolist()
        for lo, hi in zip([0, *bounds], [*bounds, counts.size]):
            n = int(counts[lo])
            for at in range(lo, hi, size):
                if check is not None:
                    check()
                rows = slice(at, min(at + size, hi))
                part = lengths[rows].astype(np.int64)
                joined = buf[_ranges(offsets[rows].astype(np.int64), part)]
                high = np.maximum.reduceat(joined, np.cumsum(part) - part) >= 128
                if not high.any():
                    yield n, [joined.tobytes()], rows
                else:
                    mask = np.repeat(high, part)
                    yield n, [joined[~mask].tobytes(), joined[mask].tobytes()], rows

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]
        trim_heap()


def _differ(
    a: npt.NDArray[np.uint8],
    a_offsets: npt.NDArray[np.int64],
    a_lengths: npt.NDArray[np.int64],
    b: npt.NDArray[np.uint8],
    b_offsets: npt.NDArray[np.int64],
    b_lengths: npt.NDArray[np.int64],
    check: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Whether each checked segment of `a` differs from its counterpart in `b` (False where not
    checked), compared byte by byte, a few hundred kB at a time."""
    out: npt.NDArray[np.bool_] = check & (a_lengths != b_lengths)
    todo = np.flatnonzero(check & ~out)
    if todo.size:
        n = a_lengths[todo]
        differ = _take(a, a_offsets[todo], n) != _take(b, b_offsets[todo], n)
        if differ.any():
            segment = np.repeat(np.arange(todo.size), n)
            out[todo[np.unique(segment[differ])]] = True
    return out
