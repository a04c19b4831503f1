"""The compare window's menus: File, Samples, View, Tokenizers, Tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QActionGroup, QKeySequence

from tokviz.core import catalog
from tokviz.gui.compare.cells import VIEW_MODES
from tokviz.gui.widgets.theme import icon

if TYPE_CHECKING:
    from tokviz.gui.compare.window import MainWindow


def build_menus(window: "MainWindow") -> None:
    _file_menu(window)
    _samples_menu(window)
    _view_menu(window)
    _tokenizers_menu(window)
    from tokviz.gui.tools.menu import build_tools_menu

    build_tools_menu(window)


def _file_menu(w: "MainWindow") -> None:
    menu = w.menuBar().addMenu("&File")
    menu.addAction(icon("open"), "&Open text file…", QKeySequence.StandardKey.Open, w.choose_text_file)
    menu.addAction(icon("add"), "Open &vocabulary…", w.choose_vocab_file)
    menu.addSeparator()
    menu.addAction("&Quit", QKeySequence.StandardKey.Quit, w.close)


def _samples_menu(w: "MainWindow") -> None:
    menu = w.menuBar().addMenu("&Samples")
    try:
        from tokviz.core.resources import samples

        items = samples()
    except Exception as e:  # missing resources: say so in the menu instead of failing
        menu.addAction(f"(samples unavailable: {e})").setEnabled(False)
        return
    for sample in items:
        menu.addAction(sample.title, lambda s=sample: w.load_sample(s.file))


def _view_menu(w: "MainWindow") -> None:
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
    sync = menu.addAction("&Synchronized scrolling")
    sync.setCheckable(True)
    sync.setChecked(w.sync_scroll)
    sync.toggled.connect(lambda on: setattr(w, "sync_scroll", on))


def _ask_context_limit(w: "MainWindow") -> None:
    from PySide6.QtWidgets import QInputDialog

    limit, ok = QInputDialog.getInt(
        w, "Context limit", "Mark where a context of this many tokens ends in every pane (0: no mark):",
        w.context_limit or 4096, 0, 10_000_000, 256,
    )
    if ok:
        w.set_context_limit(limit)


def _tokenizers_menu(w: "MainWindow") -> None:
    menu = w.menuBar().addMenu("&Tokenizers")
    add = menu.addMenu(icon("add"), "&Add")
    from tokviz.gui.compare.window import loadable

    try:
        entries = catalog.entries()
    except Exception as e:
        add.addAction(f"(catalog unreadable: {e})").setEnabled(False)
        entries = []
    for entry in entries:
        action = add.addAction(f"{entry.name} — {entry.title}", lambda n=entry.name: w.add_pane(n))
        action.setEnabled(loadable(entry))
    menu.addAction(icon("open"), "Add from &file…", w.choose_vocab_file)
    menu.addAction("&Fetch catalog vocabularies…", w.offer_fetch)
    remove = menu.addMenu(icon("remove"), "&Remove")
    remove.aboutToShow.connect(lambda: _fill_pane_menu(remove, w, w.remove_pane))
    left = menu.addMenu("Move &left")
    left.aboutToShow.connect(lambda: _fill_pane_menu(left, w, lambda p: w.move_pane(p, -1)))
    right = menu.addMenu("Move &right")
    right.aboutToShow.connect(lambda: _fill_pane_menu(right, w, lambda p: w.move_pane(p, 1)))


def _fill_pane_menu(menu, w: "MainWindow", act) -> None:
    menu.clear()
    for pane in w.panes:
        menu.addAction(pane.title.text(), lambda p=pane: act(p))
