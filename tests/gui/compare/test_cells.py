"""The Qt-free cell model and layout: what each token cell shows and how lines break."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokviz.analysis.notation import token_tooltip
from tokviz.core.encoding import TokenTable
from tokviz.core.tokens import Token, TokenKind, display_text, hex_bytes
from tokviz.gui.compare import token_layout
from tokviz.gui.compare.cells import ViewOptions, cell_for, cells_for, table_cells
from tokviz.gui.compare.token_layout import CELL_GAP, LineBreaks, TokenLayout, TokenWidths, covering


@pytest.fixture(scope="module")
def monkeypatch_chunk():
    """Set token_layout.CHUNK for a test (hypothesis runs many examples in one test call)."""
    saved = token_layout.CHUNK

    def set_chunk(size: int) -> None:
        token_layout.CHUNK = size

    yield set_chunk
    token_layout.CHUNK = saved


FRAGMENT = Token(51461, b" \xe6\xa0", 0, 3, 0, 2, TokenKind.FRAGMENT, "Ġæł")
SPECIAL = Token(100257, b"<|endoftext|>", 0, 13, 0, 13, TokenKind.SPECIAL, "<|endoftext|>")


def test_fragment_cell_carries_hex_and_replacement_char() -> None:
    cell = cell_for(FRAGMENT, ViewOptions())
    assert cell.kind is TokenKind.FRAGMENT
    assert cell.hex == "20 e6 a0"
    assert cell.label == display_text(FRAGMENT.bytes) == "·\ufffd"
    assert not cell.pill


def test_special_cell_is_a_labelled_pill() -> None:
    cell = cell_for(SPECIAL, ViewOptions())
    assert cell.pill and cell.label == "<|endoftext|>" and cell.hex == ""


def test_modes_and_whitespace() -> None:
    newline = Token(198, b"\n", 0, 1, 0, 1, TokenKind.NORMAL, "Ċ")
    assert cell_for(newline, ViewOptions()).label == "↵"
    assert cell_for(newline, ViewOptions(visible_whitespace=False)).label == ""
    assert cell_for(newline, ViewOptions()).newlines == 1
    assert cell_for(FRAGMENT, ViewOptions(mode="ids")).label == "51461"
    both = cell_for(FRAGMENT, ViewOptions(mode="both"))
    assert both.sub == "51461" and both.hex == "20 e6 a0"


def test_cells_are_shared_per_id_and_bytes() -> None:
    cells = cells_for([FRAGMENT, SPECIAL, FRAGMENT], ViewOptions())
    assert cells[0] is cells[2] and cells[0] is not cells[1]


_ROW_BYTES = st.one_of(
    st.binary(max_size=5),
    st.text(alphabet="a \t\n\r\x07\xa0\u0301\ufe0f\u200d\uffff根👨", max_size=4).map(str.encode),
)
_ROWS = st.lists(st.tuples(st.integers(0, 200_000), _ROW_BYTES, st.sampled_from(list(TokenKind)),
                           st.sampled_from(["", "<|x|>", "Ġa"])), max_size=12)


@given(_ROWS, st.sampled_from(["text", "ids", "both"]), st.booleans())
def test_table_cells_are_each_rows_cell(rows, mode, visible) -> None:
    """The cells made column by column are `cell_for`'s, row by row: labels, hex, ids, pills,
    newlines, whitespace shown or not."""
    rows = list({(i, data): (i, data, kind, piece) for i, data, kind, piece in rows}.values())
    table = TokenTable.of_rows(rows)
    options = ViewOptions(mode=mode, visible_whitespace=visible)
    expected = [cell_for(Token(i, data, 0, 0, 0, 0, kind, piece), options) for i, data, kind, piece in rows]
    assert table_cells(table, options) == expected


def test_tooltip_names_id_piece_bytes_span_kind() -> None:
    text = token_tooltip(FRAGMENT, 7, text=" 根")
    for part in ("token #7", "id 51461", "fragment", "piece: Ġæł", "bytes: 20 e6 a0 (3)", "chars 0–2",
                 "U+6839 CJK UNIFIED IDEOGRAPH-6839"):
        assert part in text
    lines = text.splitlines()
    assert lines[1] == "text: '·\ufffd'" and lines[2] == "piece: Ġæł"  # decoded first, spelling second


def test_tooltip_names_invisible_characters() -> None:
    vs16 = Token(9468, "\u2764\ufe0f".encode(), 0, 6, 0, 2, TokenKind.NORMAL, "âĿ¤ï¸ı")
    text = token_tooltip(vs16)
    assert "text: '❤⟨VS16⟩'" in text
    assert "U+FE0F VARIATION SELECTOR-16" in text and "U+2764 HEAVY BLACK HEART" in text


def test_layout_breaks_after_newlines_and_wraps() -> None:
    widths = np.full(6, 10.0)
    newlines = np.array([0, 2, 0, 0, 0, 0])
    layout = TokenLayout(widths, newlines, wrap_width=25)  # two cells (10 + gap 2 each) per line
    assert layout.advance()
    assert layout.line_starts.tolist() == [0, 2, 2, 4]  # "\n\n" leaves an empty line
    assert [list(layout.line_range(i)) for i in range(4)] == [[0, 1], [], [2, 3], [4, 5]]
    assert layout.line_of(3) == 2 and layout.token_at(2, 13) == 3 and layout.token_at(2, 11) is None


def test_layout_in_slices_equals_layout_at_once() -> None:
    rng = np.random.default_rng(1)
    widths = rng.uniform(5, 60, 60_000)  # a few chunks (a slice places whole chunks)
    newlines = (rng.uniform(size=60_000) < 0.05).astype(np.int32)
    whole = TokenLayout(widths, newlines, wrap_width=300)
    whole.advance()
    sliced = TokenLayout(widths, newlines, wrap_width=300)
    steps = 0
    while not sliced.advance(0.0):
        steps += 1
    assert steps > 1 and sliced.line_starts == whole.line_starts


def greedy_lines(widths: list[int], newlines: list[int], wrap: int) -> list[int]:
    """The wrapping rule, one token at a time: a line takes tokens while they fit (each with its
    gap), at least one, and ends after a token holding newlines (each newline past the first
    leaves an empty line); a text ending in a newline has an empty last line."""
    n = len(widths)
    starts = [0] if n else []
    s = 0
    while s < n:
        e = s + 1
        while e < n and sum(widths[s:e + 1]) + CELL_GAP * (e + 1 - s) <= wrap + CELL_GAP:
            e += 1
        broken = [i for i in range(s, e) if newlines[i]]
        if broken:
            e = broken[0] + 1
            if newlines[broken[0]] > 1:
                starts += [e] * newlines[broken[0]]
            elif e < n:
                starts.append(e)
        elif e < n:
            starts.append(e)
        s = e
    if n and newlines[-1] and starts[-1] != n:
        starts.append(n)
    return starts


@given(st.lists(st.tuples(st.integers(0, 40), st.sampled_from([0, 0, 0, 0, 1, 2, 3])), max_size=120),
       st.integers(1, 150), st.integers(1, 9))
def test_layout_is_the_greedy_rule_at_any_chunk_size(monkeypatch_chunk, cells, wrap, chunk) -> None:
    widths, newlines = [w for w, _ in cells], [k for _, k in cells]
    monkeypatch_chunk(chunk)
    layout = TokenLayout(np.array(widths, dtype=np.float64), np.array(newlines, dtype=np.int32), wrap_width=wrap)
    while not layout.advance(0.0):
        pass
    assert layout.line_starts.tolist() == greedy_lines(widths, newlines, wrap)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=40), st.integers(0, 60), st.integers(0, 60))
def test_covering_equals_brute_force(lengths: list[int], a: int, b: int) -> None:
    ends = np.cumsum(lengths)
    starts = ends - np.array(lengths)
    got = set(covering(starts, ends, a, b))
    lo, hi = (a, b) if b > a else (a, a + 1)
    assert got == {i for i, (s, e) in enumerate(zip(starts, ends)) if s < hi and e > lo}


def test_model_modules_do_not_import_qt() -> None:
    code = (
        "import sys, tokviz.gui.compare.cells, tokviz.gui.compare.token_layout, tokviz.gui.compare.offsets;"
        "assert 'PySide6' not in sys.modules, 'Qt imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_hex_label_matches_core() -> None:
    assert cell_for(FRAGMENT, ViewOptions()).hex == hex_bytes(FRAGMENT.bytes)


def test_many_void_qt_calls_do_not_abort_the_interpreter() -> None:
    """shiboken6 6.12.0 on Python 3.11 drops a reference to None per void call and aborts the
    interpreter after a few thousand (pyproject pins it out); this guards the pin."""
    code = (
        "import tokviz.gui\n"
        "from PySide6.QtGui import QGuiApplication, QImage, QPainter, QColor\n"
        "from PySide6.QtCore import QRectF\n"
        "app = QGuiApplication([])\n"
        "img = QImage(8, 8, QImage.Format.Format_ARGB32)\n"
        "p = QPainter(img)\n"
        "for _ in range(300_000):\n"
        "    p.fillRect(QRectF(0, 0, 2, 2), QColor(1, 2, 3))\n"
        "p.end()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_doctests_of_the_gui_helpers() -> None:
    import doctest

    import tokviz.gui.compare.cells
    import tokviz.gui.compare.offsets
    import tokviz.gui.compare.token_layout
    import tokviz.gui.trainer.trained_list

    for module in (tokviz.gui.compare.cells, tokviz.gui.compare.offsets,
                   tokviz.gui.compare.token_layout, tokviz.gui.trainer.trained_list):
        failed, tried = doctest.testmod(module)
        assert tried and not failed, module.__name__


def global_lines(widths: np.ndarray, newlines: np.ndarray, wrap: float) -> tuple[list[int], np.ndarray]:
    """The greedy lines from one running sum over the whole text (what the layout did when it
    kept an x per token), and that sum: the reference for a layout that sums chunk by chunk."""
    cum = np.concatenate([[0.0], np.cumsum(widths + CELL_GAP)])
    n, starts, s = len(widths), [0], 0
    breaks = np.flatnonzero(newlines)
    while s < n:
        end = min(max(int(np.searchsorted(cum, cum[s] + wrap + CELL_GAP, side="right")) - 1, s + 1), n)
        k = int(np.searchsorted(breaks, s))
        if k < len(breaks) and breaks[k] < end:
            end = int(breaks[k]) + 1
            starts += [end] * int(newlines[breaks[k]] - 1)
        if end < n or (newlines[n - 1] and starts[-1] != n):
            starts.append(end)
        s = end
    return starts, cum


@pytest.mark.parametrize("wrap", [60.0, 333.0, 5000.0])
def test_lines_summed_chunk_by_chunk_are_those_of_one_running_sum(wrap):
    """Lines that cross the layout's chunks (up to ~1400 tokens a line at the widest wrap), cut
    where one sum over the whole text cuts them, with the same x for every token."""
    rng = np.random.default_rng(7)
    table = rng.integers(0, 40 * 64, 500) / 64  # widths in 1/64 px, as Qt measures them, some 0
    index = rng.integers(0, 500, 70_000).astype(np.uint16)
    newlines = np.where(rng.uniform(size=70_000) < 0.002, rng.integers(1, 4, 70_000), 0)
    widths = TokenWidths(table, index)
    layout = TokenLayout(widths, LineBreaks.from_counts(newlines), wrap_width=wrap)
    while not layout.advance(0.0):  # one chunk a call
        pass
    starts, cum = global_lines(table[index], newlines, wrap)
    assert layout.line_starts.tolist() == starts and layout.line_count > 50
    for line in (0, 1, layout.line_count // 2, layout.line_count - 2):
        rng_ = layout.line_range(line)
        expected = cum[rng_.start:rng_.stop] - cum[rng_.start]
        assert layout.line_xs(line).tolist() == expected.tolist()  # exactly: sums of 1/64 px
        if len(rng_):
            last = rng_.stop - 1
            assert layout.x_of(last, line) == expected[-1]
            assert layout.token_at(line, float(expected[-1]) + widths[last] / 2) == last
    plain = TokenLayout(table[index], newlines, wrap_width=wrap)  # a width per token, newline counts
    assert plain.advance() and plain.line_starts == layout.line_starts


def test_widths_measured_later_are_measured_a_slice_at_a_time_and_lay_out_as_measured_ones():
    """A layout given no time left measures one cell a call ahead of its next chunk, and places
    a chunk only once its cells are measured: every call ends, and the lines are those of the
    widths measured up front. Each cell is measured once, and only cells some token shows."""
    rng = np.random.default_rng(11)
    table = rng.integers(1, 40 * 64, 600) / 64
    index = rng.integers(0, 500, 40_000).astype(np.uint16)  # cells 500-599 shown by no token
    newlines = np.where(rng.uniform(size=40_000) < 0.01, 1, 0)
    calls: list[int] = []

    def measurer():
        return lambda cell: (calls.append(cell), float(table[cell]))[1]

    later = TokenWidths.measured_later(list(range(600)), index, measurer)
    layout = TokenLayout(later, LineBreaks.from_counts(newlines), wrap_width=400.0)
    first: int | None = None
    rounds = 0
    while not layout.advance(0.0):
        rounds += 1
        assert rounds < 10_000
        if layout.placed() and first is None:
            first = len(calls)  # cells measured before the first lines were placed
    assert rounds >= 500  # a call per cell measured
    from tokviz.gui.compare.token_layout import FIRST_CHUNK

    assert first == len(set(index[: FIRST_CHUNK + layout._longest].tolist())) < 500  # the first screenful's
    assert sorted(calls) == sorted(set(index.tolist())) and later.unmeasured == 100
    up_front = TokenLayout(TokenWidths(table, index), LineBreaks.from_counts(newlines), wrap_width=400.0)
    assert up_front.advance() and up_front.line_starts == layout.line_starts
