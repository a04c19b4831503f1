"""The Tools menu: the dialogs that explain a cut (vocabulary, merge replay, pipeline), what it
costs (analysis), and what changes it (vocabulary extension, training).

Each per-pane action acts on one pane's tokenizer; a submenu lists the open panes when it opens.
Dialogs that outlive their action are kept on the window so they are not garbage-collected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtWidgets import QMenu

from tokviz.gui.widgets.theme import icon

if TYPE_CHECKING:
    from tokviz.gui.compare.window import MainWindow
    from tokviz.gui.compare.pane import TokenPane


def build_tools_menu(window: "MainWindow") -> QMenu:
    menu = window.menuBar().addMenu("T&ools")
    _pane_submenu(menu, window, "&Vocabulary of…", open_vocabulary)
    _pane_submenu(menu, window, "&Merge replay of the selection in…", open_replay)
    _pane_submenu(menu, window, "&Pipeline of the selection in…", open_pipeline)
    menu.addSeparator()
    menu.addAction("Token &cost and context…", lambda: open_analysis(window))
    menu.addAction("&Extend a vocabulary with words…", lambda: open_extend(window))
    menu.addAction(icon("train"), "&Train a vocabulary…", lambda: open_trainer(window))
    return menu


def _pane_submenu(menu: QMenu, window: "MainWindow", title: str, act: Callable) -> None:
    sub = menu.addMenu(title)

    def fill() -> None:
        sub.clear()
        for pane in window.panes:
            sub.addAction(pane.spec, lambda p=pane: act(window, p))
        if not window.panes:
            sub.addAction("(no tokenizer panes)").setEnabled(False)

    sub.aboutToShow.connect(fill)


def selection_or_text(window: "MainWindow") -> tuple[int, int] | None:
    """The editor's selected character range, or None for the whole text."""
    start, end = window.selected_chars()
    return (start, end) if end > start else None


def open_vocabulary(window: "MainWindow", pane: "TokenPane"):
    from tokviz.gui.tools.vocab_browser import open_vocab_browser

    tokens = pane.result.tokens if pane.result is not None else None
    dialog = open_vocab_browser(window, pane.spec, window.text(), tokens)
    dialog.browser.jump_to.connect(window.highlight_chars)
    return dialog


def open_replay(window: "MainWindow", pane: "TokenPane"):
    from tokviz.gui.tools.replay_dialog import open_replay_dialog

    view = open_replay_dialog(window, pane.spec, window.text(), policy=pane.policy,
                            selection=selection_or_text(window))
    view.jump_to.connect(window.highlight_chars)
    return view


def open_pipeline(window: "MainWindow", pane: "TokenPane"):
    from tokviz.gui.tools.pipeline_dialog import open_pipeline_dialog

    span = selection_or_text(window)
    text = window.text() if span is None else window.text()[span[0]:span[1]]
    return open_pipeline_dialog(window, pane.spec, text, policy=pane.policy)


def open_analysis(window: "MainWindow"):
    from tokviz.gui.tools.analysis_dialog import open_analysis as open_dialog

    dialog = getattr(window, "_analysis_dialog", None)
    specs = [p.spec for p in window.panes]
    if dialog is not None:
        dialog.close()
        dialog.deleteLater()
    dialog = window._analysis_dialog = open_dialog(window, specs, window.text())
    return dialog


def open_extend(window: "MainWindow"):
    from tokviz.core import catalog
    from tokviz.gui.tools.extend_dialog import open_extend_dialog

    base = next((p.spec for p in window.panes if (e := catalog.find(p.spec)) and e.format == "tiktoken"), None)
    dialog = getattr(window, "_extend_dialog", None)
    if dialog is None:
        dialog = window._extend_dialog = open_extend_dialog(window, base)
        dialog.extension_saved.connect(window.add_pane)
    else:
        dialog.show()
        dialog.raise_()
    return dialog


def open_trainer(window: "MainWindow"):
    from tokviz.gui.trainer.panel import TrainerDialog

    dialog = getattr(window, "_trainer_dialog", None)
    if dialog is None:
        dialog = window._trainer_dialog = TrainerDialog(window)
        dialog.panel.vocabulary_ready.connect(window.add_pane)
        dialog.panel.message.connect(window.show_message)
    dialog.panel.set_compare_text(window.text())
    dialog.show()
    dialog.raise_()
    return dialog
