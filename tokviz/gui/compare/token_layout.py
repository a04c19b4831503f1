"""Line breaking for the token view, done in slices so a long text never blocks the window.

Qt-free: it sees only cell widths and the newlines after each cell. A line is a run of
consecutive tokens; x positions are computed only for the lines that are drawn.
"""

from __future__ import annotations

import threading
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from typing import Any

import numpy as np

CELL_GAP = 2.0  # pixels between neighbouring cells, so boundaries show even with equal colours
CHUNK = 1 << 14  # tokens whose line ends are computed in one numpy pass
FIRST_CHUNK = 1 << 10  # the first chunk's: its cells are measured before the first screenful shows
LINE_SUMS_KEPT = 256  # lines whose running sums a layout keeps (a screenful is tens)


def narrowed(values: np.ndarray, dtype: type[np.generic]) -> np.ndarray:
    """`values` as the smaller `dtype` when every value survives the cast unchanged, else as they are.

    >>> narrowed(np.array([7.5, 12.015625]), np.float32).dtype, narrowed(np.array([0.1]), np.float32).dtype
    (dtype('float32'), dtype('float64'))
    >>> narrowed(np.array([0, 3], dtype=np.int32), np.uint8).dtype, narrowed(np.array([300]), np.uint8).dtype
    (dtype('uint8'), dtype('int64'))
    """
    small = values.astype(dtype)  # a value that does not fit comes out changed (wrapped, rounded)
    return small if np.array_equal(small, values) else values


class TokenWidths:
    """Every token's cell width, indexed as an array is (an index gives a float, a slice an array),
    without an array of one width per token: token i's width is `table[index[i]]`, one width per
    distinct cell.

    >>> widths = TokenWidths(np.array([7.5, 12.015625, 3.0]), np.array([1, 0, 2, 1], dtype=np.uint16))
    >>> len(widths), widths[1], widths[-1], widths[0:2].tolist(), widths[::-2].tolist(), widths[2:1].tolist()
    (4, 7.5, 12.015625, [12.015625, 7.5], [12.015625, 7.5], [])

    `measured_later` makes one whose cells are measured when first read, by the reading thread:
    Qt's font cache is per thread, so a thread measuring for the GUI thread would load every
    fallback font face a second time.

    >>> later = TokenWidths.measured_later(["ab", "c"], np.array([1, 0, 1]), lambda: lambda cell: 8.0 * len(cell))
    >>> later.unmeasured, later[0:2].tolist(), later.unmeasured, later[2], later.table.tolist()
    (2, [8.0, 16.0], 0, 8.0, [16.0, 8.0])
    """

    def __init__(self, table: np.ndarray, index: Any) -> None:  # an array, or indexed as one
        self._table = np.asarray(table, dtype=np.float64)
        self.index = index
        self._cells: Sequence[Any] = ()
        self._missing = np.zeros(0, dtype=bool)  # per cell: not measured yet
        self._measurer: Callable[[], Callable[[Any], float]] | None = None
        self._width_of: dict[int, Callable[[Any], float]] = {}  # per thread

    @classmethod
    def measured_later(cls, cells: Sequence[Any], index: Any,
                       measurer: Callable[[], Callable[[Any], float]]) -> TokenWidths:
        """Widths of `cells` (token i's is `cells[index[i]]`), each measured when first read by
        `measurer()(cell)`; `measurer` is called once per reading thread."""
        widths = cls(np.zeros(len(cells)), index)
        widths._cells, widths._measurer = cells, measurer
        widths._missing = np.ones(len(cells), dtype=bool)
        return widths

    @property
    def unmeasured(self) -> int:
        """How many of the cells are not measured yet."""
        return int(np.count_nonzero(self._missing))

    @property
    def table(self) -> np.ndarray:
        """One width per cell, every cell measured."""
        self._measure(np.flatnonzero(self._missing))
        return self._table

    def measured(self, a: int, b: int, deadline: float | None = None) -> bool:
        """Measure the cells of tokens `a` to `b - 1` not measured yet, stopping once
        `time.perf_counter()` passes `deadline`; True when every one of them is measured."""
        return b <= a or self._measure_keys(self.index[a:b], deadline)

    def _measure_keys(self, keys: np.ndarray, deadline: float | None = None) -> bool:
        if not len(self._cells) or not len(keys):
            return True
        missing = self._missing[keys]
        return not missing.any() or self._measure(np.unique(keys[missing]), deadline)

    def _measure(self, cells: np.ndarray, deadline: float | None = None) -> bool:
        if not len(cells):
            return True
        assert self._measurer is not None  # cells are missing only in a table measured later
        thread = threading.get_ident()
        width_of = self._width_of.get(thread)
        if width_of is None:
            width_of = self._width_of[thread] = self._measurer()
        for i, k in enumerate(cells.tolist()):
            # the deadline is checked after every cell: the first label of a script loads its
            # fallback font, a slow step
            self._table[k] = width_of(self._cells[k])
            self._missing[k] = False
            if deadline is not None and time.perf_counter() > deadline:
                return i + 1 == len(cells)
        return True

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            keys = self.index[index]
            self._measure_keys(keys)
            return self._table[keys]
        key = int(self.index[index])
        if len(self._cells) and self._missing[key]:
            self._measure(np.array([key]))
        return float(self._table[key])


class LineBreaks:
    """The tokens whose text holds newlines (in order) and how many each holds.

    >>> breaks = LineBreaks.from_counts(np.array([0, 2, 0, 1]))
    >>> breaks.at.tolist(), breaks.count.tolist(), breaks.before(3).at.tolist()
    ([1, 3], [2, 1], [1])
    """

    def __init__(self, at: np.ndarray, count: np.ndarray) -> None:
        self.at, self.count = at, count

    @classmethod
    def from_counts(cls, newlines: np.ndarray) -> LineBreaks:
        """From the newline count after each token, in the smallest dtypes that hold them."""
        newlines = np.asarray(newlines)
        at = np.flatnonzero(newlines)
        return cls(narrowed(at, np.int32), narrowed(newlines[at], np.uint8))

    def before(self, n: int) -> LineBreaks:
        """The breaks of the first `n` tokens."""
        k = bisect_left(np.ascontiguousarray(self.at).data, n)
        return LineBreaks(self.at[:k], self.count[:k])


class TokenLayout:
    """Greedy wrapping of cells into lines of at most `wrap_width` pixels, computed incrementally.

    Where a line starting at token s ends does not depend on the lines before it, so it is
    computed for a chunk of tokens at once in numpy, and the chain of line starts through the
    chunk is followed by pointer doubling (`_chain`): no Python code runs per line or per token.
    Widths are multiples of 1/64 pixel, so every float64 sum of them is exact, whatever the order.

    `newlines` is the newline count after each token, or the `LineBreaks` made of it.

    >>> lay = TokenLayout(np.array([10.0, 10.0, 10.0]), np.array([0, 1, 0]), wrap_width=100)
    >>> lay.advance(); lay.line_starts.tolist(), lay.line_xs(1).tolist()
    True
    ([0, 2], [0.0])
    """

    def __init__(self, widths: np.ndarray | TokenWidths, newlines: np.ndarray | LineBreaks, *,
                 wrap_width: float) -> None:
        self.widths = widths
        self.count = len(widths)
        self.wrap_width = max(float(wrap_width), 1.0)
        self._breaks = newlines if isinstance(newlines, LineBreaks) else LineBreaks.from_counts(newlines)
        self.line_starts = array("i", [0] if self.count else [])  # 4 bytes a line
        self._next = 0  # first token not yet placed
        self.done = self.count == 0
        # a line holds at most this many tokens (each takes its width plus a gap of CELL_GAP > 0)
        self._longest = int((self.wrap_width + CELL_GAP) // CELL_GAP) + 2
        # by a line's token range; over the widths, not `self`: no reference cycle keeps a layout
        self._range_sums = lru_cache(maxsize=LINE_SUMS_KEPT)(partial(_running_sums, widths))

    def _line_ends(self, first: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        """For every token s of the chunk from `first`: where a line starting at s ends, and how
        many empty lines follow it ("\n\n")."""
        n, breaks = self.count, self._breaks
        last = min(first + size, n)
        cum = _running_sums(self.widths, first, min(last + self._longest, n))  # every line from the chunk ends in it
        s = np.arange(first, last, dtype=np.int64)
        wrap = np.searchsorted(cum, cum[s - first] + (self.wrap_width + CELL_GAP), side="right") - 1 + first
        end = np.minimum(np.maximum(wrap, s + 1), n)
        extra = np.zeros(len(s), dtype=np.int64)
        if len(breaks.at):
            k = breaks.at.searchsorted(s.astype(breaks.at.dtype), side="left")  # no copy of the breaks
            has = k < len(breaks.at)
            k = np.minimum(k, len(breaks.at) - 1)
            b = breaks.at[k]
            cut = has & (b < end)
            end = np.where(cut, b + 1, end)
            extra[cut] = breaks.count[k[cut]].astype(np.int64) - 1
        return end, extra

    def advance(self, budget_s: float | None = None) -> bool:
        """Place more lines (all of them without a budget); return True once every token is placed."""
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        starts = self.line_starts
        n, s = self.count, self._next
        measured = getattr(self.widths, "measured", None)  # widths measured when first read
        while s < n:
            size = FIRST_CHUNK if s == 0 else CHUNK
            if deadline is not None and measured is not None and not measured(
                    s, min(s + size + self._longest, n), deadline):
                break  # the chunk's cells are measured over more slices
            end, extra = self._line_ends(s, size)
            on_chain = _chain(end - s, len(end))  # the chunk's line starts, from s (local)
            ends, extras = end[on_chain], extra[on_chain]
            # a line ending at e starts the next line at e, after `extra` empty lines ("\n\n")
            starts.extend(np.repeat(ends, np.where(extras > 0, extras + 1, ends < n)).tolist())
            s = int(ends[-1])
            if deadline is not None and time.perf_counter() > deadline:
                break
        at = self._breaks.at
        if s >= n and n and len(at) and at[-1] == n - 1 and starts[-1] != n:
            starts.append(n)  # a text ending in a newline shows an empty last line
        self._next = s
        self.done = s >= n
        return self.done

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def line_range(self, line: int) -> range:
        """Token indices on `line`."""
        end = self.line_starts[line + 1] if line + 1 < len(self.line_starts) else self._next
        return range(self.line_starts[line], end)

    def line_of(self, token: int) -> int:
        """The line holding token index `token` (which must already be placed)."""
        return max(bisect_right(self.line_starts, token) - 1, 0)

    def _sums_of(self, line: int) -> np.ndarray:
        rng = self.line_range(line)
        return self._range_sums(rng.start, rng.stop)

    def line_xs(self, line: int) -> np.ndarray:
        """The x of every token of `line` within it (float64)."""
        return self._sums_of(line)[:-1]

    def x_of(self, token: int, line: int) -> float:
        """x of a token within its line."""
        return float(self._sums_of(line)[token - self.line_starts[line]])

    def placed(self) -> int:
        """How many tokens have been placed so far."""
        return self._next

    def token_at(self, line: int, x: float) -> int | None:
        """The token under x on `line`, or None in a gap / past the end."""
        if not 0 <= line < len(self.line_starts):
            return None
        rng = self.line_range(line)
        xs = self._sums_of(line)
        k = int(np.searchsorted(xs, x, side="right")) - 1
        if not 0 <= k < len(rng) or x > float(xs[k]) + float(self.widths[rng.start + k]):
            return None  # before the line, past its end, or in the gap after a cell
        return rng.start + k


def _running_sums(widths: np.ndarray | TokenWidths, a: int, b: int) -> np.ndarray:
    """`sums[k]`: the x of token a + k if a line started at token a (k = 0 .. b - a)."""
    sums = np.zeros(b - a + 1, dtype=np.float64)
    np.cumsum(np.asarray(widths[a:b], dtype=np.float64) + CELL_GAP, out=sums[1:])
    return sums


def _chain(step: np.ndarray, m: int) -> np.ndarray:
    """The positions 0, step[0], step[step[0]], ... that are below `m`, in order (`step[p] > p`).

    Pointer doubling: the table of 2**k steps is squared until 0 leaves the range, then the
    chain is filled in from the coarsest table down, each level putting one step after every
    position it has (positions past the range stop at `m`, which stays put).

    >>> _chain(np.array([2, 3, 3, 5, 9]), 5).tolist()
    [0, 2, 3]
    """
    jump = np.empty(m + 1, dtype=np.int64)
    np.minimum(step, m, out=jump[:m])
    jump[m] = m
    tables = [jump]
    while tables[-1][0] < m:
        tables.append(tables[-1][tables[-1]])
    at = np.zeros(1, dtype=np.int64)
    for table in reversed(tables[:-1]):
        both = np.empty(2 * len(at), dtype=np.int64)
        both[0::2], both[1::2] = at, table[at]
        at = both[both < m]
    return at


def covering(starts: np.ndarray, ends: np.ndarray, a: int, b: int) -> range:
    """Indices of tokens whose character spans overlap `[a, b)` (a caret `a == b` means `[a, a+1)`).

    Spans are in text order, so both `starts` and `ends` are non-decreasing.

    >>> covering(np.array([0, 2, 4]), np.array([2, 4, 6]), 3, 5)
    range(1, 3)
    """
    if b <= a:
        b = a + 1
    first = int(np.searchsorted(ends, a, side="right"))
    last = int(np.searchsorted(starts, b, side="left"))
    return range(first, max(first, last))
