"""What a pane draws for one text (`PaneResult`), and how an encoding becomes one (`prepare`).

`prepare` runs off the GUI thread, which waits for the GIL whenever Python code runs here. So
nothing runs once per token, nor a Python call per distinct token or fragment run: the distinct
tokens' cells are made column by column (`table_cells`), and each fragment's joined cell once per
distinct key and context (`fragment_contexts`), all read together; what is left in Python is one
short step per new cell.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from tokviz.analysis.notation import CONTEXT_BITS, fragment_contexts, fragment_labels_in_context
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
    index = _join_fragment_runs(cols.table, cells, hexed, ki, options)
    widths = TokenWidths.measured_later(cells, index, lambda: CellMeasurer(fonts).width)
    return cols, CellColumn(cells, index), widths, LineBreaks.from_counts(narrowed(newlines, np.uint8)[ki])


def _join_fragment_runs(table: TokenTable, cells: list[Cell], hexed: np.ndarray, key_index: np.ndarray,
                        options: ViewOptions) -> np.ndarray:
    """The cell index of every token once each run of neighbouring fragment cells has its
    joined cells (`join_fragments`); the joined cells are appended to `cells`. `hexed`: per row
    of the table, whether its cell is a hex cell (a fragment's).

    A fragment's joined cell follows from its key and what it reads of its neighbours (its
    context: `fragment_contexts`, found for all fragments in whole-array passes), so it is made
    once per distinct (key, context), all of them read together (`fragment_labels_in_context`)."""
    fragments = np.flatnonzero(hexed[key_index])
    if not len(fragments):
        return key_index
    breaks = np.flatnonzero(np.diff(fragments) != 1) + 1
    run_lengths = np.diff(np.concatenate([[0], breaks, [len(fragments)]]))
    keys = key_index[fragments].astype(np.int64)
    contexts = fragment_contexts(*_bytes_of(table, np.flatnonzero(hexed), keys), run_lengths)
    _, first, which = np.unique((keys << CONTEXT_BITS) | contexts, return_index=True, return_inverse=True)
    shown = keys[first].tolist()
    labels, cont = fragment_labels_in_context([table.datas[k] for k in shown], contexts[first],
                                              visible_whitespace=options.visible_whitespace)
    cell_of = np.array(shown, dtype=np.int64)
    for j, (k, label, continues) in enumerate(zip(shown, shown_labels(labels, options), cont.tolist())):
        own = cells[k]
        if label != own.label or continues != own.cont:
            cell_of[j] = len(cells)
            cells.append(Cell(label, own.hex, own.sub, own.kind, own.newlines, continues))
    index = key_index.astype(np.int32)
    index[fragments] = cell_of[which.reshape(-1)]
    return narrowed(index, np.uint16)


def _bytes_of(table: TokenTable, rows: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of the rows `keys` of `table`, one after another, and each one's size: gathered
    with numpy from the bytes of `rows` (the sorted rows `keys` come from), not joined per token."""
    datas = [table.datas[k] for k in rows.tolist()]
    row_sizes = np.fromiter(map(len, datas), dtype=np.int64, count=len(datas))
    row_data = np.frombuffer(b"".join(datas), dtype=np.uint8)
    at = np.searchsorted(rows, keys)
    sizes = row_sizes[at]
    ends = np.cumsum(sizes)
    source = np.repeat(np.cumsum(row_sizes)[at] - ends, sizes) + np.arange(int(ends[-1]) if len(ends) else 0)
    return row_data[source], sizes
