"""What a pane draws for one text (`PaneResult`), and how an encoding becomes one (`prepare`).

`prepare` runs off the GUI thread (`tokviz.gui.compare.service.Preparer`): Python code runs once
per distinct token and once per distinct fragment run, never once per token, so a long text's
preparation holds the GIL in short numpy passes. Widths are measured later, by the thread that
draws (`TokenWidths.measured_later`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from tokviz.core.encoding import Encoding, token_ids
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import Token
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import Cell, ViewOptions, cell_for, join_fragments
from tokviz.gui.compare.token_layout import LineBreaks, TokenWidths


@dataclass
class PaneResult:
    """Everything a pane draws for one text: the core's tokens plus columns for fast lookups."""

    gen: int
    text: str
    policy: SpecialPolicy
    options: ViewOptions
    tokens: Sequence[Token]
    cells: Sequence[Cell]
    widths: np.ndarray | TokenWidths  # indexed alike (an index: a float; a slice: an array)
    breaks: LineBreaks  # the tokens that end a line with newlines
    starts: np.ndarray  # character spans, non-decreasing
    ends: np.ndarray
    n_bytes: int
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def n_chars(self) -> int:
        return len(self.text)

    @property
    def ids(self) -> np.ndarray:
        """Every token's id: made when asked for (from the key column, for columns), not kept."""
        return token_ids(self.tokens)


class CellColumn(Sequence[Cell]):
    """A pane's cells without a list of one reference per token: token i's cell is
    `cells[index[i]]`, where `cells` holds each distinct (id, bytes)'s cell and the joined cells
    of fragment runs, and `index` is the text's key column (another where runs are joined)."""

    def __init__(self, cells: list[Cell], index: np.ndarray) -> None:
        self._cells, self._index = cells, index

    def __len__(self) -> int:
        return len(self._index)

    @overload
    def __getitem__(self, index: int) -> Cell: ...
    @overload
    def __getitem__(self, index: slice) -> list[Cell]: ...

    def __getitem__(self, index: int | slice) -> Cell | list[Cell]:
        if isinstance(index, slice):
            return list(map(self._cells.__getitem__, self._index[index].tolist()))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("cell index out of range")
        return self._cells[int(self._index[index])]

    def __iter__(self) -> Iterator[Cell]:
        return iter(self[0 : len(self)])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CellColumn):
            other = list(other)
        return isinstance(other, list) and len(other) == len(self) and list(self) == other

    __hash__ = None  # type: ignore[assignment]


def prepare(cols: Encoding, options: ViewOptions, fonts: Fonts) -> tuple[
    Encoding, CellColumn, TokenWidths, LineBreaks
]:
    """Tokens, cells, widths and line breaks; Python code runs once per distinct (id, bytes)
    and once per distinct fragment run, never once per token (a loop or list over every token of
    a long text would hold this process's GIL for long stretches: a stall of the window).
    What is kept per token is the cell column alone (2 bytes a token where the cells number
    65536 or fewer): widths are one per cell, newlines one per line."""
    tokens = cols
    cells = [cell_for(t, options) for t in tokens.distinct_tokens()]
    unique_newlines = np.array([c.newlines for c in cells], dtype=np.int32)
    ki = cols.key_index
    fragments = np.flatnonzero(np.array([bool(c.hex) for c in cells], dtype=bool)[ki])
    index = _join_fragment_runs(tokens, cells, fragments, ki, options)
    widths = TokenWidths.measured_later(cells, index, lambda: CellMeasurer(fonts).width)  # by the thread that draws
    return tokens, CellColumn(cells, index), widths, LineBreaks.from_counts(narrowed(unique_newlines, np.uint8)[ki])


def narrowed(values: np.ndarray, dtype: type[np.generic]) -> np.ndarray:
    """`values` as the smaller `dtype` when every value survives the cast unchanged, else as they
    are: newline counts are small (uint8) and a 1 MB text's cells number tens of thousands
    (uint16), so the columns a pane's preparation makes per token take 1 and 2 bytes a token.

    >>> narrowed(np.array([7.5, 12.015625]), np.float32).dtype, narrowed(np.array([0.1]), np.float32).dtype
    (dtype('float32'), dtype('float64'))
    >>> narrowed(np.array([0, 3], dtype=np.int32), np.uint8).dtype, narrowed(np.array([300]), np.uint8).dtype
    (dtype('uint8'), dtype('int64'))
    """
    small = values.astype(dtype)  # a value that does not fit comes out changed (wrapped, rounded)
    return small if np.array_equal(small, values) else values


def _join_fragment_runs(tokens: Encoding, cells: list[Cell], fragments: np.ndarray, key_index: np.ndarray,
                        options: ViewOptions) -> np.ndarray:
    """The cell index of every token once each run of neighbouring fragment cells has its
    joined cells (`join_fragments`); the joined cells are appended to `cells`.

    A run's cells follow from its tokens' (id, bytes) alone, so they are made once per distinct
    run: the runs of each length are grouped by their keys in numpy (`np.unique` over rows), and
    each group's cells are put in place for all its runs at once. A 1 MB text has tens of
    thousands of fragment tokens in thousands of runs but a few hundred distinct ones (a Python
    loop over the runs, and a dict of one joined cell per token, was most of the preparation)."""
    if not len(fragments):
        return key_index
    breaks = np.flatnonzero(np.diff(fragments) != 1) + 1
    firsts = fragments[np.concatenate([[0], breaks])]
    lengths = np.diff(np.concatenate([[0], breaks, [len(fragments)]]))
    at: list[np.ndarray] = []  # the tokens whose cell is a joined one, and that cell
    value: list[np.ndarray] = []
    for length in np.flatnonzero(np.bincount(lengths)).tolist():
        places = firsts[lengths == length][:, None] + np.arange(length)  # (runs, length) token indices
        runs, first_of, which = np.unique(key_index[places], axis=0, return_index=True, return_inverse=True)
        joined = runs.astype(np.int32)
        for r, (keys, first) in enumerate(zip(runs.tolist(), places[first_of, 0].tolist())):
            own = [cells[k] for k in keys]
            local = join_fragments(tokens[first:first + length], own, range(length), options)
            for k, cell in local.items():
                if cell != own[k]:
                    joined[r, k] = len(cells)
                    cells.append(cell)
        cell_of = joined[which.reshape(-1)].ravel()
        places = places.ravel()
        changed = cell_of != key_index[places]
        at.append(places[changed])
        value.append(cell_of[changed])
    where, cell_of = np.concatenate(at), np.concatenate(value)
    index = key_index.astype(np.int32)
    index[where] = cell_of
    return narrowed(index, np.uint16)
