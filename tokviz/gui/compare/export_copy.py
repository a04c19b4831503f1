"""Taking a pane's tokens away: the clipboard (ids, `tokviz encode --json` records, text) and the
ids as selectable text, in the formats the CLI writes too (`analysis.export`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Literal

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMenu, QPlainTextEdit, QVBoxLayout, QWidget

from tokviz.analysis.export import encoding_record, ids_text
from tokviz.core.tokens import Token
from tokviz.gui.compare.pane import TokenPane

CopyWhat = Literal["ids", "json", "text"]
Report = Callable[[str], object]  # where a status line goes
COPY_TITLES: dict[CopyWhat, str] = {
    "ids": "Copy token &ids",
    "json": "Copy tokens as &JSON",
    "text": "Copy the tokens' &text",
}
#: shortcuts of the window-wide Edit menu (Ctrl+C copies the text, in the focused pane only)
COPY_SHORTCUTS: dict[CopyWhat, str] = {"ids": "Ctrl+Shift+C", "json": "Ctrl+Alt+C", "text": "Ctrl+C"}


def chosen_tokens(pane: TokenPane) -> list[Token]:
    """The selected tokens (a click, or a shift-click range), else every token of the pane."""
    if pane.result is None:
        return []
    chosen = pane.view.selection or range(len(pane.result.tokens))
    return list(pane.result.tokens[chosen.start:chosen.stop])  # a slice: the columns read once


def copy_text(pane: TokenPane, what: CopyWhat) -> str:
    """What copying `what` puts on the clipboard (empty without tokens)."""
    tokens = chosen_tokens(pane)
    if not tokens:
        return ""
    if what == "ids":
        return ids_text(t.id for t in tokens)
    if what == "json":
        family = pane.tokenizer.family if pane.tokenizer is not None else ""
        return json.dumps([encoding_record(pane.short_name, family, tokens)], ensure_ascii=False)
    text = pane.result.text  # type: ignore[union-attr]
    return text[tokens[0].start:tokens[-1].end]


def copy_to_clipboard(pane: TokenPane, what: CopyWhat) -> str:
    """Copy and return a status line saying what was copied."""
    data = copy_text(pane, what)
    if not data:
        return f"{pane.spec}: no tokens to copy"
    QGuiApplication.clipboard().setText(data)
    count = len(pane.view.selection) or len(pane.result.tokens)  # type: ignore[union-attr]
    return f"{pane.spec}: copied {'the ' if what == 'text' else ''}{what} of {count:,} tokens"


def install_copy(pane: TokenPane, *, report: Report) -> None:
    """Give the pane's view its context menu and Ctrl+C (the selected tokens' text)."""
    view = pane.view
    copy = QAction("Copy the tokens' text", view)
    copy.setShortcut(QKeySequence.StandardKey.Copy)
    copy.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    copy.triggered.connect(lambda: report(copy_to_clipboard(pane, _ctrl_c(pane))))
    view.addAction(copy)
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    view.customContextMenuRequested.connect(lambda pos: _context_menu(pane, pos, report))


def _ctrl_c(pane: TokenPane) -> CopyWhat:
    """Ctrl+C copies what the pane shows: the ids in the ids view, else the text."""
    return "ids" if pane.result is not None and pane.result.options.mode == "ids" else "text"


def context_menu(pane: TokenPane, report: Report) -> QMenu:
    """The menu a right-click on a pane opens (built anew each time: the selection changes)."""
    menu = QMenu(pane.view)
    scope = "selected" if len(pane.view.selection) else "all"
    has_tokens = pane.result is not None and len(pane.result.tokens) > 0
    for what, title in COPY_TITLES.items():
        # the shortcut after a tab is only shown: the Edit menu and the view own the real ones
        action = menu.addAction(f"{title} ({scope})\t{COPY_SHORTCUTS[what]}")
        action.triggered.connect(lambda _=False, what=what: report(copy_to_clipboard(pane, what)))
        action.setEnabled(has_tokens)
    menu.addSeparator()
    show = menu.addAction("Show the ids as &text…")
    show.triggered.connect(lambda: IdsDialog.for_source(pane).show())
    show.setEnabled(has_tokens)
    return menu


def _context_menu(pane: TokenPane, pos: QPoint, report: Report) -> None:
    index = pane.view.token_at(QPointF(pos))
    if index is not None and index not in pane.view.selection:
        pane.view.clicked.emit(index)  # right-click selects, as in a list
    menu = context_menu(pane, report)
    menu.exec(pane.view.viewport().mapToGlobal(pos))
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
    def for_source(cls, pane: TokenPane) -> IdsDialog:
        """The dialog of the selected tokens' (else every token's) ids."""
        return cls(pane.short_name, [t.id for t in chosen_tokens(pane)], pane.view.window())
