"""A large text goes into the editor by slices over event-loop turns (a 10 MB insertText froze
the window for over a second): the raw text stays exact, a paste is one undo step, the editor is
read-only meanwhile and says `textChanged` once, when the last slice is in."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData

from tests.gui.conftest import TIMEOUT_MS
from tokviz.gui.compare import editor as editor_module
from tokviz.gui.compare.editor import InputEditor

#: every character the editor holds through a stand-in, a surrogate-pair emoji and plain text
PIECE = "line one\r\nlone\rcr \ufeffbom\xa0nbsp \u2028ls\u2029ps \ufdd0\ufdd1 👋🏽 tail\n"


@pytest.fixture
def editor(qtbot, monkeypatch) -> InputEditor:
    monkeypatch.setattr(editor_module, "FILL_SLICE", 500)  # many slices from a small text
    widget = InputEditor()
    qtbot.addWidget(widget)
    widget.show()
    return widget


def held_text(editor: InputEditor) -> str:
    """The raw text read back from the document itself (not the remembered one)."""
    return editor.codec.decode(editor.document().toRawText())


def paste(editor: InputEditor, text: str) -> None:
    data = QMimeData()
    data.setText(text)
    editor.insertFromMimeData(data)


def test_a_large_paste_goes_in_by_slices_exactly(qtbot, editor) -> None:
    editor.set_raw_text("before|after")
    cursor = editor.textCursor()
    cursor.setPosition(7)
    editor.setTextCursor(cursor)
    big = PIECE * 60
    changes: list[int] = []
    editor.textChanged.connect(lambda: changes.append(1))
    paste(editor, big)
    assert editor.filling and editor.isReadOnly()
    assert editor.raw_text() == "before|" + big + "after"  # already the whole text
    assert len(held_text(editor)) < len(editor.raw_text())  # but not yet in the document
    with qtbot.waitSignal(editor.filled, timeout=TIMEOUT_MS):
        pass
    assert not editor.filling and not editor.isReadOnly()
    assert changes == [1]
    assert held_text(editor) == editor.raw_text() == "before|" + big + "after"
    after = 7 + len(big.encode("utf-16-le", "surrogatepass")) // 2
    assert editor.textCursor().position() == after and not editor.textCursor().hasSelection()
    editor.undo()  # one step takes the whole paste back
    assert editor.raw_text() == held_text(editor) == "before|after"
    editor.redo()
    assert editor.raw_text() == "before|" + big + "after"


def test_a_large_paste_over_a_selection_replaces_it(qtbot, editor) -> None:
    editor.set_raw_text("old\r\ntext")
    editor.selectAll()
    big = PIECE * 40
    paste(editor, big)
    with qtbot.waitSignal(editor.filled, timeout=TIMEOUT_MS):
        pass
    assert held_text(editor) == editor.raw_text() == big


def test_a_large_paste_holding_a_stand_in_is_exact(qtbot, editor) -> None:
    editor.set_raw_text("x")
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    big = "\ufdd2\ufdd3\ufdd4\ufdd5\ufdd6 " + PIECE * 40  # the first codec's own stand-ins
    paste(editor, big)
    if editor.filling:
        with qtbot.waitSignal(editor.filled, timeout=TIMEOUT_MS):
            pass
    assert held_text(editor) == editor.raw_text() == "x" + big
    assert editor.textCursor().position() == 1 + len(big.encode("utf-16-le", "surrogatepass")) // 2


def test_a_large_set_raw_text_has_no_undo_and_a_new_one_replaces_it(qtbot, editor) -> None:
    editor.set_raw_text("small")
    editor.set_raw_text(PIECE * 50)
    assert editor.filling
    editor.set_raw_text(PIECE * 30 + "!")  # a new text while the first goes in: the new one wins
    with qtbot.waitSignal(editor.filled, timeout=TIMEOUT_MS):
        pass
    assert held_text(editor) == editor.raw_text() == PIECE * 30 + "!"
    assert not editor.document().isUndoAvailable()  # like setPlainText
    assert editor.document().isUndoRedoEnabled()


def test_an_insert_during_a_fill_lands_after_it(qtbot, editor) -> None:
    editor.set_raw_text("")
    paste(editor, PIECE * 40)
    assert editor.filling
    editor.insert_raw("END")  # a program's insert while the paste goes in: the paste first
    assert not editor.filling
    assert held_text(editor) == editor.raw_text() == PIECE * 40 + "END"


def test_the_window_asks_the_panes_at_once_and_once_while_the_text_goes_in(qtbot, make_window, monkeypatch) -> None:
    from tests.gui.conftest import wait_ready

    monkeypatch.setattr(editor_module, "FILL_SLICE", 500)
    window = make_window(["cl100k_base"], "x")
    pane = window.panes[0]
    submitted: list[str] = []
    monkeypatch.setattr(pane, "_submit", lambda real=pane._submit: (submitted.append(pane.model.text), real()))
    big = PIECE * 40
    window.set_text(big)
    assert window.editor.filling and submitted == [big]  # the panes work while the editor fills
    window.flush_text()  # what the debounce timer would do meanwhile: the same text, not asked again
    wait_ready(qtbot, window)
    assert submitted == [big] and pane.result.text == big and window.editor.raw_text() == big


def test_a_large_paste_is_tokenized_as_it_begins_to_go_in(qtbot, make_window, monkeypatch) -> None:
    from tests.gui.conftest import wait_ready

    monkeypatch.setattr(editor_module, "FILL_SLICE", 500)
    window = make_window(["cl100k_base"], "x")
    wait_ready(qtbot, window)
    pane = window.panes[0]
    submitted: list[str] = []
    monkeypatch.setattr(pane, "_submit", lambda real=pane._submit: (submitted.append(pane.model.text), real()))
    big = PIECE * 40
    window.editor.selectAll()
    paste(window.editor, big)
    assert window.editor.filling and submitted == [big]
    with qtbot.waitSignal(window.editor.filled, timeout=TIMEOUT_MS):
        pass
    qtbot.waitUntil(lambda: not window._debounce.isActive() and pane.current, timeout=TIMEOUT_MS)
    assert submitted == [big] and pane.result.text == big  # the end of the paste asked nothing new


def test_a_large_text_with_a_stand_in_late_is_exact(qtbot, editor) -> None:
    text = PIECE * 40 + "\ufdd2 late stand-in " + PIECE * 10  # found only when its slice goes in
    editor.set_raw_text(text)
    with qtbot.waitSignal(editor.filled, timeout=TIMEOUT_MS):
        pass
    assert held_text(editor) == editor.raw_text() == text
    assert "\ufdd2" not in editor.codec.stand_ins


def test_a_text_set_by_slices_lays_out_what_one_insert_does(qtbot, editor) -> None:
    """The editor finds its scroll range once, when the last slice is in, and its own cursor stays
    at the start: no slice's end (lines nobody sees, their glyphs shaped and kept) is laid out,
    and the scroll range is the one the whole text inserted at once gives."""
    text = "".join(f"line {i} 根据 안녕 👋🏽 " * (1 + i % 7) + "\n" for i in range(400))
    whole = InputEditor()  # the same editor, the text inserted at once
    qtbot.addWidget(whole)
    whole.resize(editor.size())
    whole.show()
    whole.setPlainText(text)
    qtbot.waitExposed(whole)
    with qtbot.waitSignal(editor.filled, timeout=TIMEOUT_MS):
        editor.set_raw_text(text)
    qtbot.wait(1)  # the events the fill's end posted
    assert not editor.centerOnScroll() and editor.textCursor().position() == 0
    assert editor.verticalScrollBar().maximum() == whole.verticalScrollBar().maximum() > 100
    doc = editor.document()
    slice_ends = {doc.findBlock(len(text[:k].encode("utf-16-le", "surrogatepass")) // 2).blockNumber()
                  for k in range(500, len(text), 500)}
    assert len(slice_ends) > 50

    def laid_out(widget: InputEditor) -> list[int]:  # (layout() makes an empty one where there was none)
        return [n for n in sorted(slice_ends) if widget.document().findBlockByNumber(n).layout().lineCount()]

    assert laid_out(editor) == laid_out(whole)  # the first and last screenfuls' lines only
