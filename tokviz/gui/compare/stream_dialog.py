"""Play a token sequence out as a chat stream does: naive (each token alone) beside buffered.

Naive decoding prints `�` wherever a character's bytes are split across tokens; buffered decoding
holds the partial bytes back until the character is whole (both from `tokviz.core.decoding`).
Play / Pause, one token back or forward, and a scrub slider over the whole sequence. A text longer
than MAX_STREAM_TOKENS streams its first MAX_STREAM_TOKENS tokens, and the dialog says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSlider,
    QSpinBox,
    QWidget,
)

from tokviz.core.decoding import buffered_stream, naive_stream
from tokviz.core.tokenizer import Tokenizer

MAX_STREAM_TOKENS = 100_000  # scrubbing rebuilds the text up to a token at once: keep it small


class StreamDialog(QDialog):
    """Two panes filled token by token: `naive[i]` and `buffered[i]` are what token i adds
    (`buffered` may hold one more piece: the flush of bytes left incomplete at the end).
    `total` is how many tokens the text has when `ids` are only its first ones."""

    def __init__(self, name: str, ids: Sequence[int], naive: Sequence[str], buffered: Sequence[str],
                 parent: QWidget | None = None, *, total: int | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Streaming decode — {name}")
        self.ids = list(ids)
        self.naive = list(naive)
        self.buffered = list(buffered)
        self.total = max(total or 0, len(self.ids))
        self.position = 0
        self.naive_edit = QPlainTextEdit(readOnly=True)
        self.buffered_edit = QPlainTextEdit(readOnly=True)
        self.play_button = QPushButton("Play", clicked=self.toggle)
        self.back_button = QPushButton("◀ 1", toolTip="One token back", clicked=self.step_back)
        self.step_button = QPushButton("1 ▶", toolTip="One token forward", clicked=self.step)
        self.slider = QSlider(Qt.Orientation.Horizontal, maximum=len(self.ids), pageStep=max(len(self.ids) // 20, 1),
                              toolTip="Scrub: the text as streamed up to this token", valueChanged=self._on_scrub)
        self.speed = QSpinBox(minimum=1, maximum=500, value=25, suffix=" tokens/s")
        self.status = QLabel()
        capped = self.total > len(self.ids)
        self.cap_note = QLabel(f"Streams the first {len(self.ids):,} of the text's {self.total:,} tokens."
                               if capped else "", wordWrap=True)
        controls = QHBoxLayout()
        for widget in (self.play_button, self.back_button, self.step_button):
            controls.addWidget(widget)
        controls.addWidget(self.slider, 1)
        controls.addWidget(self.speed)
        grid = QGridLayout(self)
        grid.addWidget(QLabel("Naive: each token decoded alone (garbled where a character is split)"), 0, 0)
        grid.addWidget(QLabel("Buffered: whole characters only"), 0, 1)
        grid.addWidget(self.naive_edit, 1, 0)
        grid.addWidget(self.buffered_edit, 1, 1)
        grid.addLayout(controls, 2, 0, 1, 2)
        grid.addWidget(self.status, 3, 0, 1, 2)
        grid.addWidget(self.cap_note, 4, 0, 1, 2)
        self.cap_note.setVisible(capped)  # once it has a parent: a parentless visible label is a window
        self.timer = QTimer(self, timeout=self._tick)
        self.resize(900, 420)
        self._show_position()

    @classmethod
    def from_tokenizer(cls, tokenizer: Tokenizer, ids: Sequence[int], parent: QWidget | None = None) -> StreamDialog:
        """The dialog for `ids` decoded by `tokenizer` (their first MAX_STREAM_TOKENS)."""
        shown = list(ids[:MAX_STREAM_TOKENS])
        naive, buffered = naive_stream(tokenizer, shown), buffered_stream(tokenizer, shown)
        return cls(tokenizer.name, shown, list(naive), list(buffered), parent, total=len(ids))

    def toggle(self) -> None:
        """Play from here (from the start when at the end), or pause."""
        if self.timer.isActive():
            self._stop()
            return
        if self.position >= len(self.ids):
            self.seek(0)
        self.timer.start(max(1000 // self.speed.value(), 1))
        self.play_button.setText("Pause")

    def _stop(self) -> None:
        self.timer.stop()
        self.play_button.setText("Play")

    def _tick(self) -> None:
        if not self.step():
            self._stop()

    def step(self) -> bool:
        """Emit one more token to both sides; False at the end."""
        if self.position >= len(self.ids):
            return False
        i = self.position
        last = i == len(self.ids) - 1  # then buffered may carry one final flush
        buffered = "".join(self.buffered[i:] if last else self.buffered[i : i + 1])
        for edit, piece in ((self.naive_edit, self.naive[i]), (self.buffered_edit, buffered)):
            edit.moveCursor(QTextCursor.MoveOperation.End)
            edit.insertPlainText(piece)
        self.position += 1
        self._show_position()
        return True

    def step_back(self) -> bool:
        """Take the last token back; False at the start."""
        if self.position == 0:
            return False
        self.seek(self.position - 1)
        return True

    def seek(self, position: int) -> None:
        """Show the stream as it stood after `position` tokens (the scrub slider's value)."""
        self.position = min(max(int(position), 0), len(self.ids))
        end = len(self.buffered) if self.position == len(self.ids) else self.position  # with the final flush
        self.naive_edit.setPlainText("".join(self.naive[: self.position]))
        self.buffered_edit.setPlainText("".join(self.buffered[:end]))
        for edit in (self.naive_edit, self.buffered_edit):
            edit.moveCursor(QTextCursor.MoveOperation.End)
        self._show_position()

    def _on_scrub(self, value: int) -> None:
        if value != self.position:
            self._stop()
            self.seek(value)

    def _show_position(self) -> None:
        """The slider (quietly) and the status line at the current position."""
        with QSignalBlocker(self.slider):
            self.slider.setValue(self.position)
        shown = f"token {self.position:,} of {len(self.ids):,}"
        if self.position:
            shown += f" · id {self.ids[self.position - 1]}"
        self.status.setText(shown)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.timer.stop()
        super().closeEvent(event)
