"""The compare window: an input editor above N tokenizer panes side by side.

The window renders a `CompareModel` (tokviz.model.compare): its editor, menus and panes send
intents to the model, and the model's events update the widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QColor, QShowEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from tokviz.core import catalog
from tokviz.core.files import write_atomic
from tokviz.core.resources import samples
from tokviz.core.textfile import NotTextError, read_text_exact
from tokviz.gui.compare.cells import VIEW_MODES, ViewOptions
from tokviz.gui.compare.diff_mode import DiffMode
from tokviz.gui.compare.editor import InputEditor
from tokviz.gui.compare.export_copy import CopyWhat, copy_to_clipboard, install_copy
from tokviz.gui.compare.export_files import FILTERS, ExportError, export_comparison
from tokviz.gui.compare.fetch_bar import FetchBar
from tokviz.gui.compare.find_bar import FindBar
from tokviz.gui.compare.legend import TokenLegend
from tokviz.gui.compare.menus import build_menus
from tokviz.gui.compare.offsets import Utf16Map
from tokviz.gui.compare.original_note import original_notes
from tokviz.gui.compare.pane import TokenPane
from tokviz.gui.compare.stats_chart import TokenBarChart
from tokviz.gui.compare.status_line import StatusLine
from tokviz.gui.compare.stream_dialog import StreamDialog
from tokviz.gui.tools.menu import ToolWindows
from tokviz.gui.widgets.screen import fit_to_screen
from tokviz.gui.widgets.theme import icon
from tokviz.model.compare import CompareModel, PaneModel, PanesChanged

DEBOUNCE_MS = 250
MAX_AUTO_PANES = 4  # fetched vocabularies get a pane while there are fewer
MAX_SAVED_TEXT = 200_000  # characters of the last text kept in the settings when its file cannot be written
MIN_PANE_WIDTH = 240  # px: a catalog name, four buttons and a policy box still read
HOVER_MARK = QTextCharFormat()  # the hovered token's characters in the editor
HOVER_MARK.setBackground(QColor(255, 214, 10, 140))


class MainWindow(QMainWindow):
    """The compare window. `chat_factory` and `dataset_factory` build the Chat and Dataset tabs'
    panels (passed in by gui.app: those packages draw with this package's views, so it must not
    import them); a tab without one is disabled."""

    MODES = ("text", "chat", "dataset")

    def __init__(self, settings: QSettings, *, specs: list[str] | None = None,
                 text: str | None = None, restore: bool = True,
                 chat_factory: Callable[..., Any] | None = None,
                 dataset_factory: Callable[..., Any] | None = None) -> None:
        super().__init__()
        self.settings = settings
        self._chat_factory = chat_factory
        self._dataset_factory = dataset_factory
        self._restore = restore
        self.model = CompareModel()
        self._views: dict[PaneModel, TokenPane] = {}  # each of the model's panes, rendered
        #: the text the panes cut, with its UTF-16 offsets (the editor's units); the diff mode reads it
        self.offsets = Utf16Map("")
        self._editor_range: tuple[int, int] = (-1, -1)
        self._restore_note: str | None = None  # what the status bar says about the remembered text
        self.chat_panel: Any = None  # built the first time its tab is shown
        self.dataset_panel: Any = None  # likewise
        self.setWindowTitle("tokviz — compare tokenizers")
        self.setWindowIcon(icon("tokviz"))
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.flush_text)
        self._build_ui()
        self.model.events.text.connect(self._on_text)
        self.model.events.panes.connect(self._on_panes_changed)
        self.model.events.options.connect(self._on_options)
        self.model.events.context_limit.connect(self._on_context_limit)
        self.diff = DiffMode(self)
        self.splitter.addWidget(self.diff.panel)
        self.tools = ToolWindows(self, self)
        build_menus(self, self.tools)
        saved = self._restore_settings() if restore else {}
        rows = [] if specs else saved.get("panes", [])
        for spec, policy, model_adds in rows or [(s, "none", False) for s in specs or catalog.default_specs()]:
            self.model.add_pane(spec, policy=policy, model_adds=model_adds)
        if not specs and catalog.missing_preferred():  # a fresh machine: offer to fetch the catalog
            self.offer_fetch()
        if text is None and "text" not in saved:  # a first start: something to look at at once
            self.load_sample("mixed")
        else:
            self.set_text(text if text is not None else saved["text"])
        if text is not None:
            self._restore_note = None
        self.editor.textChanged.connect(self._forget_restore_note)

    # -- layout ----------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.editor = InputEditor()
        self.editor.setPlaceholderText("Paste or type text, drop a file, or pick one from Samples…")
        self.editor.textChanged.connect(self._debounce.start)
        self.editor.selectionChanged.connect(self._on_editor_selection)
        self.editor.cursorPositionChanged.connect(self._on_editor_selection)
        self.editor.file_dropped.connect(self.open_text_file)
        self.editor.fill_started.connect(self.flush_text)  # a large paste: asked at once
        self.editor.hovered.connect(self._on_editor_hover)
        self.chart = TokenBarChart()
        top = QWidget()
        row = QHBoxLayout(top)
        row.setContentsMargins(4, 4, 4, 0)
        row.addWidget(self.editor, 3)
        row.addWidget(self.chart, 1)
        self.pane_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.pane_splitter.setChildrenCollapsible(False)
        # the panes scroll sideways once they would be narrower than MIN_PANE_WIDTH: their widths
        # never add up into the window's minimum width (six panes would widen the window past a screen)
        self.pane_scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        self.pane_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.pane_scroll.setWidget(self.pane_splitter)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.pane_scroll)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([1000, 3000])  # a quarter for the editor (the scroll area hints no size)
        central = QWidget()
        box = QVBoxLayout(central)
        box.setContentsMargins(0, 0, 0, 0)
        self.fetch_bar = FetchBar()
        self.fetch_bar.arrived.connect(self._on_vocab_arrived)
        self.fetch_bar.hide()
        box.addWidget(self.fetch_bar)
        self._build_mode_switch(box)
        self.find_bar = FindBar(self)
        box.addWidget(self.find_bar)
        self.status_line = StatusLine()  # the legend is beside the mode tabs: here it took half the bar
        self.statusBar().addPermanentWidget(self.status_line, 1)
        self.statusBar().messageChanged.connect(self.status_line.set_message)
        self.setCentralWidget(central)
        self.resize(1400, 860)

    def _build_mode_switch(self, box: QVBoxLayout) -> None:
        self.mode_tabs = QTabBar(expanding=False)
        for title in ("Text", "Chat", "Dataset"):
            self.mode_tabs.addTab(title)
        self.mode_tabs.setToolTip("Text: how each tokenizer cuts the text · Chat: a conversation "
                                  "through each model's chat template · Dataset: what a whole dataset "
                                  "costs in each tokenizer")
        self.mode_tabs.setTabEnabled(1, self._chat_factory is not None)
        self.mode_tabs.setTabEnabled(2, self._dataset_factory is not None)
        self.mode_tabs.currentChanged.connect(self._on_mode_tab)
        self.legend = TokenLegend()
        self.legend_action = QAction("&Legend", self, checkable=True, checked=True)
        self.legend_action.setStatusTip("show how the panes draw each kind of token, beside the Text | Chat tabs")
        self.legend_action.toggled.connect(self.legend.setVisible)
        self.modes = QStackedWidget()
        self.modes.addWidget(self.splitter)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 6, 0)
        row.addWidget(self.mode_tabs)
        row.addStretch(1)
        row.addWidget(self.legend, 0, Qt.AlignmentFlag.AlignVCenter)
        box.addLayout(row)
        box.addWidget(self.modes, 1)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        fit_to_screen(self)

    def _fit_panes(self) -> None:
        """Give each pane at least MIN_PANE_WIDTH; more panes than fit scroll sideways."""
        n = len(self.panes)
        self.pane_splitter.setMinimumWidth(n * MIN_PANE_WIDTH + max(n - 1, 0) * self.pane_splitter.handleWidth())

    # -- modes: plain text, a chat (tokviz.gui.chat) or a dataset (tokviz.gui.dataset) ---------
    @property
    def mode(self) -> str:
        return self.MODES[max(self.mode_tabs.currentIndex(), 0)]

    def set_mode(self, mode: str) -> None:
        """Show the plain-text comparison ("text"), the Chat mode ("chat") or the Dataset tab ("dataset")."""
        if mode not in self.MODES:
            raise ValueError(f"unknown mode {mode!r}: text, chat or dataset")
        self.mode_tabs.setCurrentIndex(self.MODES.index(mode))

    def _on_mode_tab(self, index: int) -> None:
        self.legend.setVisible(self.legend_action.isChecked())
        if index == 1 and self._chat_factory is not None:
            if self.chat_panel is None:
                # the conversation is kept beside the settings (read back unless --no-restore)
                self.chat_panel = self._chat_factory(options=self.options, context_limit=self.context_limit,
                                                     remember=self.settings.fileName(), restore=self._restore)
                self.chat_panel.message.connect(self.show_message)
                if self.chat_panel.restore_note:  # said while it was built, before the connection
                    self.show_message(self.chat_panel.restore_note)
                self.modes.addWidget(self.chat_panel)
            self.chat_panel.set_specs(self.model.specs())
            self.modes.setCurrentWidget(self.chat_panel)
        elif index == 2 and self._dataset_factory is not None:
            if self.dataset_panel is None:
                self.dataset_panel = self._dataset_factory(settings=self.settings, context_limit=self.context_limit,
                                                           restore=self._restore)
                self.dataset_panel.message.connect(self.show_message)
                self.dataset_panel.open_text.connect(self._open_example_text)
                self.dataset_panel.open_chat.connect(self._open_example_chat)
                self.modes.addWidget(self.dataset_panel)
            self.dataset_panel.set_specs(self.model.specs())  # its tokenizers are the panes'
            self.modes.setCurrentWidget(self.dataset_panel)
            self.legend.hide()  # it tells how the token views draw; the Dataset tab draws none
        else:
            self.modes.setCurrentWidget(self.splitter)
            self._show_summary()  # the status bar said the chat's counts

    def _open_example_text(self, text: str) -> None:
        self.set_mode("text")
        self.set_text(text)

    def _open_example_chat(self, messages: list, tools: list | None) -> None:
        self.set_mode("chat")
        if self.chat_panel is not None:
            self.chat_panel.set_messages(messages, tools=tools)

    # -- text ------------------------------------------------------------------------------
    def text(self) -> str:
        """The input exactly as pasted, typed or opened (not toPlainText, which rewrites it)."""
        return self.editor.raw_text()

    def set_text(self, text: str) -> None:
        """Replace the input and tokenize it at once (no debounce)."""
        with QSignalBlocker(self.editor):
            self.editor.set_raw_text(text)
        self.flush_text()

    def flush_text(self) -> None:
        """Give every pane the editor's text. A large text is asked for while it still goes into
        the editor by slices (`raw_text()` is already all of it): the tokenizer process works
        meanwhile instead of waiting for the editor."""
        self._debounce.stop()
        self.model.set_text(self.text())

    def _on_text(self, text: str) -> None:
        if text is not self.text() and text != self.text():  # the model's text, set but not typed
            with QSignalBlocker(self.editor):
                self.editor.set_raw_text(text)
        if text != self.offsets.text:  # a large paste asks twice: as it starts and once it is in
            self.offsets = Utf16Map(text)
        for pane in self.panes:
            pane.set_text(text)
        self._refresh_stats()  # no pane shows a number for the old text while it works
        self._show_summary()

    def open_text_file(self, path: str) -> None:
        """Open a file as the input, exactly as it is on disk (its bytes decoded as UTF-8); a file
        that is not UTF-8 text is refused with a message saying where and why."""
        try:
            text = read_text_exact(path)
        except OSError as e:
            self.show_message(f"cannot open {path}: {e.strerror or e}")
            return
        except NotTextError as e:
            self.show_message(f"not opened: {e}")
            return
        self.set_text(text)
        self.show_message(f"opened {path} ({len(text.encode('utf-8', 'surrogatepass')):,} bytes)")

    def load_sample(self, name: str) -> None:
        """Load a shipped sample by file name, stem, kind or title word (`mixed`, `korean`)."""
        try:
            self.set_text(_sample_text(name))
        except Exception as e:  # unknown name or missing resources
            self.show_message(f"sample {name!r}: {e}")
        else:
            self.show_message(f"sample: {name}")

    def choose_text_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open text file")
        if path:
            self.open_text_file(path)

    def choose_export_file(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export the comparison", "tokviz-comparison.html",
                                                   FILTERS)
        if path:
            if not Path(path).suffix:  # the filter chosen names the format
                path += "." + chosen.rsplit("*.", 1)[-1].rstrip(")")
            self.export_to(path)

    def export_to(self, path: str) -> bool:
        """Save the comparison (HTML page, or the panes as drawn in PNG / SVG); say so in the status bar."""
        try:
            fmt = export_comparison(path, self.panes, self.pane_splitter, by_id=self.options.color_by_id,
                                    limit=self.context_limit)
        except ExportError as e:
            self.show_message(str(e))
            return False
        self.show_message(f"exported the comparison as {fmt.upper()}: {path}")
        return True

    def choose_vocab_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open vocabulary", "", "Vocabularies (*.tiktoken *.model *.json *.gguf);;All files (*)"
        )
        if path:
            self.add_pane(path)

    # -- panes -----------------------------------------------------------------------------
    @property
    def options(self) -> ViewOptions:
        return self.model.options

    @property
    def context_limit(self) -> int | None:
        return self.model.context_limit

    def add_pane(self, spec: str, *, policy: str = "none") -> TokenPane:
        return self._views[self.model.add_pane(spec, policy=policy)]

    def add_trained_pane(self, spec: str) -> TokenPane:
        """A finished training run's vocabulary, in the place of the previous run's pane (`CompareModel`)."""
        return self._views[self.model.add_trained_pane(spec)]

    def remove_pane(self, pane: TokenPane) -> None:
        self.model.remove_pane(pane.model)  # a no-op for a pane removed already

    def move_pane(self, pane: TokenPane, delta: int) -> None:
        self.model.move_pane(pane.model, delta)

    @property
    def panes(self) -> list[TokenPane]:
        """The panes, in the model's order."""
        return [self._views[model] for model in self.model.panes]

    def _on_panes_changed(self, change: PanesChanged) -> None:
        if change.kind == "added":
            pane = TokenPane(change.pane, options=self.options)
            pane.remove_requested.connect(self.remove_pane)
            pane.move_requested.connect(self.move_pane)
            pane.stream_requested.connect(self.open_stream)
            pane.stream_ready.connect(self._show_stream)
            pane.hovered_chars.connect(self._on_pane_hover)
            pane.token_clicked.connect(self.select_token)
            pane.scrolled.connect(self._on_pane_scrolled)
            pane.updated.connect(self._on_pane_updated)
            pane.message.connect(self.show_message)
            pane.jump_requested.connect(self.select_chars)
            install_copy(pane, report=self.show_message)  # Ctrl+C and the context menu of its view
            self._views[change.pane] = pane
            pane.setMinimumWidth(MIN_PANE_WIDTH)  # the splitter would share out less to some panes
            self.pane_splitter.addWidget(pane)
            self._fit_panes()
            pane.set_text(self.offsets.text)
            self._refresh_stats()
            return
        if change.kind == "moved":
            self.pane_splitter.insertWidget(change.index, self._views[change.pane])
        else:
            pane = self._views.pop(change.pane)
            pane.shutdown()
            pane.hide()
            pane.setParent(None)
            pane.deleteLater()
            self._fit_panes()
        self._refresh_stats()
        self.diff.refresh()
        if change.kind == "removed":
            self._show_summary()  # the removed pane is no longer listed

    def offer_fetch(self) -> None:
        self.fetch_bar.offer()
        self.fetch_bar.show()

    def _on_vocab_arrived(self, name: str) -> None:
        """A fetched vocabulary: give it a pane while the window shows fewer than MAX_AUTO_PANES."""
        if len(self.panes) < MAX_AUTO_PANES and name not in self.model.specs():
            self.add_pane(name)

    def set_options(self, **changes: object) -> None:
        self.model.change_options(**changes)

    def _on_options(self, options: ViewOptions) -> None:
        for pane in self.panes:
            pane.set_options(options)
        if self.chat_panel is not None:
            self.chat_panel.set_options(options)
        self.diff.options_changed()

    def set_context_limit(self, limit: int | None) -> None:
        """Mark in every pane where a context of `limit` tokens ends (None or 0: no mark)."""
        self.model.set_context_limit(limit)

    def _on_context_limit(self, limit: int | None) -> None:
        for pane in self.panes:
            pane.view.set_limit(limit)
        if self.chat_panel is not None:
            self.chat_panel.set_context_limit(limit)
        if self.dataset_panel is not None:
            self.dataset_panel.context.setValue(limit or 0)
        self.show_message(self.context_summary())

    def context_summary(self) -> str:
        """Where the limit falls in each pane: the character and the share of the text that fits."""
        return self.model.context_summary()

    def set_diff_mode(self, on: bool) -> None:
        """Show where the panes cut differently (marks, agreement, stretches: `DiffMode`)."""
        self.diff.set_on(on)

    def diff_mode_on(self) -> bool:
        return self.diff.on

    def _on_pane_updated(self, pane: TokenPane) -> None:
        pane.view.set_limit(self.context_limit)
        self._refresh_stats()
        self.diff.refresh()
        self._show_summary()

    def _show_summary(self) -> None:
        """Every pane's count in the status bar, once all are current (never old and new mixed)."""
        if self.mode != "text":  # the Chat and Dataset tabs say their own
            return
        note = f" · {self._restore_note}" if self._restore_note else ""
        chars = len(self.offsets.text)  # the text the panes cut (toPlainText of 1 MB is slow)
        if not all(p.current or p.failed for p in self.panes):
            self.statusBar().showMessage(f"{chars:,} characters · tokenizing…{note}")
            return
        parts = [f"{p.short_name}: {len(p.result.tokens):,}" if p.current and p.result else f"{p.short_name}: failed"
                 for p in self.panes]
        summary = f"{chars:,} characters · " + " · ".join(parts + original_notes(self.panes))
        if self.context_limit is not None:
            summary += " · " + self.context_summary()
        self.statusBar().showMessage(summary + note)

    def _refresh_stats(self) -> None:
        if self.chat_panel is not None and self.mode == "chat":  # panes added, removed or moved
            self.chat_panel.set_specs(self.model.specs())
        if self.dataset_panel is not None:
            self.dataset_panel.set_specs(self.model.specs())
        first = self.panes[0].stats() if self.panes else None  # None while the first pane works
        for i, pane in enumerate(self.panes):
            pane.show_stats(first if i else None)
        self.chart.set_rows([(p.short_name, s.tokens if (s := p.stats()) else "failed" if p.failed else "tokenizing…")
                             for p in self.panes])

    def show_message(self, message: str) -> None:
        self.statusBar().showMessage(message, 15000)

    # -- linked highlight, selection and scrolling ----------------------------------------------
    def highlight_chars(self, start: int, end: int) -> None:
        """Highlight, in every pane, the tokens that cover characters `[start, end)` (none when
        `start` is negative)."""
        for pane in self.panes:
            pane.view.highlight_chars(start, end)

    def selected_chars(self) -> tuple[int, int]:
        """The editor's selection as a character range (`start == end` without a selection)."""
        cursor = self.editor.textCursor()
        start = self.offsets.to_chars(cursor.selectionStart())
        end = self.offsets.to_chars(cursor.selectionEnd()) if cursor.hasSelection() else start
        return start, end

    def _on_editor_selection(self) -> None:
        start, end = self.selected_chars()
        if (start, end) != self._editor_range:
            self._editor_range = (start, end)
            self.highlight_chars(start, end)

    def _on_editor_hover(self, unit: int) -> None:
        """Hovering a character in the editor highlights the tokens covering it in every pane."""
        if unit < 0 or unit >= len(self.offsets.text) * 2 + 1:
            self.highlight_chars(*self._editor_range)
            return
        char = self.offsets.to_chars(unit)
        if char < len(self.offsets.text):
            self.highlight_chars(char, char + 1)

    def _on_pane_hover(self, start: int, end: int) -> None:
        """Hovering a token highlights the covering tokens in every pane and marks its characters
        in the editor."""
        self.highlight_chars(*(self._editor_range if start < 0 else (start, end)))
        self.editor.set_marks("hover", [self.offsets.to_utf16_span(start, end)] if start >= 0 else [], HOVER_MARK)

    def _chars_cursor(self, start: int, end: int) -> QTextCursor:
        """An editor cursor that selects characters `[start, end)`."""
        return self.editor.span_cursor(*self.offsets.to_utf16_span(start, end))

    def select_chars(self, start: int, end: int) -> None:
        """Select characters `[start, end)` in the editor (the covering tokens light up in every
        pane) and scroll every pane to them."""
        self.editor.setTextCursor(self._chars_cursor(start, end))
        for pane in self.panes:
            index = pane.view.token_for_char(start)
            if index is not None:
                pane.view.ensure_visible(index)

    def current_pane(self) -> TokenPane | None:
        """The pane the Edit menu acts on: the focused one, else one with a selection, else the first."""
        for pane in self.panes:
            if pane.view.hasFocus():
                return pane
        chosen = [p for p in self.panes if len(p.view.selection)] or self.panes
        return chosen[0] if chosen else None

    def copy_from_pane(self, what: CopyWhat) -> None:
        pane = self.current_pane()
        self.show_message(copy_to_clipboard(pane, what) if pane is not None else "no pane to copy from")

    def select_token(self, pane: TokenPane, index: int) -> None:
        """Select a token: details in its pane, its characters selected in the editor (which
        highlights the covering tokens in every pane)."""
        for other in self.panes:
            other.show_details(index if other is pane else None)
        token = pane.result.tokens[index]  # type: ignore[union-attr]
        self.editor.setTextCursor(self._chars_cursor(token.start, token.end))
        pane.view.ensure_visible(index)
        self.show_message(pane.view.tooltip_for(index).replace("\n", " · "))

    def _on_pane_scrolled(self, pane: TokenPane, char: int) -> None:
        """Scroll the other panes along (`scroll_to_char` does not echo `scrolled`: no loop)."""
        if self.model.sync_scroll:
            for other in self.panes:
                if other is not pane:
                    other.view.scroll_to_char(char)

    def open_stream(self, pane: TokenPane) -> None:
        """Open the streaming-decode view for a pane (once its process has decoded the ids)."""
        if not pane.request_stream():
            self.show_message(f"{pane.spec}: nothing to stream yet")

    def _show_stream(self, pane: TokenPane, ids: list, naive: list, buffered: list) -> None:
        total = len(pane.result.tokens) if pane.result is not None else len(ids)
        self._stream = StreamDialog(pane.title.text(), ids, naive, buffered, parent=self, total=total)
        self._stream.show()
        fit_to_screen(self._stream)

    # -- settings --------------------------------------------------------------------------
    def _restore_settings(self) -> dict:
        """The geometry and view options restored; the panes (spec, policy, "as the model sees it")
        and the text returned."""
        s = self.settings
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        mode = s.value("view/mode", "text")
        self.model.set_options(ViewOptions(
            mode=mode if mode in VIEW_MODES else "text",
            visible_whitespace=_as_bool(s.value("view/visible_whitespace", True)),
            color_by_id=_as_bool(s.value("view/color_by_id", False)),
        ))
        self.legend_action.setChecked(_as_bool(s.value("view/legend", True)))
        policies, model_adds = _as_list(s.value("panes/policies")), _as_list(s.value("panes/model_adds"))
        restored: dict = {"panes": [
            (spec, policies[i] if i < len(policies) and policies[i] else "none", model_adds[i:i + 1] == ["1"])
            for i, spec in enumerate(_as_list(s.value("panes/specs")))
        ]}
        if s.contains("input/file"):
            path = self._input_path()
            try:
                restored["text"] = path.read_bytes().decode("utf-8", "surrogatepass")
            except (OSError, UnicodeDecodeError) as e:
                self._restore_note = f"the remembered text in {path} could not be read ({e}): it is not shown"
        elif s.contains("input/text"):
            text = s.value("input/text", "") or ""
            restored["text"] = text if isinstance(text, str) else ""  # a hand-edited file: a list
            kept, whole = len(restored["text"]), _as_int(s.value("input/length", 0))
            if whole > kept:
                self._restore_note = (
                    f"the remembered text was cut: its first {kept:,} of {whole:,} characters are shown"
                )
        return restored

    def _forget_restore_note(self) -> None:
        self._restore_note = None

    def _input_path(self) -> Path:
        """Where the whole remembered text is kept: a file beside the settings file."""
        settings = Path(self.settings.fileName())
        return settings.with_name(settings.stem + "-input.txt")

    def _save_text(self) -> None:
        """Keep the whole text in a file (written atomically); only when that fails, the first
        MAX_SAVED_TEXT characters in the settings, with the whole length so a restart can say so."""
        s, text = self.settings, self.text()
        try:
            write_atomic(self._input_path(), text.encode("utf-8", "surrogatepass"), make_folders=True)
        except OSError:
            s.remove("input/file")
            s.setValue("input/text", text[:MAX_SAVED_TEXT])
            s.setValue("input/length", len(text))
        else:
            s.setValue("input/file", self._input_path().name)
            s.remove("input/text")
            s.remove("input/length")

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("panes/specs", self.model.specs())
        s.setValue("panes/policies", [p.policy.label for p in self.panes])
        s.setValue("panes/model_adds", ["1" if p.model_adds else "0" for p in self.panes])
        s.setValue("view/mode", self.options.mode)
        s.setValue("view/visible_whitespace", self.options.visible_whitespace)
        s.setValue("view/color_by_id", self.options.color_by_id)
        s.setValue("view/legend", self.legend_action.isChecked())
        self._save_text()
        for panel in (self.chat_panel, self.dataset_panel):  # opened this run: each keeps its own
            if panel is not None:
                panel.save()
        s.sync()

    def shutdown(self) -> None:
        """Stop every worker thread (idempotent), and close the tool windows (the trainer cancels
        and waits for its run) so none outlives the window."""
        self.fetch_bar.stop()
        for panel in (self.chat_panel, self.dataset_panel):
            if panel is not None:
                panel.shutdown()
        for dialog in self.findChildren(QDialog):
            dialog.close()
        for pane in self.panes:
            pane.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.save_settings()
        self.shutdown()
        super().closeEvent(event)


def _sample_text(name: str) -> str:
    """The text of the shipped sample that `name` names best: its file name, its stem, its kind or
    language, or a word of its title (KeyError, listing the samples, when none)."""
    key = name.lower()
    items = samples()
    for match in (
        lambda s: s.file.lower() == key,
        lambda s: s.file.rsplit(".", 1)[0].lower() == key,
        lambda s: s.kind.lower() == key or s.language.lower() == key,
        lambda s: key in s.title.lower(),
    ):
        for sample in filter(match, items):
            return sample.read_text()
    raise KeyError(f"no sample {name!r} (samples: {', '.join(s.file.rsplit('.', 1)[0] for s in items)})")


def _as_list(value: object) -> list:
    """A settings list (QSettings reads a list of one as a plain string)."""
    return [value] if isinstance(value, str) else list(value or [])  # type: ignore[call-overload]


def _as_int(value: object) -> int:
    """A settings value as an int (0 for what a hand-edited or corrupt settings file holds instead)."""
    try:
        return int(value) if isinstance(value, (int, str)) else 0
    except ValueError:
        return 0


def _as_bool(value: object) -> bool:
    return value in (True, "true", "1", 1)
