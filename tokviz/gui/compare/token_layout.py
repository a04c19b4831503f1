"""Line breaking for the token view, done in slices so a 1 MB text never blocks for long.

Qt-free: it only sees cell widths (measured once per distinct cell, off the GUI thread) and the
newline count after each cell. A line is a run of consecutive tokens; the view paints only the
lines in its viewport and computes x positions for just those lines.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right

import numpy as np

CELL_GAP = 2.0  # pixels between neighbouring cells, so boundaries show even with equal colours


class TokenLayout:
    """Greedy wrapping of cells into lines of at most `wrap_width` pixels, computed incrementally.

    >>> lay = TokenLayout(np.array([10.0, 10.0, 10.0]), np.array([0, 1, 0]), wrap_width=100)
    >>> lay.advance(); lay.line_starts
    True
    [0, 2]
    """

    def __init__(self, widths: np.ndarray, newlines: np.ndarray, *, wrap_width: float) -> None:
        self.widths = widths
        self.count = len(widths)
        self.wrap_width = max(float(wrap_width), 1.0)
        # cum[i] = x of token i if all tokens were on one line; Python lists, because the
        # per-line loop below is bisect-bound and bisect on a list beats numpy's call overhead
        cum = np.zeros(self.count + 1, dtype=np.float64)
        np.cumsum(widths + CELL_GAP, out=cum[1:])
        self.cum_array = cum
        self._cum: list[float] = cum.tolist()
        self._breaks: list[int] = np.flatnonzero(newlines).tolist()  # tokens ending a line
        self._newlines = newlines
        self.line_starts: list[int] = [0] if self.count else []
        self._next = 0  # first token not yet placed
        self.done = self.count == 0

    def advance(self, budget_s: float | None = None) -> bool:
        """Place more lines (all of them without a budget); return True once every token is placed."""
        deadline = None if budget_s is None else time.perf_counter() + budget_s
        cum, breaks, starts = self._cum, self._breaks, self.line_starts
        n, s, room = self.count, self._next, self.wrap_width + CELL_GAP
        steps = 0
        while s < n:
            end = min(max(bisect_right(cum, cum[s] + room) - 1, s + 1), n)
            k = bisect_left(breaks, s)
            extra = 0
            if k < len(breaks) and breaks[k] < end:
                end = breaks[k] + 1
                extra = int(self._newlines[breaks[k]]) - 1
            if extra > 0:
                starts.extend([end] * extra)  # empty lines for "\n\n"
            if end < n or extra > 0:
                starts.append(end)
            s = end
            steps += 1
            if deadline is not None and steps % 128 == 0 and time.perf_counter() > deadline:
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
        return self._cum[token] - self._cum[self.line_starts[line]]

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
        base = self._cum[rng.start]
        i = bisect_right(self._cum, base + x) - 1
        if i < rng.start or i >= rng.stop:
            return None
        if x > self._cum[i] - base + self.widths[i]:
            return None  # in the gap after the cell
        return i


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
