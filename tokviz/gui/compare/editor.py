"""The input editor: a plain-text editor that also accepts dropped files."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QFont, QMouseEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget


class InputEditor(QPlainTextEdit):
    file_dropped = Signal(str)
    hovered = Signal(int)  # UTF-16 position under the mouse, -1 when it leaves the text

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        super().mouseMoveEvent(event)
        cursor = self.cursorForPosition(event.position().toPoint())
        rect = self.cursorRect(cursor)
        near = abs(rect.center().y() - event.position().y()) <= rect.height()
        self.hovered.emit(cursor.position() if near and not self.document().isEmpty() else -1)

    def leaveEvent(self, event) -> None:  # noqa: N802
        self.hovered.emit(-1)
        super().leaveEvent(event)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        font = QFont(self.font())
        font.setStyleHint(QFont.StyleHint.TypeWriter)
        self.setFont(font)
        self.viewport().setMouseTracking(True)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            event.acceptProposedAction()
            self.file_dropped.emit(urls[0].toLocalFile())
        else:
            super().dropEvent(event)
