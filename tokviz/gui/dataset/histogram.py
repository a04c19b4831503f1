"""The lengths of a dataset's examples, one overlaid histogram per tokenizer, with the context
limit marked; drawn with QPainter.

`Histogram` is plain data (shared bin edges, one row of counts per tokenizer) made by `histogram`;
`LengthHistogram` draws it: a step outline over a light fill per tokenizer, in the tokenizer's
series colour, a legend, axes with round ticks and a dashed line where the context ends (or an
arrow at the right edge when the limit lies beyond the longest example).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from tokviz.gui.widgets.charts import GRID_COLOR, MUTED_COLOR, SERIES_COLORS, TEXT_COLOR, framed_painter

BINS = 40
LIMIT_COLOR = QColor("#dc2626")


@dataclass(frozen=True)
class Histogram:
    names: tuple[str, ...]
    edges: np.ndarray  # BINS + 1 token counts, shared by every tokenizer
    counts: np.ndarray  # tokenizers x BINS: how many examples fall in each bin

    @property
    def peak(self) -> int:
        return int(self.counts.max()) if self.counts.size else 0


def histogram(names: Sequence[str], tokens: np.ndarray, bins: int = BINS) -> Histogram:
    """Bins from 0 to the longest example over every tokenizer (`tokens`: examples x tokenizers);
    the last bin holds the longest.

    >>> h = histogram(["a", "b"], np.array([[1, 2], [3, 10]]), bins=5)
    >>> h.edges.tolist(), h.counts.tolist()
    ([0.0, 2.0, 4.0, 6.0, 8.0, 10.0], [[1, 1, 0, 0, 0], [0, 1, 0, 0, 1]])
    """
    top = float(tokens.max()) if tokens.size else 1.0
    edges = np.linspace(0.0, max(top, 1.0), bins + 1)
    counts = np.array([np.histogram(tokens[:, k], bins=edges)[0] for k in range(tokens.shape[1])], np.int64)
    return Histogram(tuple(names), edges, counts.reshape(len(names), bins))


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `top`.

    >>> nice_ticks(930), nice_ticks(7, 4)
    ([0.0, 200.0, 400.0, 600.0, 800.0, 1000.0], [0.0, 2.0, 4.0, 6.0, 8.0])
    """
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    base = 10 ** math.floor(math.log10(raw))
    step = next(m * base for m in (1, 2, 2.5, 5, 10) if m * base >= raw)
    n = math.ceil(top / step - 1e-9)
    return [float(i * step) for i in range(n + 1)]


def _label(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:,.0f}k"
    if value >= 1000:
        return f"{value / 1000:,.1f}k".replace(".0k", "k")
    return f"{value:,.0f}"


class LengthHistogram(QWidget):
    """Overlaid histograms of example lengths in tokens, with the context limit marked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: Histogram | None = None
        self.colors: list[QColor] = []
        self.limit: int | None = None
        self.note: str | None = None  # said instead of an empty chart ("counting…")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumHeight(150)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(520, 240)

    def set_data(self, data: Histogram | None, colors: Sequence[str] = ()) -> None:
        self.data = data
        n = len(data.names) if data is not None else 0
        self.colors = [QColor(colors[k] if k < len(colors) else SERIES_COLORS[k % len(SERIES_COLORS)])
                       for k in range(n)]
        self.update()

    def set_note(self, note: str | None) -> None:
        self.note = note
        self.update()

    def set_limit(self, limit: int | None) -> None:
        self.limit = limit or None
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = framed_painter(self)
        fm = painter.fontMetrics()
        line = fm.height()
        data = self.data
        if data is None or not data.counts.size:
            painter.setPen(MUTED_COLOR)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter,
                             self.note or "open a dataset to see its example lengths")
            painter.end()
            return
        y_ticks = nice_ticks(data.peak, 4)
        left = 10 + fm.horizontalAdvance(_label(y_ticks[-1]))
        plot = QRectF(left + 6, line + 8, self.width() - left - 20, self.height() - 3 * line - 16)
        if plot.width() < 40 or plot.height() < 30:
            painter.end()
            return
        top_x = float(data.edges[-1])
        x_ticks = [t for t in nice_ticks(top_x, max(2, int(plot.width() // 90))) if t <= top_x * 1.0001]

        def px(value: float) -> float:
            return plot.left() + plot.width() * value / top_x

        def py(value: float) -> float:
            return plot.bottom() - plot.height() * value / y_ticks[-1]

        # grid and axes
        for t in y_ticks:
            painter.setPen(QPen(GRID_COLOR))
            painter.drawLine(QPointF(plot.left(), py(t)), QPointF(plot.right(), py(t)))
            painter.setPen(MUTED_COLOR)
            painter.drawText(QRectF(2, py(t) - line / 2, left, line),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, _label(t))
        for t in x_ticks:
            painter.setPen(QPen(GRID_COLOR))
            painter.drawLine(QPointF(px(t), plot.top()), QPointF(px(t), plot.bottom()))
            painter.setPen(MUTED_COLOR)
            painter.drawText(QRectF(px(t) - 40, plot.bottom() + 2, 80, line), Qt.AlignmentFlag.AlignHCenter,
                             _label(t))
        painter.drawText(QRectF(plot.left(), plot.bottom() + line + 2, plot.width(), line),
                         Qt.AlignmentFlag.AlignHCenter, "tokens per example")
        painter.drawText(QRectF(4, 2, plot.width(), line), Qt.AlignmentFlag.AlignLeft, "examples")
        painter.setPen(QPen(QColor("#9ca3af")))
        painter.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))

        # one step outline per tokenizer, over a light fill
        for k, row in enumerate(data.counts):
            color = self.colors[k]
            path = QPainterPath(QPointF(px(data.edges[0]), plot.bottom()))
            for i, n in enumerate(row):
                path.lineTo(QPointF(px(data.edges[i]), py(n)))
                path.lineTo(QPointF(px(data.edges[i + 1]), py(n)))
            path.lineTo(QPointF(px(data.edges[-1]), plot.bottom()))
            fill = QColor(color)
            fill.setAlpha(50)
            painter.fillPath(path, fill)
            painter.setPen(QPen(color, 1.8))
            painter.drawPath(path)

        # the context limit
        if self.limit is not None:
            painter.setPen(QPen(LIMIT_COLOR, 1.5, Qt.PenStyle.DashLine))
            text = f"context {self.limit:,}"
            if self.limit <= top_x:
                x = px(self.limit)
                painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
                w = fm.horizontalAdvance(text) + 6
                tx = x + 4 if x + w < plot.right() else x - w
                painter.setPen(LIMIT_COLOR)
                painter.drawText(QRectF(tx, plot.top(), w, line), Qt.AlignmentFlag.AlignLeft, text)
            else:
                painter.setPen(LIMIT_COLOR)
                text += " →"
                w = fm.horizontalAdvance(text) + 6
                painter.drawText(QRectF(plot.right() - w, plot.top(), w, line), Qt.AlignmentFlag.AlignRight, text)

        # legend, top right (below a limit label there)
        y = plot.top() + (line + 2 if self.limit is not None else 0)
        width = max(fm.horizontalAdvance(n) for n in data.names) + 22
        x = plot.right() - width - 4
        box = QRectF(x - 4, y, width + 8, len(data.names) * line + 6)
        painter.fillRect(box, QColor(255, 255, 255, 220))
        for k, name in enumerate(data.names):
            row_y = y + 3 + k * line
            painter.fillRect(QRectF(x, row_y + line / 2 - 5, 12, 10), self.colors[k])
            painter.setPen(TEXT_COLOR)
            painter.drawText(QRectF(x + 18, row_y, width - 18, line), Qt.AlignmentFlag.AlignVCenter, name)
        painter.end()
