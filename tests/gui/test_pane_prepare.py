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
