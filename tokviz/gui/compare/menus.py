"""The compare window's menus: File, Edit, Samples, View, Tokenizers, Tools.

The menus know the window only through `MenuHost` (what they call), so this module does not import
the window module that builds them; the Tools menu is built by the window's `ToolWindows`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QInputDialog, QMenu, QMenuBar

from tokviz.core.resources import samples
from tokviz.gui.compare.add_menu import AddMenu
from tokviz.gui.compare.cells import VIEW_MODES
from tokviz.gui.compare.diff_mode import DiffMode
from tokviz.gui.compare.export_copy import COPY_SHORTCUTS, COPY_TITLES, CopyWhat
from tokviz.gui.compare.find_bar import FindBar
from tokviz.gui.compare.pane import TokenPane
from tokviz.gui.tools.menu import ToolWindows
from tokviz.gui.widgets.theme import icon
from tokviz.model.compare import CompareModel


class MenuHost(Protocol):
    """What the menus need of the compare window."""

    model: CompareModel
    find_bar: FindBar
    legend_action: QAction
    diff: DiffMode

    @property
    def panes(self) -> Sequence[TokenPane]: ...
    def menuBar(self) -> QMenuBar: ...  # noqa: N802 (Qt's name)
    def close(self) -> bool: ...
    def choose_text_file(self) -> None: ...
    def choose_vocab_file(self) -> None: ...
    def choose_export_file(self) -> None: ...
    def load_sample(self, name: str) -> None: ...
    def add_pane(self, spec: str) -> TokenPane: ...
    def offer_fetch(self) -> None: ...
    def remove_pane(self, pane: TokenPane) -> None: ...
    def move_pane(self, pane: TokenPane, delta: int) -> None: ...
    def current_pane(self) -> TokenPane | None: ...
    def copy_from_pane(self, what: CopyWhat) -> None: ...


#: shortcuts of the Tokenizers menu; remove and move act on the current pane (the focused one,
#: else the one with a selection, else the first)
PANE_SHORTCUTS = {"add": "Ctrl+T", "remove": "Ctrl+W", "left": "Alt+Shift+Left", "right": "Alt+Shift+Right"}


def build_menus(window: MenuHost, tools: ToolWindows) -> None:
    """Fill the window's menu bar."""
    _file_menu(window)
    _edit_menu(window)
    _samples_menu(window)
    _view_menu(window)
    _tokenizers_menu(window)
    tools.build_menu(window.menuBar())


def _file_menu(w: MenuHost) -> None:
    menu = w.menuBar().addMenu("&File")
    menu.addAction(icon("open"), "&Open text file…", QKeySequence.StandardKey.Open, w.choose_text_file)
    menu.addAction(icon("add"), "Open &vocabulary…", w.choose_vocab_file)
    menu.addSeparator()
    menu.addAction("&Export comparison…", QKeySequence("Ctrl+E"), w.choose_export_file)
    menu.addSeparator()
    menu.addAction("&Quit", QKeySequence.StandardKey.Quit, w.close)


def _edit_menu(w: MenuHost) -> None:
    """Copy from the current pane; Ctrl+C stays the editor's and the focused pane's own."""
    menu = w.menuBar().addMenu("&Edit")
    for what, title in COPY_TITLES.items():
        action = menu.addAction(title, partial(w.copy_from_pane, what))
        if what != "text" and COPY_SHORTCUTS[what]:
            action.setShortcut(QKeySequence(COPY_SHORTCUTS[what]))
    menu.addSeparator()
    menu.addAction("&Find in the text…", QKeySequence.StandardKey.Find, lambda: w.find_bar.open("text"))
    menu.addAction("&Go to token id…", QKeySequence("Ctrl+G"), lambda: w.find_bar.open("id"))


def _samples_menu(w: MenuHost) -> None:
    menu = w.menuBar().addMenu("&Samples")
    try:
        items = samples()
    except Exception as e:  # missing resources: say so in the menu instead of failing
        menu.addAction(f"(samples unavailable: {e})").setEnabled(False)
        return
    for sample in items:
        menu.addAction(sample.title, partial(w.load_sample, sample.file))


def _view_menu(w: MenuHost) -> None:
    menu = w.menuBar().addMenu("&View")
    model = w.model
    _toggle(menu, "Visible &whitespace", model.options.visible_whitespace,
            lambda on: model.change_options(visible_whitespace=on))
    _toggle(menu, "Colour by token &id", model.options.color_by_id, lambda on: model.change_options(color_by_id=on))
    menu.addSeparator()
    group = QActionGroup(menu)
    for mode, title in zip(VIEW_MODES, ("&Text", "I&ds", "&Both")):
        action = QAction(title, menu, checkable=True, checked=model.options.mode == mode)
        action.triggered.connect(lambda _=False, m=mode: model.change_options(mode=m))
        group.addAction(action)
        menu.addAction(action)
    menu.addSeparator()
    menu.addAction("Context &limit…", lambda: _ask_context_limit(w))
    menu.addAction(w.diff.action)
    _toggle(menu, "&Synchronized scrolling", model.sync_scroll, lambda on: setattr(model, "sync_scroll", on))
    menu.addAction(w.legend_action)


def _toggle(menu: QMenu, title: str, checked: bool, slot: Callable[[bool], object]) -> QAction:
    """A checkable action of `menu` that calls `slot` with its new state."""
    action = QAction(title, menu, checkable=True, checked=checked)
    action.toggled.connect(slot)
    menu.addAction(action)
    return action


def _ask_context_limit(w: MenuHost) -> None:
    limit, ok = QInputDialog.getInt(
        w.menuBar().window(), "Context limit",
        "Mark where a context of this many tokens ends in every pane (0: no mark):",
        w.model.context_limit or 4096, 0, 10_000_000, 256,
    )
    if ok:
        w.model.set_context_limit(limit)


def _tokenizers_menu(w: MenuHost) -> None:
    menu = w.menuBar().addMenu("&Tokenizers")
    # every catalog format's backend ships with tokviz: what is available can be loaded
    add = AddMenu(w.add_pane, lambda entry: entry.available, w.choose_vocab_file, parent=menu)
    menu.addMenu(add)
    pick = menu.addAction(icon("add"), "Add a &tokenizer…", QKeySequence(PANE_SHORTCUTS["add"]),
                          lambda: _pop_up_beside(w.menuBar(), menu, add))
    pick.setStatusTip("open the Add menu from the keyboard")
    menu.addAction(icon("open"), "Add from &file…", w.choose_vocab_file)
    menu.addAction("&Fetch catalog vocabularies…", w.offer_fetch)
    menu.addSeparator()
    acts: list[tuple[str, str, str, Callable[[TokenPane], object]]] = [
        ("Remove the current pane", "&Remove", "remove", w.remove_pane),
        ("Move the current pane left", "Move &left", "left", lambda p: w.move_pane(p, -1)),
        ("Move the current pane right", "Move &right", "right", lambda p: w.move_pane(p, 1)),
    ]
    for title, _, key, act in acts:
        menu.addAction(title, QKeySequence(PANE_SHORTCUTS[key]), partial(_on_current_pane, w, act))
    for _, title, key, act in acts:
        sub = menu.addMenu(title)
        if key == "remove":
            sub.setIcon(icon("remove"))
        sub.aboutToShow.connect(partial(_fill_pane_menu, sub, w, act))


def _pop_up_beside(bar: QMenuBar, menu: QMenu, sub: QMenu) -> None:
    """Show `sub` under its menu's title in the menu bar (the Add menu, from its shortcut)."""
    sub.popup(bar.mapToGlobal(bar.actionGeometry(menu.menuAction()).bottomLeft()))


def _on_current_pane(w: MenuHost, act: Callable[[TokenPane], object]) -> None:
    pane = w.current_pane()
    if pane is not None:
        act(pane)


def _fill_pane_menu(menu: QMenu, w: MenuHost, act: Callable[[TokenPane], object]) -> None:
    menu.clear()
    for pane in w.panes:
        menu.addAction(pane.title.text(), partial(act, pane))
