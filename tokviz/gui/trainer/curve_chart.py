"""A line chart drawn with QPainter: tokens against vocabulary size (QtCharts is not in Essentials).

Used twice by the trainer panel: the corpus compression curve, growing as merges arrive, and a
text's token count against the number of merges kept (the slider's curve). The y axis starts at
zero, so the flattening is seen for what it is. Only about two points per pixel are drawn, so a
curve of 100k merges costs what one of a thousand does.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from tokviz.gui.widgets.charts import GRID_COLOR, MUTED_COLOR, SERIES_COLORS, TEXT_COLOR, framed_painter


def compact(value: float) -> str:
    """A short axis label.

    >>> compact(1234), compact(2_500_000), compact(12)
    ('1.2k', '2.5M', '12')
    """
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            text = f"{value / limit:.1f}".rstrip("0").rstrip(".")
            return text + suffix
    return f"{value:.0f}"


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least `top`.

    >>> nice_ticks(950)
    [0.0, 250.0, 500.0, 750.0, 1000.0]
    """
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * step >= raw:
            step *= m
            break
    n = math.ceil(top / step - 1e-9)
    return [i * step for i in range(n + 1)]


class CurveChart(QWidget):
    """y against x as a line, with an optional marker (a vertical line and its value)."""

    def __init__(self, title: str = "", *, x_label: str = "vocabulary size", y_label: str = "tokens",
                 color: str = SERIES_COLORS[0], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.x_label = x_label
        self.y_label = y_label
        self.color = QColor(color)
        self.xs: list[float] = []
        self.ys: list[float] = []
        self.x_min: float | None = None  # the axis start when fixed (else the first point)
        self.x_max: float | None = None  # the axis end when known in advance (else the last point)
        self.marker: float | None = None
        self.marker_value: float | None = None  # an exact y at the marker (else read off the curve)
        self._x_range = (0.0, 1.0)
        self.note = ""  # a line under the title (say, the current point in words)
        self.placeholder = "no data yet"
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(240, 150)

    # -- data --------------------------------------------------------------------------------
    def set_points(self, xs: Sequence[float], ys: Sequence[float]) -> None:
        self.xs, self.ys = list(xs), list(ys)
        self.update()

    def add_points(self, points: Sequence[tuple[float, float]]) -> None:
        for x, y in points:
            if self.xs and x <= self.xs[-1]:
                continue
            self.xs.append(x)
            self.ys.append(y)
        self.update()

    def clear(self) -> None:
        self.xs, self.ys, self.marker, self.marker_value, self.note = [], [], None, None, ""
        self.update()

    def set_marker(self, x: float | None, value: float | None = None) -> None:
        self.marker, self.marker_value = x, value
        self.update()

    def value_at(self, x: float) -> float | None:
        """y at the last point at or before x (the curve is a step per merge)."""
        i = bisect.bisect_right(self.xs, x) - 1
        return self.ys[i] if i >= 0 else None

    def sizeHint(self) -> QSize:
        return QSize(420, 240)

    # -- drawing -----------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = framed_painter(self)
        fm = painter.fontMetrics()
        line = fm.height()
        bold = painter.font()
        bold.setBold(True)
        plain = painter.font()
        painter.setFont(bold)
        painter.setPen(TEXT_COLOR)
        painter.drawText(QRectF(8, 4, self.width() - 16, line), Qt.AlignmentFlag.AlignLeft, self.title)
        painter.setFont(plain)
        y0 = 6 + line
        if self.note:
            painter.setPen(MUTED_COLOR)
            painter.drawText(QRectF(8, y0, self.width() - 16, line), Qt.AlignmentFlag.AlignLeft, self.note)
            y0 += line
        if not self.xs:
            painter.setPen(MUTED_COLOR)
            painter.drawText(QRectF(8, y0 + 4, self.width() - 16, line), Qt.AlignmentFlag.AlignLeft, self.placeholder)
            painter.end()
            return
        y_ticks = nice_ticks(max(self.ys))
        label_w = max(fm.horizontalAdvance(compact(t)) for t in y_ticks) + 10
        plot = QRectF(8 + label_w, y0 + line / 2 + 4, 0, 0)
        plot.setRight(self.width() - 14)
        plot.setBottom(self.height() - 2 * line - 6)
        if plot.width() < 20 or plot.height() < 20:
            painter.end()
            return
        x_lo = min(self.xs[0], self.x_min) if self.x_min is not None else self.xs[0]
        x_hi = max(self.x_max or 0, self.xs[-1], x_lo + 1)
        y_hi = y_ticks[-1] or 1.0
        self._x_range = (x_lo, x_hi)

        def px(x: float) -> float:
            return plot.left() + plot.width() * (x - x_lo) / (x_hi - x_lo)

        def py(y: float) -> float:
            return plot.bottom() - plot.height() * y / y_hi

        self._draw_axes(painter, plot, y_ticks, x_lo, x_hi, px, py, line)
        path = QPainterPath()
        step = max(1, len(self.xs) // max(int(plot.width() * 2), 1))
        indices = list(range(0, len(self.xs), step))
        if indices[-1] != len(self.xs) - 1:
            indices.append(len(self.xs) - 1)
        path.moveTo(px(self.xs[0]), py(self.ys[0]))
        for i in indices[1:]:
            path.lineTo(px(self.xs[i]), py(self.ys[i]))
        painter.setPen(QPen(self.color, 2))
        painter.drawPath(path)
        self._draw_marker(painter, plot, px, py)
        painter.end()

    def _draw_axes(self, painter: QPainter, plot: QRectF, y_ticks, x_lo, x_hi, px, py, line) -> None:
        fm = painter.fontMetrics()
        for t in y_ticks:
            y = py(t)
            painter.setPen(QPen(GRID_COLOR))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.setPen(MUTED_COLOR)
            painter.drawText(QRectF(2, y - line / 2, plot.left() - 6, line),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, compact(t))
        x_ticks = [x_lo] + [t for t in nice_ticks(x_hi, 5) if x_lo < t <= x_hi]
        last_right = -1e9
        for t in x_ticks:
            x = px(t)
            text = compact(t)
            w = fm.horizontalAdvance(text)
            if x - w / 2 < last_right + 6 or x + w / 2 > self.width() - 2:
                continue
            painter.setPen(QPen(GRID_COLOR))
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            painter.setPen(MUTED_COLOR)
            painter.drawText(QRectF(x - w / 2 - 2, plot.bottom() + 2, w + 4, line), Qt.AlignmentFlag.AlignCenter, text)
            last_right = x + w / 2
        painter.setPen(MUTED_COLOR)
        painter.drawText(QRectF(plot.left(), plot.bottom() + line + 2, plot.width(), line),
                         Qt.AlignmentFlag.AlignRight, f"{self.x_label} →")
        painter.drawText(QRectF(plot.left() + 4, plot.top() - line / 2 - 2, plot.width(), line),
                         Qt.AlignmentFlag.AlignLeft, f"↑ {self.y_label}")

    def _draw_marker(self, painter: QPainter, plot: QRectF, px, py) -> None:
        if self.marker is None:
            return
        value = self.marker_value if self.marker_value is not None else self.value_at(self.marker)
        x_lo, x_hi = self._x_range
        x = px(min(max(self.marker, x_lo), x_hi))
        painter.setPen(QPen(QColor("#e15759"), 1, Qt.PenStyle.DashLine))
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        if value is None:
            return
        y = py(value)
        painter.setBrush(QColor("#e15759"))
        painter.drawEllipse(QPointF(x, y), 3.5, 3.5)
        text = f"{self.marker:,.0f}: {value:,.0f}"
        fm = painter.fontMetrics()
        w = fm.horizontalAdvance(text) + 8
        left = x + 6 if x + 6 + w < plot.right() else x - 6 - w
        painter.setPen(TEXT_COLOR)
        painter.drawText(QRectF(left, y - fm.height() - 2, w, fm.height()), Qt.AlignmentFlag.AlignLeft, text)
