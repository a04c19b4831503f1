"""The small bar chart that compares the panes' token counts (the numbers: `analysis.stats.Counts`)."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

BAR_COLOR = QColor("#8ec5ff")
TEXT_COLOR = QColor("#1f2937")
NOTE_COLOR = QColor("#6b7280")


class TokenBarChart(QWidget):
    """Horizontal bars: token count per pane, so the cheapest tokenizer is plain to see."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, int | str]] = []  # (name, count), or (name, why there is none)
        # a fixed size: a chart that grows with its rows would resize the editor beside it, and
        # re-wrapping a 1 MB document in the editor is a stall of its own
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Ignored)
        self.setFixedWidth(300)

    def set_rows(self, rows: list[tuple[str, int | str]]) -> None:
        """A count per pane, or a note (`tokenizing…`, `failed`) where a pane has no current one."""
        self.rows = rows
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(260, 8 + 18 * max(len(self.rows), 1))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        fm = painter.fontMetrics()
        # a label takes at most 40% of the width: one long name must not squeeze every bar
        label_w = min(max((fm.horizontalAdvance(name) for name, _ in self.rows), default=0) + 8,
                      int(self.width() * 0.4))
        top = max((c for _, c in self.rows if isinstance(c, int)), default=0)
        row_h = min(18.0, (self.height() - 4) / max(len(self.rows), 1))
        middle = Qt.AlignmentFlag.AlignVCenter
        for i, (name, count) in enumerate(self.rows):
            y = 2 + i * row_h
            painter.setPen(TEXT_COLOR)
            painter.drawText(QRectF(2, y, label_w, row_h), middle,
                             fm.elidedText(name, Qt.TextElideMode.ElideMiddle, label_w - 6))
            if isinstance(count, int):
                w = (self.width() - label_w - 70) * count / top if top else 0
                painter.fillRect(QRectF(label_w, y + 3, max(w, 1), row_h - 6), BAR_COLOR)
                painter.drawText(QRectF(label_w + w + 4, y, 66, row_h), middle, f"{count:,}")
            else:
                painter.setPen(NOTE_COLOR)
                painter.drawText(QRectF(label_w, y, self.width() - label_w, row_h), middle, count)
        painter.end()
