"""Taking a pane's tokens away: the clipboard (ids, `tokviz encode --json` records, text) and the
ids as selectable text, in the formats the CLI writes too (`analysis.export`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMenu, QPlainTextEdit, QVBoxLayout, QWidget

from tokviz.analysis.export import encoding_record, ids_text
from tokviz.core.tokens import Token
from tokviz.gui.compare.pane_result import PaneResult
from tokviz.gui.compare.token_view import TokenView
from tokviz.service.protocol import TokenizerInfo

CopyWhat = Literal["ids", "json", "text"]
Report = Callable[[str], object]  # where a status line goes
COPY_TITLES: dict[CopyWhat, str] = {
    "ids": "Copy token &ids",
    "json": "Copy tokens as &JSON",
    "text": "Copy the tokens' &text",
}
#: shortcuts of the window-wide Edit menu (Ctrl+C copies the text, in the focused pane only)
COPY_SHORTCUTS: dict[CopyWhat, str] = {"ids": "Ctrl+Shift+C", "json": "Ctrl+Alt+C", "text": "Ctrl+C"}


class CopySource(Protocol):
    """What copying needs of a pane."""

    @property
    def spec(self) -> str: ...
    @property
    def short_name(self) -> str: ...
    view: TokenView

    @property
    def result(self) -> PaneResult | None: ...
    @property
    def tokenizer(self) -> TokenizerInfo | None: ...


def chosen_tokens(source: CopySource) -> list[Token]:
    """The selected tokens (a click, or a shift-click range), else every token of the pane."""
    if source.result is None:
        return []
    chosen = source.view.selection or range(len(source.result.tokens))
    return list(source.result.tokens[chosen.start:chosen.stop])  # a slice: the columns read once


def copy_text(source: CopySource, what: CopyWhat) -> str:
    """What copying `what` puts on the clipboard (empty without tokens)."""
    tokens = chosen_tokens(source)
    if not tokens:
        return ""
    if what == "ids":
        return ids_text(t.id for t in tokens)
    if what == "json":
        family = source.tokenizer.family if source.tokenizer is not None else ""
        return json.dumps([encoding_record(source.short_name, family, tokens)], ensure_ascii=False)
    text = source.result.text  # type: ignore[union-attr]
    return text[tokens[0].start:tokens[-1].end]


def copy_to_clipboard(source: CopySource, what: CopyWhat) -> str:
    """Copy and return a status line saying what was copied."""
    data = copy_text(source, what)
    if not data:
        return f"{source.spec}: no tokens to copy"
    QGuiApplication.clipboard().setText(data)
    count = len(source.view.selection) or len(source.result.tokens)  # type: ignore[union-attr]
    return f"{source.spec}: copied {'the ' if what == 'text' else ''}{what} of {count:,} tokens"


def install_copy(source: CopySource, *, report: Report) -> None:
    """Give the pane's view its context menu and Ctrl+C (the selected tokens' text)."""
    view = source.view
    copy = QAction("Copy the tokens' text", view)
    copy.setShortcut(QKeySequence.StandardKey.Copy)
    copy.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    copy.triggered.connect(lambda: report(copy_to_clipboard(source, _ctrl_c(source))))
    view.addAction(copy)
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    view.customContextMenuRequested.connect(lambda pos: _context_menu(source, pos, report))


def _ctrl_c(source: CopySource) -> CopyWhat:
    """Ctrl+C copies what the pane shows: the ids in the ids view, else the text."""
    return "ids" if source.result is not None and source.result.options.mode == "ids" else "text"


def context_menu(source: CopySource, report: Report) -> QMenu:
    """The menu a right-click on a pane opens (built anew each time: the selection changes)."""
    menu = QMenu(source.view)
    scope = "selected" if len(source.view.selection) else "all"
    has_tokens = source.result is not None and len(source.result.tokens) > 0
    for what, title in COPY_TITLES.items():
        # the shortcut after a tab is only shown: the Edit menu and the view own the real ones
        action = menu.addAction(f"{title} ({scope})\t{COPY_SHORTCUTS[what]}")
        action.triggered.connect(lambda _=False, what=what: report(copy_to_clipboard(source, what)))
        action.setEnabled(has_tokens)
    menu.addSeparator()
    show = menu.addAction("Show the ids as &text…")
    show.triggered.connect(lambda: IdsDialog.for_source(source).show())
    show.setEnabled(has_tokens)
    return menu


def _context_menu(source: CopySource, pos: QPoint, report: Report) -> None:
    index = source.view.token_at(QPointF(pos))
    if index is not None and index not in source.view.selection:
        source.view.clicked.emit(index)  # right-click selects, as in a list
    menu = context_menu(source, report)
    menu.exec(source.view.viewport().mapToGlobal(pos))
    menu.deleteLater()


class IdsDialog(QDialog):
    """A pane's ids as plain, selectable text (`[15339, 1917, ...]`)."""

    def __init__(self, title: str, ids: Sequence[int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Token ids — {title}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setPlainText(ids_text(ids))
        self.text.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        box.addWidget(self.text)
        box.addWidget(buttons)
        self.resize(560, 320)

    @classmethod
    def for_source(cls, source: CopySource) -> IdsDialog:
        """The dialog of the selected tokens' (else every token's) ids."""
        return cls(source.short_name, [t.id for t in chosen_tokens(source)], source.view.window())
