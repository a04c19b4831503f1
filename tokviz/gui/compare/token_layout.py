"""Line breaking for the token view, done in slices so a 1 MB text never blocks for long.

Qt-free: it only sees cell widths (measured once per distinct cell, off the GUI thread) and the
newline count after each cell. A line is a run of consecutive tokens; the view paints only the
lines in its viewport and computes x positions for just those lines.
"""

from __future__ import annotations

import time
from array import array
from bisect import bisect_right
from typing import Any

import numpy as np

CELL_GAP = 2.0  # pixels between neighbouring cells, so boundaries show even with equal colours


CHUNK = 1 << 14  # tokens whose line ends are computed in one numpy pass


def line_columns(widths: np.ndarray, newlines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a layout needs at any wrap width: `cum[i]`, the x of token i if all tokens were on one
    line, and the tokens that end a line (int32 where every index fits: 4 bytes a line). A pane's
    worker computes them with its cells, so a new result's layout starts without a pass over its
    tokens on the GUI thread (for 10 MB, a third of a second at load)."""
    cum = np.zeros(len(widths) + 1, dtype=np.float64)
    np.cumsum(widths + CELL_GAP, dtype=np.float64, out=cum[1:])  # float64 sums of float32 widths too
    breaks = np.flatnonzero(newlines)
    return cum, breaks.astype(np.int32) if len(widths) < np.iinfo(np.int32).max else breaks


class CellWidths:
    """The cell widths a `line_columns` sum was made of, read back from it: `cum[i + 1] - cum[i]`
    is token i's width plus the gap, exactly (widths are multiples of 1/64 pixel, and float64
    sums of them are exact far beyond any text), so a pane keeps the sum alone, not the widths
    beside it too (4 bytes a token: 5 MB for four 1 MB panes). Indexed as the array was: an
    index gives a float, a slice an array.

    >>> cum, _ = line_columns(np.array([7.5, 12.015625, 3.0], dtype=np.float32), np.zeros(3))
    >>> widths = CellWidths(cum)
    >>> len(widths), widths[1], widths[-1], widths[0:2].tolist(), widths[::-2].tolist(), widths[2:1].tolist()
    (3, 12.015625, 3.0, [7.5, 12.015625], [3.0, 7.5], [])
    """

    def __init__(self, cum: np.ndarray) -> None:
        self._cum = cum

    def __len__(self) -> int:
        return len(self._cum) - 1

    def __getitem__(self, index: int | slice) -> Any:
        value = self._cum[1:][index] - self._cum[:-1][index] - CELL_GAP  # numpy's indexing, on views
        return float(value) if np.ndim(value) == 0 else value


class TokenLayout:
    """Greedy wrapping of cells into lines of at most `wrap_width` pixels, computed incrementally.

    Where a line starting at token s ends does not depend on the lines before it, so that is
    computed for a chunk of tokens at a time in numpy (a `searchsorted` for the wrap, one for the
    next newline); the chain of line starts through the chunk is then followed in numpy too, by
    pointer doubling (`_chain`), so no Python code runs per line (following it one line per step
    was half of a 1 MB pane's 90 ms of layout, all of it on the GUI thread). No per-token Python
    object is kept (a list of 300k floats was 10 MB per pane).

    >>> lay = TokenLayout(np.array([10.0, 10.0, 10.0]), np.array([0, 1, 0]), wrap_width=100)
    >>> lay.advance(); lay.line_starts.tolist()
    True
    [0, 2]
    """

    def __init__(self, widths: np.ndarray | CellWidths, newlines: np.ndarray, *, wrap_width: float,
                 columns: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.widths = widths
        self.count = len(widths)
        self.wrap_width = max(float(wrap_width), 1.0)
        self.cum_array, self._breaks = columns if columns is not None else line_columns(widths[0:self.count], newlines)
        self._newlines = newlines
        # an array, not a list: 4 bytes a line instead of ~40 (a pointer and an int object; 8 MB
        # for the 218k lines of four 1 MB panes); it appends, indexes and bisects as a list does
        self.line_starts = array("i", [0] if self.count else [])
        self._next = 0  # first token not yet placed
        self.done = self.count == 0

    def _line_ends(self, first: int) -> tuple[np.ndarray, np.ndarray]:
        """For every token s of the chunk from `first`: where a line starting at s ends, and how
        many empty lines follow it ("\n\n")."""
        n, cum, breaks = self.count, self.cum_array, self._breaks
        s = np.arange(first, min(first + CHUNK, n), dtype=np.int64)
        wrap = np.searchsorted(cum, cum[s] + (self.wrap_width + CELL_GAP), side="right") - 1
        end = np.minimum(np.maximum(wrap, s + 1), n)
        extra = np.zeros(len(s), dtype=np.int64)
        if len(breaks):
            k = np.searchsorted(breaks, s, side="left")
            has = k < len(breaks)
            b = breaks[np.minimum(k, len(breaks) - 1)]
            cut = has & (b < end)
            end = np.where(cut, b + 1, end)
            extra[cut] = self._newlines[b[cut]].astype(np.int64) - 1
        return end, extra

    def advance(self, budget_s: float | None = None) -> bool:
        """Place more lines (all of them without a budget); return True once every token is placed."""
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        starts = self.line_starts
        n, s = self.count, self._next
        while s < n:
            end, extra = self._line_ends(s)
            on_chain = _chain(end - s, len(end))  # the chunk's line starts, from s (local)
            ends, extras = end[on_chain], extra[on_chain]
            # a line ending at e starts the next line at e, after `extra` empty lines ("\n\n")
            starts.extend(np.repeat(ends, np.where(extras > 0, extras + 1, ends < n)).tolist())
            s = int(ends[-1])
            if deadline is not None and time.perf_counter() > deadline:
                break
        if s >= n and n and self._newlines[n - 1] and starts[-1] != n:
            starts.append(n)  # a text ending in a newline shows an empty last line
        self._next = s
        self.done = s >= n
        return self.done

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def line_range(self, line: int) -> range:
        """Token indices on `line`."""
        start = self.line_starts[line]
        end = self.line_starts[line + 1] if line + 1 < len(self.line_starts) else self._next
        return range(start, end)

    def line_of(self, token: int) -> int:
        """The line holding token index `token` (which must already be placed)."""
        return max(bisect_right(self.line_starts, token) - 1, 0)

    def x_of(self, token: int, line: int) -> float:
        """x of a token within its line."""
        cum = self.cum_array
        return float(cum[token] - cum[self.line_starts[line]])

    def placed(self) -> int:
        """How many tokens have been placed so far."""
        return self._next

    def token_at(self, line: int, x: float) -> int | None:
        """The token under x on `line`, or None in a gap / past the end."""
        if not 0 <= line < len(self.line_starts):
            return None
        rng = self.line_range(line)
        if not rng:
            return None
        cum = self.cum_array
        base = float(cum[rng.start])
        i = int(np.searchsorted(cum, base + x, side="right")) - 1
        if i < rng.start or i >= rng.stop:
            return None
        if x > float(cum[i]) - base + float(self.widths[i]):
            return None  # in the gap after the cell
        return i


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
