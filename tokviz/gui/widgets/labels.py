"""Small widgets the dialogs share."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget


def plain_text_labels(widget: QWidget, *, rich: Sequence[QLabel] = ()) -> None:
    """Show every label under `widget` as plain text: pieces like `<s>` or `<0xE6>` are data, and
    QLabel's rich-text guess would render `<s>` as strike-through."""
    for label in widget.findChildren(QLabel):
        if label not in rich:
            label.setTextFormat(Qt.TextFormat.PlainText)


def error_label(text: str = "") -> QLabel:
    label = QLabel(text, objectName="warningLabel", wordWrap=True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def busy_page(text: str) -> QWidget:
    """A centred busy indicator (an indeterminate progress bar) with a caption."""
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.addStretch(1)
    caption = QLabel(text, alignment=Qt.AlignmentFlag.AlignCenter)
    bar = QProgressBar()
    bar.setRange(0, 0)
    bar.setMaximumWidth(320)
    layout.addWidget(caption)
    layout.addWidget(bar, 0, Qt.AlignmentFlag.AlignHCenter)
    layout.addStretch(2)
    return page
