"""A pane's cells: fragment runs are joined once per distinct run, with exactly the cells and
widths `join_fragments` gives over the whole text."""

from __future__ import annotations

import numpy as np
import pytest

from tokviz.core.resources import samples
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import ViewOptions, cell_for, join_fragments
from tokviz.gui.compare.pane_result import prepare
from tokviz.service.server import encode

TEXT = ("안녕하세요 세계 " * 30 + "根据 👨‍👩‍👧 ﬁn ｈｉ\r\n" * 20 + "é" * 7 + "ok") * 3


def reference(cols, options, measurer):
    tokens = cols
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
    _, cells, widths, _ = prepare(cols, options, Fonts.default())
    expected_cells, expected_widths = reference(cols, options, CellMeasurer(Fonts.default()))
    assert sum(c.cont for c in cells) > 10  # the text has characters cut across tokens
    assert cells == expected_cells
    assert widths[0:len(widths)].tolist() == expected_widths.tolist()


#: the shipped samples (every script and oddity they hold), special-token text, whitespace of
#: every kind, and runs of cut characters long enough to fill several packed words
MIXED = "\n".join(s.read_text() for s in samples()) + (
    "<|endoftext|> <s>\t\r\n\u00a0\u3000\u200d" + "\U0001f9ec\u0df4\u1b60" * 9 + "\x07 ok \n\n"
) * 3


@pytest.mark.parametrize("name", ["cl100k_base", "qwen", "mistral-7b-v0.1"])
@pytest.mark.parametrize("options", [ViewOptions(), ViewOptions(visible_whitespace=False), ViewOptions(mode="both"),
                                     ViewOptions(mode="ids")], ids=["text", "hidden", "both", "ids"])
def test_cells_made_column_by_column_are_each_tokens_cell(qapp, vocab, name, options):
    """The cells `prepare` makes from the table and the distinct runs are those made token by
    token (`cell_for`, then `join_fragments` over the whole text): specials, fragments,
    byte-fallback pieces, whitespace, ids."""
    cols = encode(vocab(name), MIXED, SpecialPolicy.parse("all")).compact()
    _, cells, _, breaks = prepare(cols, options, Fonts.default())
    tokens = list(cols)
    expected = [cell_for(t, options) for t in tokens]
    fragments = [i for i, c in enumerate(expected) if c.hex]
    for i, cell in join_fragments(tokens, expected, fragments, options).items():
        expected[i] = cell
    assert any(c.pill for c in expected) and (options.mode == "ids" or sum(c.cont for c in expected) > 10)
    assert cells == expected
    assert breaks.at.tolist() == [i for i, c in enumerate(expected) if c.newlines]


@pytest.mark.parametrize("name", ["cl100k_base", "mistral-7b-v0.1"])
def test_a_panes_widths_are_its_cells_measured_widths(qapp, vocab, name):
    """A pane keeps one width per distinct cell: read per token they are each cell's own."""
    cols = encode(vocab(name), TEXT * 4, SpecialPolicy())
    measurer = CellMeasurer(Fonts.default())
    _, cells, widths, breaks = prepare(cols, ViewOptions(), Fonts.default())
    n = len(widths)
    measured = [measurer.width(c) for c in cells]
    assert len(cells) == n and len(set(measured)) > 10  # widths of many sizes, not a few
    assert widths[0:n].tolist() == measured and [widths[i] for i in range(n)] == measured
    assert widths[-1] == measured[-1] and widths[::-3].tolist() == measured[::-3] and widths[5:2].tolist() == []
    assert len(widths.table) < n / 5  # one width per distinct cell, not per token
    assert breaks.at.tolist() == [i for i, c in enumerate(cells) if c.newlines]
    assert breaks.count.tolist() == [c.newlines for c in cells if c.newlines]
    with pytest.raises(IndexError):
        widths[n]


def test_the_thread_that_prepares_measures_nothing_the_thread_that_reads_does(qapp, vocab):
    """Qt's font cache is per thread: the preparing thread leaves every width to the GUI thread,
    which reads (measures) a cell's width once, the first time, and its widths are the fonts'."""
    import threading

    cols = encode(vocab("cl100k_base"), TEXT, SpecialPolicy())
    prepared = []
    thread = threading.Thread(target=lambda: prepared.append(prepare(cols, ViewOptions(), Fonts.default())))
    thread.start()
    thread.join()
    _, cells, widths, _ = prepared[0]
    distinct = widths.unmeasured
    assert distinct == len(cells._cells) > 10  # nothing measured on the preparing thread
    first = widths[0:20].tolist()
    assert 0 < widths.unmeasured < distinct  # the read measured the cells it read, no more
    measurer = CellMeasurer(Fonts.default())
    assert first == [measurer.width(c) for c in cells[0:20]]
    assert widths[0:len(widths)].tolist() == [measurer.width(c) for c in cells]
    assert widths.unmeasured > 0  # cells no token shows (the fragments of joined runs) are never measured
    assert widths.table.tolist() == [measurer.width(c) for c in cells._cells] and widths.unmeasured == 0


def test_the_cell_index_a_pane_keeps_is_two_bytes_a_token_when_the_cells_fit(qapp, vocab):
    cols = encode(vocab("cl100k_base"), TEXT, SpecialPolicy()).compact()
    _, cells, _, _ = prepare(cols, ViewOptions(), Fonts.default())
    assert cols.key_index.dtype == np.uint16
    assert cells._index.dtype == np.uint16 and sum(c.cont for c in cells) > 10
    expected_cells, _ = reference(cols, ViewOptions(), CellMeasurer(Fonts.default()))
    assert cells == expected_cells


def test_a_cell_column_reads_any_slice_as_a_list_does():
    from tokviz.gui.compare.pane_result import CellColumn

    cells = list("abcdefgh")
    keys = np.array([0, 1, 2, 3, 4], dtype=np.uint16)
    plain, joined = CellColumn(cells, keys), CellColumn(cells, np.array([0, 6, 2, 7, 4], dtype=np.int32))
    for column, expected in ((plain, list("abcde")), (joined, list("agche"))):
        for sl in (slice(None, None, -1), slice(None, None, 2), slice(-2, None), slice(3, 0, -1), slice(4, 1)):
            assert column[sl] == expected[sl], sl
