"""Copying a pane's tokens: ids, `tokviz encode --json` records and text, from the context menu,
the Edit menu and Ctrl+C; the ids as selectable text."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QPlainTextEdit

from tokviz.cli import main
from tokviz.gui.compare.export_copy import IdsDialog, context_menu, copy_text


def _cli_json(capsys, text: str) -> list:
    capsys.readouterr()
    assert main(["encode", "--json", "-t", "cl100k_base", text]) == 0
    return json.loads(capsys.readouterr().out)


def test_copy_ids_json_and_text_of_a_shift_click_range(qtbot, make_window, capsys) -> None:
    window = make_window(["cl100k_base"], text="hello world, again")
    pane = window.panes[0]
    assert copy_text(pane, "ids") == "[15339, 1917, 11, 1578]"  # nothing selected: every token
    window.select_token(pane, 0)
    rect = pane.view.cell_rect(1)
    qtbot.mouseClick(pane.view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier,
                     rect.center().toPoint())
    assert pane.view.selection == range(0, 2)
    assert copy_text(pane, "ids") == "[15339, 1917]"
    assert copy_text(pane, "text") == "hello world"
    assert json.loads(copy_text(pane, "json")) == _cli_json(capsys, "hello world")
    window.copy_from_pane("ids")
    assert QGuiApplication.clipboard().text() == "[15339, 1917]"
    assert "copied ids of 2 tokens" in window.statusBar().currentMessage()


def test_context_menu_and_ctrl_c(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], text="hello world")
    pane = window.panes[0]
    window.select_token(pane, 1)
    menu = context_menu(pane, window.show_message)
    titles = [a.text().replace("&", "").split("\t")[0] for a in menu.actions() if a.text()]
    assert titles[:3] == ["Copy token ids (selected)", "Copy tokens as JSON (selected)",
                          "Copy the tokens' text (selected)"]
    menu.actions()[0].trigger()
    assert QGuiApplication.clipboard().text() == "[1917]"
    pane.view.setFocus()
    qtbot.waitUntil(pane.view.hasFocus)
    qtbot.keyClick(pane.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == " world"
    window.set_options(mode="ids")  # in the ids view, Ctrl+C copies ids (the selection stays)
    qtbot.waitUntil(lambda: pane.result is not None and pane.result.options.mode == "ids")
    qtbot.keyClick(pane.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "[1917]"


def test_ids_as_selectable_text(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], text="hello world")
    dialog = IdsDialog.for_source(window.panes[0])
    qtbot.addWidget(dialog)
    edit = dialog.findChild(QPlainTextEdit)
    assert edit.toPlainText() == "[15339, 1917]"
    assert edit.isReadOnly() and edit.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
