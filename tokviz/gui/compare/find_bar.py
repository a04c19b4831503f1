"""Find in the compare window (Ctrl+F): text in the input, whose covering tokens light up in every
pane; or an id (Ctrl+G), every occurrence of which in the current pane is listed and visited."""

from __future__ import annotations

import re
from typing import Literal, Protocol

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from tokviz.gui.compare.pane import TokenPane

FindMode = Literal["text", "id"]
MAX_LISTED = 12


class FindHost(Protocol):
    """What the find bar needs of the window."""

    def text(self) -> str: ...
    def select_chars(self, start: int, end: int) -> None: ...
    def current_pane(self) -> TokenPane | None: ...
    def select_token(self, pane: TokenPane, index: int) -> None: ...


def find_all(text: str, needle: str) -> list[int]:
    """Start offsets of `needle` in `text`, case-insensitively, not overlapping.

    >>> find_all("The cat, the hat", "the")
    [0, 9]
    """
    if not needle:
        return []
    return [m.start() for m in re.finditer(re.escape(needle), text, flags=re.IGNORECASE)]


def parse_id(query: str) -> int | None:
    """A token id typed by a person (`1917`, `#1917`, ` 1917 `), or None.

    >>> parse_id(" #1917"), parse_id("x")
    (1917, None)
    """
    query = query.strip().lstrip("#")
    return int(query) if query.isdigit() else None


class FindBar(QWidget):
    """A bar under the panes: a query, text / id, previous / next, and where the search stands."""

    def __init__(self, host: FindHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.mode_box = QComboBox()
        self.mode_box.addItems(["Text", "Token id"])
        self.query = QLineEdit(placeholderText="Find in the text…", clearButtonEnabled=True, textChanged=self._search,
                               returnPressed=lambda: self.step(1))
        self.status = QLabel("")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        row.addWidget(self.mode_box)
        row.addWidget(self.query, 1)
        for text, tip, step in (("▲", "Previous (Shift+Enter)", -1), ("▼", "Next (Enter)", 1)):
            button = QToolButton(text=text, toolTip=tip, autoRaise=True, clicked=lambda _=False, s=step: self.step(s))
            row.addWidget(button)
        row.addWidget(self.status, 2)
        row.addWidget(QToolButton(text="✕", toolTip="Close (Esc)", autoRaise=True, clicked=self.hide))
        self.mode_box.currentIndexChanged.connect(self._mode_changed)
        QShortcut(QKeySequence("Shift+Return"), self.query, lambda: self.step(-1))
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.hide)
        self.matches: list[int] = []  # char offsets (text) or token indices (id)
        self.current = -1
        self._pane: TokenPane | None = None
        self.hide()

    @property
    def mode(self) -> FindMode:
        return "id" if self.mode_box.currentIndex() == 1 else "text"

    def open(self, mode: FindMode) -> None:
        """Show the bar in `mode`, the query selected for typing over."""
        self.mode_box.setCurrentIndex(1 if mode == "id" else 0)
        self.show()
        self.query.setFocus()
        self.query.selectAll()
        self._search()

    def _mode_changed(self) -> None:
        self.query.setPlaceholderText("Go to token id…" if self.mode == "id" else "Find in the text…")
        self._search()

    def _search(self) -> None:
        """Recount the matches for the query; go to the first."""
        self.matches, self.current = [], -1
        if self.mode == "text":
            self.matches = find_all(self.host.text(), self.query.text())
        else:
            token_id = parse_id(self.query.text())
            self._pane = self.host.current_pane()
            if token_id is not None and self._pane is not None and self._pane.result is not None:
                self.matches = np.flatnonzero(self._pane.result.ids == token_id).tolist()
        self.step(1)

    def step(self, delta: int) -> None:
        """Go to the next (`delta=1`) or previous (-1) match, round the end."""
        if self.matches:
            self.current = (self.current + delta) % len(self.matches)
            where = self.matches[self.current]
            if self.mode == "text":
                self.host.select_chars(where, where + len(self.query.text()))
            elif self._pane is not None:
                self.host.select_token(self._pane, where)
        self._show_status()

    def _show_status(self) -> None:
        query = self.query.text().strip()
        in_pane = f" in {self._pane.short_name}" if self.mode == "id" and self._pane is not None else ""
        if not query:
            self.status.setText("")
        elif self.mode == "id" and parse_id(query) is None:
            self.status.setText("type a token id (a number)")
        elif not self.matches:
            self.status.setText("not found" + in_pane)
        else:
            text = f"{self.current + 1} of {len(self.matches)}" + in_pane
            if self.mode == "id":
                listed = " ".join(f"#{i}" for i in self.matches[:MAX_LISTED])
                text += f": {listed}{' …' if len(self.matches) > MAX_LISTED else ''}"
            self.status.setText(text)
