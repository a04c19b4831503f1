"""The compare window's diff mode with real tokenizers: marks, agreement, stretches, jumping."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.gui.conftest import TIMEOUT_MS, wait_ready
from tokviz.analysis.diff import diff_texts
from tokviz.core import catalog
from tokviz.gui.compare.diff_mode import compute_diff

KOREAN = "대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다. hello world"


def wait_diff(qtbot, window) -> None:
    qtbot.waitUntil(lambda: window.diff.outcome is not None and all(
        p.result is r for p, r in zip(window.panes, window.diff.outcome.results)
    ) and len(window.diff.outcome.results) == len(window.panes), timeout=TIMEOUT_MS)


def test_two_panes_marks_agreement_and_stretches(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base"], KOREAN)
    window.set_diff_mode(True)
    wait_diff(qtbot, window)
    outcome = window.diff.outcome
    expected = diff_texts(KOREAN, [catalog.load("cl100k_base"), catalog.load("o200k_base")])
    assert outcome.agreement == expected.agreement and 0 < outcome.agreement[1] < 100
    assert outcome.n_stretches == expected.count_stretches(0, 1) > 0
    # each pane marks exactly its cuts that the other pane does not make
    for i, pane in enumerate(window.panes):
        own = np.setdiff1d(expected.cuts[i], expected.cuts[1 - i])
        marked = pane.view.boundary_marks
        starts = [] if marked is None else [pane.view.tokens[k].start for k in marked.tolist()]
        assert starts == own.tolist()
    assert window.panes[0].view.boundary_marks is not None  # cl100k cuts 대|한
    assert window.editor.extraSelections()  # the differing stretches underlined
    panel = window.diff.panel
    assert "o200k_base: " in panel.summary.text() and "% of boundaries agree with cl100k_base" in panel.summary.text()
    assert panel.stretch_list.count() == outcome.n_stretches + 1  # a heading, then one row each
    first = next(expected.stretches(0, 1))
    row = panel.stretch_list.item(1)
    assert row.text().startswith(f"chars {first.start}-{first.end} ")
    panel._on_item(row)  # what a click does
    assert window.selected_chars() == (first.start, first.end)
    left = window.panes[0].view
    assert [left.tokens[k] for k in left.highlighted] == first.left


def test_identical_ids_are_stated_plainly(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "cl100k_base"], KOREAN)
    window.set_diff_mode(True)
    wait_diff(qtbot, window)
    panel = window.diff.panel
    assert panel.summary.text() == "identical: cl100k_base and cl100k_base give the same ids for this text"
    assert panel.stretch_list.isHidden()
    assert all(p.view.boundary_marks is None for p in window.panes)


def test_reference_choice_new_text_and_off(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base", "r50k_base"], KOREAN)
    window.set_diff_mode(True)
    wait_diff(qtbot, window)
    window.diff.set_reference(2)
    qtbot.waitUntil(lambda: window.diff.outcome.reference == 2, timeout=TIMEOUT_MS)
    tokenizers = [catalog.load(n) for n in ("cl100k_base", "o200k_base", "r50k_base")]
    assert window.diff.outcome.agreement == diff_texts(KOREAN, tokenizers, reference=2).agreement
    assert window.diff.panel.stretch_list.isHidden()  # stretches are listed for two panes only
    window.set_text("도시 city")
    wait_ready(qtbot, window)
    wait_diff(qtbot, window)
    assert window.diff.outcome.results[0].text == "도시 city"
    window.set_diff_mode(False)
    assert all(p.view.boundary_marks is None for p in window.panes)
    assert window.editor.extraSelections() == [] and window.diff.panel.isHidden()


class _Result:
    """What compute_diff reads of a pane's result: its tokens, text length and token starts."""

    def __init__(self, tokenizer, text: str) -> None:

        self.tokens = tokenizer.encode_columns(text)
        self.n_chars = len(text)
        self.starts = self.tokens.starts


TEXTS = st.text(alphabet=st.sampled_from(list("ab c\n대한민국🦙é.,")), max_size=60)


@settings(max_examples=40, deadline=None)
@given(text=TEXTS)
def test_a_pane_against_itself_marks_nothing_and_panes_are_symmetric(vocab, text) -> None:
    a, b = _Result(vocab("cl100k_base"), text), _Result(vocab("o200k_base"), text)
    same = compute_diff(None, [a, a], 0)
    assert same.identical == [True, True] and same.agreement == [100.0, 100.0]
    assert same.n_stretches == 0 and [len(m) for m in same.marks] == [0, 0] and len(same.editor_ranges) == 0
    ab, ba = compute_diff(None, [a, b], 0), compute_diff(None, [b, a], 0)
    assert ab.agreement[1] == ba.agreement[1]
    assert [m.tolist() for m in ab.marks] == [m.tolist() for m in reversed(ba.marks)]
    assert ab.editor_ranges.tolist() == ba.editor_ranges.tolist()
    assert [(s, e) for s, e, _, _ in ab.stretches] == [(s, e) for s, e, _, _ in ba.stretches]


def test_the_view_menu_shows_the_mode_switched_on_elsewhere(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base"], KOREAN)
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    action = next(a for a in view.actions() if a.text().startswith("&Diff mode"))
    window.set_diff_mode(True)  # as `tokviz --diff` does
    view.aboutToShow.emit()
    assert action.isChecked() and window.diff_mode_on()
    action.setChecked(False)  # the menu switches it off
    assert not window.diff_mode_on() and window.diff.panel.isHidden()


def test_stretches_read_as_the_panes_draw_them(qtbot, make_window) -> None:
    # cl100k cuts Korean syllables into byte fragments: a stretch writes each character once, in the
    # token holding its first byte, with every token's hex kept, exactly as the pane's cells draw it
    window = make_window(["cl100k_base", "o200k_base"], KOREAN)
    window.set_diff_mode(True)
    wait_diff(qtbot, window)
    panel, left = window.diff.panel, window.panes[0].view
    rows = [panel.stretch_list.item(k).text() for k in range(1, panel.stretch_list.count())]
    fragmented = 0
    for (start, _end, tokens, _), row in zip(window.diff.outcome.stretches, rows):
        first = left.token_for_char(start)
        cells = [left.cell(first + k) for k in range(len(tokens))]
        drawn = "".join(f"[{c.label}⟨{c.hex}⟩]" if c.hex else f"[{c.label}]" for c in cells)
        assert f"cl100k_base: {drawn}  " in row
        fragmented += any(c.cont for c in cells)
    assert fragmented  # the text has characters cut across tokens, each written once
    assert not any("�⟨" in row for row in rows)  # no lone U+FFFD where the run makes a character


def test_stretches_follow_the_visible_whitespace_option(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base"], KOREAN)
    window.set_diff_mode(True)
    wait_diff(qtbot, window)
    panel = window.diff.panel

    def rows() -> list[str]:
        return [panel.stretch_list.item(k).text() for k in range(1, panel.stretch_list.count())]

    window.set_options(visible_whitespace=True)
    shown = rows()
    assert any("·" in row for row in shown)  # the spaces of the Korean text, as the panes draw them
    window.set_options(visible_whitespace=False)
    hidden = rows()
    assert len(hidden) == len(shown) and not any("·" in row for row in hidden)
