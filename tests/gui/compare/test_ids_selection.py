"""The ids view selects in place, as text does: drag across the ids, Shift+arrows, Ctrl+A, and
Ctrl+C copies the selected ids (`[15339, 1917]`)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication

TEXT = "hello world, again and again, said the token view"
Key, Mod = Qt.Key, Qt.KeyboardModifier


def _ids_pane(qtbot, make_window):
    window = make_window(["cl100k_base"], TEXT, mode="ids")
    pane = window.panes[0]
    assert pane.result.options.mode == "ids"
    assert [c.label for c in pane.result.cells] == [str(t.id) for t in pane.result.tokens]
    pane.view.setFocus()
    qtbot.waitUntil(pane.view.hasFocus)
    return window, pane


def _centre(view, index: int) -> QPoint:
    return view.cell_rect(index).center().toPoint()


def _copied(qtbot, view) -> str:
    qtbot.keyClick(view, Key.Key_C, Mod.ControlModifier)
    return QGuiApplication.clipboard().text()


def test_dragging_across_ids_selects_them_and_ctrl_c_copies_them(qtbot, make_window) -> None:
    window, pane = _ids_pane(qtbot, make_window)
    view, ids = pane.view, [t.id for t in pane.result.tokens]
    port = view.viewport()
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=_centre(view, 1))
    qtbot.mouseMove(port, _centre(view, 3))
    qtbot.mouseMove(port, _centre(view, 4))
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=_centre(view, 4))
    assert view.selection == range(1, 5)
    assert _copied(qtbot, view) == "[" + ", ".join(map(str, ids[1:5])) + "]"
    assert "copied ids of 4 tokens" in window.statusBar().currentMessage()
    qtbot.mouseMove(port, _centre(view, 6))  # the button is up: moving no longer selects
    assert view.selection == range(1, 5)


def test_dragging_backwards_and_past_a_line_end(qtbot, make_window) -> None:
    _, pane = _ids_pane(qtbot, make_window)
    view = pane.view
    port = view.viewport()
    last = len(pane.result.tokens) - 1
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=_centre(view, 5))
    qtbot.mouseMove(port, _centre(view, 2))
    assert view.selection == range(2, 6)
    end = view.cell_rect(last)
    qtbot.mouseMove(port, QPoint(int(end.right()) + 30, int(end.center().y())))  # past the last id
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton)
    assert view.selection == range(5, last + 1)


def test_shift_arrows_extend_and_ctrl_a_selects_every_id(qtbot, make_window) -> None:
    window, pane = _ids_pane(qtbot, make_window)
    view, ids = pane.view, [t.id for t in pane.result.tokens]
    window.select_token(pane, 2)
    view.setFocus()
    qtbot.keyClick(view, Key.Key_Right, Mod.ShiftModifier)
    qtbot.keyClick(view, Key.Key_Right, Mod.ShiftModifier)
    assert view.selection == range(2, 5)
    qtbot.keyClick(view, Key.Key_Left, Mod.ShiftModifier)
    assert view.selection == range(2, 4)
    assert _copied(qtbot, view) == f"[{ids[2]}, {ids[3]}]"
    qtbot.keyClick(view, Key.Key_End, Mod.ShiftModifier)
    assert view.selection == range(2, len(ids))
    qtbot.keyClick(view, Key.Key_A, Mod.ControlModifier)
    assert view.selection == range(0, len(ids))
    assert _copied(qtbot, view) == "[" + ", ".join(map(str, ids)) + "]"
    qtbot.keyClick(view, Key.Key_Right)  # without Shift an arrow moves a single selection again
    assert len(view.selection) == 1
