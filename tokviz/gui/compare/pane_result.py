"""What a pane draws for one text (`PaneResult`), and how an encoding becomes one (`prepare`).

`prepare` runs off the GUI thread: Python code runs once per distinct token and once per
distinct fragment run, never once per token, so it holds the GIL only in short numpy passes.
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
from tokviz.gui.compare.token_layout import LineBreaks, TokenWidths, narrowed


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
        """Every token's id, made when asked for (not kept)."""
        return token_ids(self.tokens)


class CellColumn(Sequence[Cell]):
    """A pane's cells without one reference per token: token i's cell is `cells[index[i]]`, where
    `cells` holds each distinct token's cell and the joined cells of fragment runs."""

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
    """Tokens, cells, widths and line breaks of an encoding. Per token only the cell column is kept
    (2 bytes a token where the cells fit uint16); widths are measured later, by the thread that
    draws."""
    cells = [cell_for(t, options) for t in cols.distinct_tokens()]
    newlines = np.array([c.newlines for c in cells], dtype=np.int32)
    ki = cols.key_index
    fragments = np.flatnonzero(np.array([bool(c.hex) for c in cells], dtype=bool)[ki])
    index = _join_fragment_runs(cols, cells, fragments, ki, options)
    widths = TokenWidths.measured_later(cells, index, lambda: CellMeasurer(fonts).width)
    return cols, CellColumn(cells, index), widths, LineBreaks.from_counts(narrowed(newlines, np.uint8)[ki])


def _join_fragment_runs(tokens: Encoding, cells: list[Cell], fragments: np.ndarray, key_index: np.ndarray,
                        options: ViewOptions) -> np.ndarray:
    """The cell index of every token once each run of neighbouring fragment cells has its
    joined cells (`join_fragments`); the joined cells are appended to `cells`.

    A run's cells follow from its tokens' keys alone, so they are made once per distinct run:
    the runs of each length are grouped by their keys (`np.unique` over rows), and each group's
    cells are put in place for all its runs at once."""
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
    index = key_index.astype(np.int32)
    index[np.concatenate(at)] = np.concatenate(value)
    return narrowed(index, np.uint16)
