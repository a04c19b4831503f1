"""Play a token sequence out as a chat stream does: naive (each token alone) beside buffered.

Naive decoding prints `�` wherever a character's bytes are split across tokens (the seeds' Qwen
example: `[51461]` -> `' �'`); buffered decoding holds the partial bytes back until the character
is whole. Both come from `tokviz.core.decoding`.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from tokviz.core.decoding import buffered_stream, naive_stream
from tokviz.core.tokenizer import Tokenizer

MAX_STREAM_TOKENS = 20_000


class StreamDialog(QDialog):
    """Two panes filled token by token: `naive[i]` and `buffered[i]` are what token i adds
    (`buffered` may hold one more piece: the flush of bytes left incomplete at the end)."""

    def __init__(self, name: str, ids: Sequence[int], naive: Sequence[str], buffered: Sequence[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Streaming decode — {name}")
        self.ids = list(ids)
        self.naive = list(naive)
        self.buffered = list(buffered)
        self.position = 0
        self.naive_edit = QPlainTextEdit(readOnly=True)
        self.buffered_edit = QPlainTextEdit(readOnly=True)
        self.play_button = QPushButton("Play")
        self.play_button.clicked.connect(self.toggle)
        self.speed = QSpinBox(minimum=1, maximum=500, value=25, suffix=" tokens/s")
        self.status = QLabel()
        grid = QGridLayout(self)
        grid.addWidget(QLabel("Naive: each token decoded alone (garbled where a character is split)"), 0, 0)
        grid.addWidget(QLabel("Buffered: whole characters only"), 0, 1)
        grid.addWidget(self.naive_edit, 1, 0)
        grid.addWidget(self.buffered_edit, 1, 1)
        grid.addWidget(self.play_button, 2, 0)
        grid.addWidget(self.speed, 2, 1)
        grid.addWidget(self.status, 3, 0, 1, 2)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.step)
        self.resize(900, 420)
        self._show_status()

    @classmethod
    def from_tokenizer(cls, tokenizer: Tokenizer, ids: Sequence[int], parent: QWidget | None = None) -> StreamDialog:
        ids = list(ids[:MAX_STREAM_TOKENS])
        naive = list(naive_stream(tokenizer, ids))
        buffered = list(buffered_stream(tokenizer, ids))
        return cls(tokenizer.name, ids, naive, buffered, parent)

    def toggle(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
            self.play_button.setText("Play")
            return
        if self.position >= len(self.ids):
            self.reset()
        self.timer.start(max(1000 // self.speed.value(), 1))
        self.play_button.setText("Pause")

    def reset(self) -> None:
        self.position = 0
        self.naive_edit.clear()
        self.buffered_edit.clear()
        self._show_status()

    def step(self) -> bool:
        """Emit one more token to both sides; False (and stop) at the end."""
        if self.position >= len(self.ids):
            self.timer.stop()
            self.play_button.setText("Play")
            return False
        i = self.position
        self._append(self.naive_edit, self.naive[i])
        tail = self.buffered[i:] if i == len(self.ids) - 1 else [self.buffered[i]]
        self._append(self.buffered_edit, "".join(tail))  # buffered may carry one final flush
        self.position += 1
        self._show_status()
        return True

    def naive_text(self) -> str:
        return self.naive_edit.toPlainText()

    def buffered_text(self) -> str:
        return self.buffered_edit.toPlainText()

    @staticmethod
    def _append(edit: QPlainTextEdit, text: str) -> None:
        cursor = edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        cursor.insertText(text)
        edit.setTextCursor(cursor)

    def _show_status(self) -> None:
        self.status.setText(f"token {self.position} of {len(self.ids)}")

    def closeEvent(self, event) -> None:  # noqa: N802
        self.timer.stop()
        super().closeEvent(event)
