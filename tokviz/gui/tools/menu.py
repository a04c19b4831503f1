"""The Tools menu: the dialogs that explain a cut (vocabulary, merge replay, pipeline), what it
costs (analysis), how the panes' vocabularies compare (overlap), and what changes it (vocabulary
extension, training).

`ToolWindows` belongs to one compare window: it builds the menu, opens each dialog on the window's
panes and text, and owns the dialogs that outlive their action (one analysis, one extension and one
trainer window, one overlap), so they are neither garbage-collected nor hung onto the window as loose attributes.
It knows the window only through `ToolHost`, what the tools need of it, so this package never
imports the compare window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeVar

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMenu, QMenuBar, QWidget

from tokviz.core import catalog
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import Token
from tokviz.gui.widgets.screen import fit_to_screen
from tokviz.gui.widgets.theme import icon

# The dialogs are imported when first opened: with what they import (the tokenizer backends,
# the trainer, the analyses) they would be memory of every window from its start.
if TYPE_CHECKING:
    from tokviz.gui.tools.analysis_dialog import AnalysisDialog
    from tokviz.gui.tools.extend_dialog import ExtendDialog
    from tokviz.gui.tools.overlap_dialog import OverlapDialog
    from tokviz.gui.tools.pipeline_dialog import PipelineDialog
    from tokviz.gui.tools.replay_dialog import ReplayDialog
    from tokviz.gui.trainer.panel import TrainerDialog

D = TypeVar("D", bound=QDialog)

#: the tools' shortcuts (shown in the Tools menu); the per-pane tools act on the current pane
SHORTCUTS = {"vocabulary": "Ctrl+Shift+V", "replay": "Ctrl+Shift+M", "pipeline": "Ctrl+Shift+P",
             "analysis": "Ctrl+Shift+A", "overlap": "Ctrl+Shift+O", "extend": "Ctrl+Shift+E",
             "trainer": "Ctrl+Shift+T"}


def on_screen(dialog: D) -> D:
    """`dialog`, fitted into its screen (the trainer opened 1300 px wide on a 1024 px screen)."""
    fit_to_screen(dialog)
    return dialog


class PaneTokens(Protocol):
    @property
    def tokens(self) -> Sequence[Token]: ...


class PaneView(Protocol):
    def token_for_char(self, char: int) -> int | None: ...
    def ensure_visible(self, index: int) -> None: ...


class ToolPane(Protocol):
    """What the tools read of a compare pane (`TokenPane`, which this package does not import)."""

    @property
    def spec(self) -> str: ...
    @property
    def policy(self) -> SpecialPolicy: ...
    @property
    def result(self) -> PaneTokens | None: ...
    @property
    def view(self) -> PaneView: ...


class ToolHost(Protocol):
    """What the tools need of the compare window."""

    @property
    def panes(self) -> Sequence[ToolPane]: ...
    def text(self) -> str: ...
    def selected_chars(self) -> tuple[int, int]: ...
    def highlight_chars(self, start: int, end: int) -> None: ...
    def add_pane(self, spec: str) -> object: ...
    def add_trained_pane(self, spec: str) -> object: ...
    def current_pane(self) -> ToolPane | None: ...  # the focused pane, else one with a selection, else the first
    def show_message(self, message: str) -> None: ...


class ToolWindows(QObject):
    """The tool dialogs of one compare window (`window`, which is also their Qt parent)."""

    def __init__(self, host: ToolHost, window: QWidget) -> None:
        super().__init__(window)
        self._host = host
        self._window = window
        self.analysis: AnalysisDialog | None = None
        self.extend: ExtendDialog | None = None
        self.overlap: OverlapDialog | None = None
        self.trainer: TrainerDialog | None = None

    def build_menu(self, bar: QMenuBar) -> QMenu:
        menu = bar.addMenu("T&ools")
        self._pane_submenu(menu, "&Vocabulary of…", self.open_vocabulary, SHORTCUTS["vocabulary"])
        self._pane_submenu(menu, "&Merge replay of the selection in…", self.open_replay, SHORTCUTS["replay"])
        self._pane_submenu(menu, "&Pipeline of the selection in…", self.open_pipeline, SHORTCUTS["pipeline"])
        menu.addSeparator()
        menu.addAction("Token &cost and context…", QKeySequence(SHORTCUTS["analysis"]), self.open_analysis)
        menu.addAction("Vocabulary &overlap…", QKeySequence(SHORTCUTS["overlap"]), self.open_overlap)
        menu.addAction("&Extend a vocabulary with words…", QKeySequence(SHORTCUTS["extend"]), self.open_extend)
        menu.addAction(icon("train"), "&Train a vocabulary…", QKeySequence(SHORTCUTS["trainer"]), self.open_trainer)
        return menu

    def _pane_submenu(self, menu: QMenu, title: str, act: Callable[[ToolPane], object], shortcut: str) -> None:
        """A submenu of the panes, led by the current pane (the focused or selected one) with the
        tool's shortcut: the action lives in the window, so the shortcut works with the menu shut."""
        sub = menu.addMenu(title)
        current = QAction("Current pane", self._window, shortcut=QKeySequence(shortcut))
        current.triggered.connect(lambda: self._on_current(act))
        self._window.addAction(current)

        def fill() -> None:
            sub.clear()
            pane = self._host.current_pane()
            current.setText(f"Current pane ({pane.spec})" if pane is not None else "Current pane")
            current.setEnabled(pane is not None)
            sub.addAction(current)
            sub.addSeparator()
            for pane in self._host.panes:
                sub.addAction(pane.spec, partial(act, pane))
            if not self._host.panes:
                sub.addAction("(no tokenizer panes)").setEnabled(False)

        sub.aboutToShow.connect(fill)

    def _on_current(self, act: Callable[[ToolPane], object]) -> None:
        pane = self._host.current_pane()
        if pane is None:
            self._host.show_message("no tokenizer pane")
        else:
            act(pane)

    def selection_or_text(self) -> tuple[int, int] | None:
        """The editor's selected character range, or None for the whole text."""
        start, end = self._host.selected_chars()
        return (start, end) if end > start else None

    # -- per pane: a new dialog each time -------------------------------------------------------
    def open_vocabulary(self, pane: ToolPane) -> QDialog:
        from tokviz.gui.tools.vocab_browser import open_vocab_browser

        tokens = pane.result.tokens if pane.result is not None else None
        dialog = open_vocab_browser(self._window, pane.spec, self._host.text(), tokens)
        dialog.browser.jump_to.connect(self._host.highlight_chars)
        dialog.browser.jump_to.connect(self.reveal_chars)
        return on_screen(dialog)

    def open_token(self, spec: str, token_id: int) -> QDialog:
        """The vocabulary browser of `spec` with `token_id` selected once the table is built (the
        overlap table's double-click); occurrences are those in a pane of `spec`, if there is one."""
        from tokviz.gui.tools.vocab_browser import open_vocab_browser

        pane = next((p for p in self._host.panes if p.spec == spec and p.result is not None), None)
        tokens = pane.result.tokens if pane is not None else None
        dialog = open_vocab_browser(self._window, spec, self._host.text() if pane is not None else "", tokens)
        browser = dialog.browser
        browser.loaded.connect(partial(browser.select_token, token_id))
        browser.jump_to.connect(self._host.highlight_chars)
        browser.jump_to.connect(self.reveal_chars)
        return on_screen(dialog)

    def reveal_chars(self, start: int, _end: int) -> None:
        """Scroll every pane to the token at character `start` (a highlighted occurrence)."""
        for pane in self._host.panes:
            if pane.result is not None and (index := pane.view.token_for_char(start)) is not None:
                pane.view.ensure_visible(index)

    def open_replay(self, pane: ToolPane) -> ReplayDialog:
        from tokviz.gui.tools.replay_dialog import open_replay_dialog

        dialog = open_replay_dialog(self._window, pane.spec, self._host.text(), policy=pane.policy,
                                    selection=self.selection_or_text())
        dialog.jump_to.connect(self._host.highlight_chars)
        return on_screen(dialog)

    def open_pipeline(self, pane: ToolPane) -> PipelineDialog:
        from tokviz.gui.tools.pipeline_dialog import open_pipeline_dialog

        span = self.selection_or_text()
        text = self._host.text() if span is None else self._host.text()[span[0]:span[1]]
        return on_screen(open_pipeline_dialog(self._window, pane.spec, text, policy=pane.policy))

    # -- one of each, kept ---------------------------------------------------------------------------
    def open_analysis(self) -> AnalysisDialog:
        """A fresh analysis of the window's current panes and text (the previous one closes)."""
        from tokviz.gui.tools.analysis_dialog import open_analysis

        if self.analysis is not None:
            self.analysis.close()
            self.analysis.deleteLater()
        panes = self._host.panes
        self.analysis = open_analysis(self._window, [p.spec for p in panes], self._host.text(),
                                      policies=[p.policy for p in panes])
        return on_screen(self.analysis)

    def open_overlap(self) -> OverlapDialog:
        """A fresh overlap of the panes' vocabularies, all of them chosen (the previous one closes)."""
        from tokviz.gui.tools.overlap_dialog import open_overlap_dialog

        if self.overlap is not None:
            self.overlap.close()
            self.overlap.deleteLater()
        self.overlap = open_overlap_dialog(self._window, [p.spec for p in self._host.panes])
        self.overlap.open_token.connect(self.open_token)
        return on_screen(self.overlap)

    def open_extend(self) -> ExtendDialog:
        from tokviz.gui.tools.extend_dialog import open_extend_dialog

        if self.extend is None:
            base = next((p.spec for p in self._host.panes
                         if (e := catalog.find(p.spec)) and e.format == "tiktoken"), None)
            self.extend = open_extend_dialog(self._window, base)
            self.extend.extension_saved.connect(self._host.add_pane)
        else:
            self.extend.show()
            self.extend.raise_()
        return on_screen(self.extend)

    def open_trainer(self) -> TrainerDialog:
        from tokviz.gui.trainer.panel import TrainerDialog

        if self.trainer is None:
            self.trainer = TrainerDialog(self._window)
            # a run's pane replaces the previous run's (every finished run used to add one more);
            # a vocabulary added from the saved list is a pane of its own
            self.trainer.panel.run_saved.connect(self._host.add_trained_pane)
            self.trainer.panel.trained.vocabulary_ready.connect(self._host.add_pane)
            self.trainer.panel.message.connect(self._host.show_message)
        self.trainer.panel.set_compare_text(self._host.text())
        self.trainer.show()
        self.trainer.raise_()
        return on_screen(self.trainer)
