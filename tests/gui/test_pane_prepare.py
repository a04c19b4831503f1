"""A pane's cells: fragment runs are joined once per distinct run, with exactly the cells and
widths `join_fragments` gives over the whole text."""

from __future__ import annotations

import numpy as np
import pytest

from tokviz.core.columns import TokenColumns
from tokviz.core.encode_server import encode
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import ViewOptions, cell_for, join_fragments
from tokviz.gui.compare.pane_worker import prepare

TEXT = ("안녕하세요 세계 " * 30 + "根据 👨‍👩‍👧 ﬁn ｈｉ\r\n" * 20 + "é" * 7 + "ok") * 3


def reference(cols, options, measurer):
    tokens = TokenColumns(cols)
    cells = [cell_for(t, options) for t in tokens]
    widths = np.array([measurer.width(c) for c in cells])
    fragments = [i for i, c in enumerate(cells) if c.hex]
    for i, cell in join_fragments(tokens, cells, fragments, options).items():
        cells[i] = cell
        widths[i] = measurer.width(cell)
    return cells, widths


@pytest.mark.parametrize("name", ["cl100k_base", "mistral-7b-v0.1"])
@pytest.mark.parametrize("visible", [True, False])
def test_cells_are_the_whole_texts_joined_cells(qapp, vocab, name, visible):
    cols = encode(vocab(name), TEXT, SpecialPolicy())
    options = ViewOptions(visible_whitespace=visible)
    _, cells, widths, _ = prepare(cols, options, CellMeasurer(Fonts.default()))
    expected_cells, expected_widths = reference(cols, options, CellMeasurer(Fonts.default()))
    assert sum(c.cont for c in cells) > 10  # the text has characters cut across tokens
    assert cells == expected_cells
    assert widths.tolist() == expected_widths.tolist()


@pytest.mark.parametrize("name", ["cl100k_base", "mistral-7b-v0.1"])
def test_a_panes_widths_read_back_from_the_line_sum_are_the_measured_ones(qapp, vocab, name):
    from tokviz.gui.compare.token_layout import CellWidths, line_columns

    cols = encode(vocab(name), TEXT * 4, SpecialPolicy())
    _, _, widths, newlines = prepare(cols, ViewOptions(), CellMeasurer(Fonts.default()))
    kept = CellWidths(line_columns(widths, newlines)[0])
    n = len(widths)
    assert len(kept) == n and len(set(widths.tolist())) > 10  # widths of many sizes, not a few
    assert kept[0 : n].tolist() == widths.tolist()  # exactly, not approximately
    assert [kept[i] for i in range(n)] == widths.tolist()
    assert kept[-1] == widths[-1] and kept[n - 7 : n - 2].tolist() == widths[n - 7 : n - 2].tolist()
    assert kept[::-3].tolist() == widths[::-3].tolist() and kept[5:2].tolist() == []
    with pytest.raises(IndexError):
        kept[n]


def test_the_cell_index_a_pane_keeps_is_two_bytes_a_token_when_the_cells_fit(qapp, vocab):
    from tokviz.core.encode_server import compact

    cols = compact(encode(vocab("cl100k_base"), TEXT, SpecialPolicy()))
    _, cells, _, _ = prepare(cols, ViewOptions(), CellMeasurer(Fonts.default()))
    assert cols.key_index.dtype == np.uint16
    assert cells._index.dtype == np.uint16 and sum(c.cont for c in cells) > 10
    expected_cells, _ = reference(cols, ViewOptions(), CellMeasurer(Fonts.default()))
    assert cells == expected_cells
