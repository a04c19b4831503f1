"""The keyboard in the compare window: arrows move the selected token (with the linked highlight),
the focused pane shows it, and panes and tools have shortcuts shown in the menus."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog

from tests.gui.conftest import wait_ready
from tokviz.gui.compare.menus import PANE_SHORTCUTS
from tokviz.gui.tools.menu import SHORTCUTS

TEXT = "alpha beta gamma delta\n\nepsilon zeta eta theta\n"


def _action(window, shortcut: str):
    wanted = QKeySequence(shortcut)
    found = [a for a in window.findChildren(type(window.menuBar().actions()[0]))
             if a.shortcut() == wanted]
    assert found, shortcut
    return found[0]


def test_arrow_keys_move_the_selection_and_the_linked_highlight(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base"], TEXT)
    pane, other = window.panes
    pane.view.setFocus()
    qtbot.waitUntil(pane.view.hasFocus)
    qtbot.keyClick(pane.view, Qt.Key.Key_Right)  # no selection yet: the first token
    assert pane.view.selected == 0
    qtbot.keyClick(pane.view, Qt.Key.Key_Right)
    qtbot.keyClick(pane.view, Qt.Key.Key_Right)
    token = pane.result.tokens[2]
    assert pane.view.selected == 2 and pane.details.isVisibleTo(pane)
    assert window.selected_chars() == (token.start, token.end)  # the editor follows
    assert len(other.view.highlighted) > 0  # and so does the other pane's highlight
    qtbot.keyClick(pane.view, Qt.Key.Key_Left)
    assert pane.view.selected == 1
    qtbot.keyClick(pane.view, Qt.Key.Key_Down)  # over the blank line to the third line
    below = pane.result.tokens[pane.view.selected]
    assert TEXT.index("epsilon") <= below.start
    qtbot.keyClick(pane.view, Qt.Key.Key_Up)
    assert pane.result.tokens[pane.view.selected].end <= TEXT.index("\n")
    qtbot.keyClick(pane.view, Qt.Key.Key_End)
    assert pane.view.selected == len(pane.result.tokens) - 1
    qtbot.keyClick(pane.view, Qt.Key.Key_Home)
    assert pane.view.selected == 0


def test_the_focused_pane_is_marked(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base"], TEXT)
    first, second = window.panes
    first.view.setFocus()
    qtbot.waitUntil(lambda: first.property("focused") is True)
    second.view.setFocus()
    qtbot.waitUntil(lambda: second.property("focused") is True)
    assert first.property("focused") is False and second.title.property("focused") is True


def test_pane_shortcuts_act_on_the_current_pane(qtbot, make_window) -> None:
    window = make_window(["cl100k_base", "o200k_base", "qwen"], TEXT)
    window.panes[1].view.setFocus()
    qtbot.waitUntil(window.panes[1].view.hasFocus)
    _action(window, PANE_SHORTCUTS["left"]).trigger()
    assert [p.spec for p in window.panes] == ["o200k_base", "cl100k_base", "qwen"]
    _action(window, PANE_SHORTCUTS["remove"]).trigger()
    assert [p.spec for p in window.panes] == ["cl100k_base", "qwen"]
    assert _action(window, PANE_SHORTCUTS["add"]).text().startswith("Add a")
    wait_ready(qtbot, window)


def test_tool_shortcuts_open_the_tools(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], TEXT)
    before = set(window.findChildren(QDialog))
    _action(window, SHORTCUTS["vocabulary"]).trigger()
    opened = set(window.findChildren(QDialog)) - before
    assert any("cl100k_base" in d.windowTitle() for d in opened)
    for name in SHORTCUTS:
        assert _action(window, SHORTCUTS[name]).isEnabled()
    for dialog in opened:
        dialog.close()


def test_no_two_window_shortcuts_are_the_same_key(qtbot, make_window) -> None:
    # Qt fires neither of two window-wide actions on one key ("ambiguous shortcut"): each key is one action
    window = make_window(["cl100k_base", "o200k_base"], TEXT)
    owners: dict[str, list[str]] = {}
    for action in window.findChildren(type(window.menuBar().actions()[0])):
        if action.shortcut().isEmpty() or action.shortcutContext() != Qt.ShortcutContext.WindowShortcut:
            continue
        owners.setdefault(action.shortcut().toString(), []).append(action.text())
    assert owners and {key: names for key, names in owners.items() if len(names) > 1} == {}
