"""Small widgets the dialogs share."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QProgressBar, QSizePolicy, QVBoxLayout, QWidget


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


class ElidedLabel(QLabel):
    """A one-line label that elides its text in the middle when narrow (`cl100k_base` ->
    `cl1…base`) and shows the whole text as its tooltip; `text()` is always the whole text.

    The middle is where names differ least: `mistral-7b-v0.1` and `mistral-7b-v0.3` keep both ends.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None, **kwargs: object) -> None:
        super().__init__(parent, **kwargs)  # type: ignore[arg-type]
        self._full = ""
        self._tip = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(1)
        self.setText(text)

    def text(self) -> str:  # the whole text, whatever is shown
        return self._full

    def shown_text(self) -> str:
        """What the label draws now (the elided text)."""
        return super().text()

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._full = text
        self._elide()

    def setToolTip(self, tip: str) -> None:  # noqa: N802
        self._tip = tip
        super().setToolTip(tip or self._full)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        margins = self.contentsMargins()
        width = self.width() - margins.left() - margins.right() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, max(width, 0))
        QLabel.setText(self, shown)
        QLabel.setToolTip(self, self._tip or self._full)
