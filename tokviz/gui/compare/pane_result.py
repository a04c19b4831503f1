"""What a pane draws for one text (`PaneResult`), and how an encoding becomes one (`prepare`).

`prepare` runs off the GUI thread, which waits for the GIL whenever Python code runs here. So
nothing runs once per token, nor a Python call per distinct token or run: the distinct tokens'
cells are made column by column (`table_cells`), the fragment runs grouped by packed keys and
read together (`fragment_run_labels`); what is left in Python is one short step per new cell.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from tokviz.analysis.notation import fragment_run_labels
from tokviz.core.encoding import Encoding, TokenTable, token_ids
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import Token
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import Cell, ViewOptions, shown_labels, table_cells
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
    cells = table_cells(cols.table, options)
    newlines = np.fromiter((c.newlines for c in cells), dtype=np.int32, count=len(cells))
    hexed = np.fromiter((bool(c.hex) for c in cells), dtype=bool, count=len(cells))
    ki = cols.key_index
    fragments = np.flatnonzero(hexed[ki])
    index = _join_fragment_runs(cols.table, cells, fragments, ki, options)
    widths = TokenWidths.measured_later(cells, index, lambda: CellMeasurer(fonts).width)
    return cols, CellColumn(cells, index), widths, LineBreaks.from_counts(narrowed(newlines, np.uint8)[ki])


def _join_fragment_runs(table: TokenTable, cells: list[Cell], fragments: np.ndarray, key_index: np.ndarray,
                        options: ViewOptions) -> np.ndarray:
    """The cell index of every token once each run of neighbouring fragment cells has its
    joined cells (`join_fragments`); the joined cells are appended to `cells`, each distinct one once.

    A run's cells follow from its tokens' keys alone, so they are made once per distinct run
    (`_distinct_runs`), all distinct runs read together (`fragment_run_labels`); every fragment
    token then takes the cell of the same place in its run's distinct run."""
    if not len(fragments):
        return key_index
    breaks = np.flatnonzero(np.diff(fragments) != 1) + 1
    firsts = fragments[np.concatenate([[0], breaks])]
    lengths = np.diff(np.concatenate([[0], breaks, [len(fragments)]]))
    group, shown = _distinct_runs(key_index, firsts, lengths, len(table))
    # the tokens of the distinct runs, run after run (`offsets`: where each run begins among them)
    shown_lengths = lengths[shown]
    offsets = np.cumsum(shown_lengths) - shown_lengths
    keys = key_index[np.repeat(firsts[shown] - offsets, shown_lengths) + np.arange(int(shown_lengths.sum()))]
    keys = keys.tolist()
    labels, cont = fragment_run_labels([table.datas[k] for k in keys], shown_lengths,
                                       visible_whitespace=options.visible_whitespace)
    cell_of = np.array(keys, dtype=np.int64)
    made: dict[tuple[int, str, bool], int] = {}
    for j, (k, label, continues) in enumerate(zip(keys, shown_labels(labels, options), cont.tolist())):
        own = cells[k]
        if label != own.label or continues != own.cont:
            at = made.get((k, label, continues))
            if at is None:
                at = made[(k, label, continues)] = len(cells)
                cells.append(Cell(label, own.hex, own.sub, own.kind, own.newlines, continues))
            cell_of[j] = at
    run_of = np.repeat(np.arange(len(firsts)), lengths)
    index = key_index.astype(np.int32)
    index[fragments] = cell_of[offsets[group[run_of]] + fragments - firsts[run_of]]
    return narrowed(index, np.uint16)


def _distinct_runs(key_index: np.ndarray, firsts: np.ndarray, lengths: np.ndarray, n_keys: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Which distinct run each run (`firsts`, `lengths`) is, and for each distinct run the first
    run that is it. Runs are compared by their keys packed into 64-bit words (padded with the
    key `n_keys`, which no token has, so runs of other lengths differ): runs of one word by one
    `np.unique` over integers, longer ones by rows of words, a group per number of words."""
    bits = n_keys.bit_length()
    per_word = max(1, 63 // bits)
    shifts = bits * np.arange(per_word, dtype=np.int64)
    words = (lengths + per_word - 1) // per_word
    group = np.empty(len(firsts), dtype=np.int64)
    shown: list[np.ndarray] = []
    count = 0
    for width in np.unique(words).tolist():
        runs = np.flatnonzero(words == width)
        place = np.arange(width * per_word)
        at = np.minimum(firsts[runs][:, None] + place, len(key_index) - 1)
        keys = np.where(place < lengths[runs][:, None], key_index[at].astype(np.int64), n_keys)
        packed = (keys.reshape(len(runs), width, per_word) << shifts).sum(axis=2)
        if width == 1:
            _, first, which = np.unique(packed[:, 0], return_index=True, return_inverse=True)
        else:
            _, first, which = np.unique(packed, axis=0, return_index=True, return_inverse=True)
        group[runs] = which.reshape(-1) + count
        shown.append(runs[first])
        count += len(first)
    return group, np.concatenate(shown)
