"""The compare window's menus: File, Samples, View, Tokenizers, Tools.

The menus know the window only through `MenuHost` (what they call), so this module does not import
the window module that builds them; the Tools menu is built by the window's `ToolWindows`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QInputDialog, QMenu, QMenuBar

from tokviz.core import catalog
from tokviz.core.resources import samples
from tokviz.gui.compare.add_menu import AddMenu
from tokviz.gui.compare.cells import VIEW_MODES, ViewOptions
from tokviz.gui.compare.export_copy import COPY_SHORTCUTS, COPY_TITLES, CopyWhat
from tokviz.gui.compare.find_bar import FindBar
from tokviz.gui.compare.pane import TokenPane
from tokviz.gui.tools.menu import ToolWindows
from tokviz.gui.widgets.theme import icon


class MenuHost(Protocol):
    """What the menus need of the compare window."""

    sync_scroll: bool
    find_bar: FindBar
    legend_action: QAction

    @property
    def options(self) -> ViewOptions: ...
    @property
    def context_limit(self) -> int | None: ...
    @property
    def panes(self) -> Sequence[TokenPane]: ...
    def menuBar(self) -> QMenuBar: ...  # noqa: N802 (Qt's name)
    def close(self) -> bool: ...
    def choose_text_file(self) -> None: ...
    def choose_vocab_file(self) -> None: ...
    def choose_export_file(self) -> None: ...
    def load_sample(self, name: str) -> None: ...
    def set_options(self, **changes: object) -> None: ...
    def set_context_limit(self, limit: int | None) -> None: ...
    def set_diff_mode(self, on: bool) -> None: ...
    def diff_mode_on(self) -> bool: ...
    def can_load(self, entry: catalog.CatalogEntry) -> bool: ...
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
    """Copy from the current pane (the focused one, else the one with a selection, else the first);
    Ctrl+C stays the editor's and the focused pane's own."""
    menu = w.menuBar().addMenu("&Edit")
    for what, title in COPY_TITLES.items():
        shortcut = COPY_SHORTCUTS[what] if what != "text" else None
        action = menu.addAction(title, partial(w.copy_from_pane, what))
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
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
    ws = menu.addAction("Visible &whitespace")
    ws.setCheckable(True)
    ws.setChecked(w.options.visible_whitespace)
    ws.toggled.connect(lambda on: w.set_options(visible_whitespace=on))
    by_id = menu.addAction("Colour by token &id")
    by_id.setCheckable(True)
    by_id.setChecked(w.options.color_by_id)
    by_id.toggled.connect(lambda on: w.set_options(color_by_id=on))
    menu.addSeparator()
    group = QActionGroup(menu)
    for mode, title in zip(VIEW_MODES, ("&Text", "I&ds", "&Both")):
        action = QAction(title, menu, checkable=True)
        action.setChecked(w.options.mode == mode)
        action.triggered.connect(lambda _=False, m=mode: w.set_options(mode=m))
        group.addAction(action)
        menu.addAction(action)
    menu.addSeparator()
    menu.addAction("Context &limit…", lambda: _ask_context_limit(w))
    diff = menu.addAction("&Diff mode (where the panes cut differently)")
    diff.setCheckable(True)
    diff.toggled.connect(w.set_diff_mode)
    # the mode may be switched on without the menu (`tokviz --diff`): show its state when opened
    menu.aboutToShow.connect(lambda: diff.setChecked(w.diff_mode_on()))
    sync = menu.addAction("&Synchronized scrolling")
    sync.setCheckable(True)
    sync.setChecked(w.sync_scroll)
    sync.toggled.connect(lambda on: setattr(w, "sync_scroll", on))
    menu.addAction(w.legend_action)


def _ask_context_limit(w: MenuHost) -> None:
    limit, ok = QInputDialog.getInt(
        w.menuBar().window(), "Context limit",
        "Mark where a context of this many tokens ends in every pane (0: no mark):",
        w.context_limit or 4096, 0, 10_000_000, 256,
    )
    if ok:
        w.set_context_limit(limit)


def _tokenizers_menu(w: MenuHost) -> None:
    menu = w.menuBar().addMenu("&Tokenizers")
    add = AddMenu(w.add_pane, w.can_load, w.choose_vocab_file, parent=menu)
    menu.addMenu(add)
    pick = menu.addAction(icon("add"), "Add a &tokenizer…", QKeySequence(PANE_SHORTCUTS["add"]),
                          lambda: _pop_up_beside(w.menuBar(), menu, add))
    pick.setStatusTip("open the Add menu from the keyboard")
    menu.addAction(icon("open"), "Add from &file…", w.choose_vocab_file)
    menu.addAction("&Fetch catalog vocabularies…", w.offer_fetch)
    menu.addSeparator()
    for title, key, act in (
        ("Remove the current pane", "remove", w.remove_pane),
        ("Move the current pane left", "left", lambda p: w.move_pane(p, -1)),
        ("Move the current pane right", "right", lambda p: w.move_pane(p, 1)),
    ):
        menu.addAction(title, QKeySequence(PANE_SHORTCUTS[key]), partial(_on_current_pane, w, act))
    remove = menu.addMenu(icon("remove"), "&Remove")
    remove.aboutToShow.connect(lambda: _fill_pane_menu(remove, w, w.remove_pane))
    left = menu.addMenu("Move &left")
    left.aboutToShow.connect(lambda: _fill_pane_menu(left, w, lambda p: w.move_pane(p, -1)))
    right = menu.addMenu("Move &right")
    right.aboutToShow.connect(lambda: _fill_pane_menu(right, w, lambda p: w.move_pane(p, 1)))


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
