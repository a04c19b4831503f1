"""Ctrl+F finds text and lights up the covering tokens in every pane; Ctrl+G visits every
occurrence of a token id in the current pane."""

from __future__ import annotations

from PySide6.QtCore import Qt

TEXT = "the cat sat on the mat; The end of the line"


def test_find_text_highlights_covering_tokens_in_every_pane(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base"], TEXT)
    bar = window.find_bar
    window.findChild(type(window.menuBar())).setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert bar.isVisible() and bar.mode == "text"
    qtbot.keyClicks(bar.query, "the")
    assert bar.matches == [0, 15, 24, 35] and bar.status.text() == "1 of 4"
    qtbot.keyClick(bar.query, Qt.Key.Key_Return)
    assert window.selected_chars() == (15, 18)
    for pane in window.panes:
        covering = [pane.result.tokens[i] for i in pane.view.highlighted]
        assert covering and covering[0].start <= 15 and covering[-1].end >= 18
        assert "the" in "".join(t.text for t in covering)
    qtbot.keyClick(bar.query, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def test_go_to_id_lists_and_visits_every_occurrence(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], TEXT)
    pane = window.panes[0]
    the = next(t.id for t in pane.result.tokens if t.text == " the")
    where = [i for i, t in enumerate(pane.result.tokens) if t.id == the]
    assert len(where) == 2  # "The" is another token
    window.find_bar.open("id")
    qtbot.keyClicks(window.find_bar.query, str(the))
    assert window.find_bar.status.text() == "1 of 2 in cl100k_base: " + " ".join(f"#{i}" for i in where)
    assert pane.view.selected == where[0]
    for expected in (where[1], where[0]):
        window.find_bar.step(1)
        assert pane.view.selected == expected
    window.find_bar.query.setText("abc")
    assert window.find_bar.status.text() == "type a token id (a number)"
    window.find_bar.query.setText("99999")
    assert window.find_bar.status.text() == "not found in cl100k_base"
