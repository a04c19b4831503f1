"""Bar charts drawn with QPainter (QtCharts is not in PySide6-Essentials), and their data models.

A `ChartModel` is plain data: categories (one row each), series (one bar or segment per category,
named in the legend) and a value per category and series. `BarChart` draws it as horizontal bars,
grouped (one thin bar per series) or stacked (one bar of segments), with the value after each bar,
a legend when there is more than one series, and a tooltip per bar. Tests check the model, not
pixels: `model.bars()` is exactly what gets drawn.

`tokens_model` and `scripts_model` build the models of `tokviz.analysis.stats.Analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from tokviz.analysis.stats import Analysis
from tokviz.core.scripts import SCRIPTS

#: one colour per tokenizer (a qualitative palette that stays apart on a white background)
SERIES_COLORS = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)
#: one colour per script class, fixed so a script looks the same in every chart
SCRIPT_COLORS = dict(zip(SCRIPTS, (
    "#e15759", "#f28e2b", "#ff9da7", "#b07aa1", "#4e79a7", "#76b7b2",
    "#59a14f", "#edc948", "#c7ccd4", "#9c755f", "#f5b700", "#8c8c8c",
)))
TEXT_COLOR = QColor("#1f2937")
MUTED_COLOR = QColor("#6b7280")
GRID_COLOR = QColor("#e5e7eb")


def framed_painter(widget: QWidget) -> QPainter:
    """A painter on `widget` with every chart's ground: white, a thin grey frame, antialiased."""
    painter = QPainter(widget)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.fillRect(widget.rect(), QColor("#ffffff"))
    painter.setPen(QPen(QColor("#d6dae0")))
    painter.drawRect(QRectF(widget.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
    return painter

@dataclass(frozen=True)
class Bar:
    category: str
    series: str
    value: float


@dataclass(frozen=True)
class ChartModel:
    """`values[i][j]`: the value of category `i` in series `j`."""

    title: str = ""
    categories: tuple[str, ...] = ()
    series: tuple[str, ...] = ()
    values: tuple[tuple[float, ...], ...] = ()
    colors: tuple[str, ...] = ()  # one per series
    stacked: bool = False
    unit: str = "tokens"
    category_colors: tuple[str, ...] = ()  # a single series coloured per category (per tokenizer)
    markers: tuple[tuple[str, float], ...] = ()  # labelled dashed lines across every row

    def __post_init__(self) -> None:
        if len(self.values) != len(self.categories) or any(len(v) != len(self.series) for v in self.values):
            raise ValueError("a chart needs one value per category and series")

    def bars(self) -> list[Bar]:
        """Every bar (grouped) or segment (stacked) drawn, category by category."""
        return [
            Bar(c, s, v) for c, row in zip(self.categories, self.values) for s, v in zip(self.series, row)
        ]

    def value(self, category: str, series: str) -> float:
        return self.values[self.categories.index(category)][self.series.index(series)]

    def total(self, category: str) -> float:
        return sum(self.values[self.categories.index(category)])

    def extent(self) -> float:
        """The largest length a bar reaches: a row's sum when stacked, else the largest value."""
        marks = [v for _, v in self.markers]
        if self.stacked:
            return max([sum(row) for row in self.values] + marks, default=0.0)
        return max([v for row in self.values for v in row] + marks, default=0.0)

    def color(self, j: int, i: int = -1) -> QColor:
        if len(self.series) == 1 and 0 <= i < len(self.category_colors):
            return QColor(self.category_colors[i])
        return QColor(self.colors[j] if j < len(self.colors) else SERIES_COLORS[j % len(SERIES_COLORS)])


def tokens_model(analysis: Analysis) -> ChartModel:
    """One bar per tokenizer: its token count; a dashed line marks the characters-rule estimate."""
    names = tuple(r.name for r in analysis.results)
    markers: tuple[tuple[str, float], ...] = ()
    if analysis.results:
        rule = analysis.results[0].chars_per_token_rule
        markers = ((f"estimate at {rule:g} chars/token", analysis.results[0].estimate),)
    return ChartModel(
        "Tokens per tokenizer", names, ("tokens",), tuple((float(r.tokens),) for r in analysis.results),
        (SERIES_COLORS[0],), category_colors=tuple(SERIES_COLORS[j % len(SERIES_COLORS)] for j in range(len(names))),
        markers=markers,
    )


def scripts_model(analysis: Analysis, *, stacked: bool) -> ChartModel:
    """Tokens per script: stacked, a bar per tokenizer cut by script; grouped, a row per script
    with a bar per tokenizer. Only scripts present in the text are shown."""
    present = tuple(s for s in SCRIPTS if analysis.text.script_chars.get(s))
    names = tuple(r.name for r in analysis.results)
    if stacked:
        values = tuple(tuple(float(r.script_tokens[s]) for s in present) for r in analysis.results)
        colors = tuple(SCRIPT_COLORS[s] for s in present)
        return ChartModel("Tokens per script (stacked per tokenizer)", names, present, values, colors, True)
    values = tuple(tuple(float(r.script_tokens[s]) for r in analysis.results) for s in present)
    colors = tuple(SERIES_COLORS[j % len(SERIES_COLORS)] for j in range(len(names)))
    return ChartModel("Tokens per script", present, names, values, colors, False)


def format_value(value: float) -> str:
    """Whole numbers with separators; a decimal for small fractional values (per-script shares)."""
    if abs(value - round(value)) < 1e-6 or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}"


class BarChart(QWidget):
    """Horizontal bars of a `ChartModel`."""

    BAR_MAX = 18.0  # height of one bar of a group, at most
    SINGLE_MAX = 30.0  # height of a bar with no group around it
    GAP = 6.0  # between category groups

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ChartModel()
        self._hits: list[tuple[QRectF, Bar]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(260, 140)
        self.setMouseTracking(True)

    def set_model(self, model: ChartModel) -> None:
        self.model = model
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        m = self.model
        per_group = 1 if m.stacked else max(len(m.series), 1)
        rows = max(len(m.categories), 1) * (per_group * 14 + self.GAP)
        return QSize(420, int(60 + rows))

    # -- drawing ---------------------------------------------------------------------------
    def _legend(self) -> list[tuple[str, QColor]]:
        m = self.model
        return [(s, m.color(j)) for j, s in enumerate(m.series)] if len(m.series) > 1 else []

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = framed_painter(self)
        self._hits = []
        m = self.model
        fm = painter.fontMetrics()
        line = fm.height()
        y = 6.0
        font = painter.font()
        bold = painter.font()
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(TEXT_COLOR)
        painter.drawText(QRectF(8, y, self.width() - 16, line), Qt.AlignmentFlag.AlignLeft, m.title)
        painter.setFont(font)
        y += line + 4
        y = self._draw_legend(painter, y, line)
        if not m.categories:
            painter.setPen(MUTED_COLOR)
            painter.drawText(QRectF(8, y, self.width() - 16, line), Qt.AlignmentFlag.AlignLeft, "no data")
            painter.end()
            return
        label_w = max(fm.horizontalAdvance(c) for c in m.categories) + 12
        value_w = max(fm.horizontalAdvance(format_value(v)) for v in [m.extent(), *[b.value for b in m.bars()]]) + 10
        left, right = 8 + label_w, self.width() - 8 - value_w
        span = max(right - left, 10.0)
        top = m.extent() or 1.0
        per_group = 1 if m.stacked else max(len(m.series), 1)
        avail = self.height() - y - 6 - (line + 4 if m.markers else 0)
        most = self.SINGLE_MAX if per_group == 1 else self.BAR_MAX
        bar_h = max(min(most, (avail / len(m.categories) - self.GAP) / per_group), 2.0)
        painter.setPen(QPen(GRID_COLOR))
        painter.drawLine(QPointF(left, y), QPointF(left, y + len(m.categories) * (bar_h * per_group + self.GAP)))
        for i, category in enumerate(m.categories):
            group_h = bar_h * per_group
            gy = y + i * (group_h + self.GAP)
            painter.setPen(TEXT_COLOR)
            painter.drawText(QRectF(8, gy, label_w - 6, group_h), Qt.AlignmentFlag.AlignVCenter, category)
            x = float(left)
            for j, series in enumerate(m.series):
                value = m.values[i][j]
                w = span * value / top
                if m.stacked:
                    rect = QRectF(x, gy + 1, w, bar_h - 2)
                    x += w
                else:
                    rect = QRectF(left, gy + j * bar_h + 1, max(w, 1.0 if value else 0.0), bar_h - 2)
                    self._value_label(painter, rect, value, bar_h)
                painter.fillRect(rect, m.color(j, i))
                self._hits.append((rect, Bar(category, series, value)))
            if m.stacked:
                self._value_label(painter, QRectF(left, gy + 1, x - left, bar_h - 2), sum(m.values[i]), bar_h)
        bottom = y + len(m.categories) * (bar_h * per_group + self.GAP)
        for label, value in m.markers:
            mx = left + span * value / top
            painter.setPen(QPen(TEXT_COLOR, 1.2, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(mx, y - 2), QPointF(mx, bottom))
            painter.setPen(MUTED_COLOR)
            text = f"{label}: {format_value(value)}"
            tw = fm.horizontalAdvance(text)
            painter.drawText(QRectF(min(mx - tw / 2, self.width() - 8 - tw), bottom + 2, tw + 4, line),
                             Qt.AlignmentFlag.AlignLeft, text)
        painter.end()

    def _value_label(self, painter: QPainter, rect: QRectF, value: float, bar_h: float) -> None:
        if bar_h < 8:
            return
        painter.setPen(MUTED_COLOR)
        painter.drawText(
            QRectF(rect.right() + 4, rect.top() - 2, 200, rect.height() + 4),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, format_value(value),
        )

    def _draw_legend(self, painter: QPainter, y: float, line: float) -> float:
        items = self._legend()
        if not items:
            return y
        fm = painter.fontMetrics()
        x = 8.0
        for name, color in items:
            w = 14 + fm.horizontalAdvance(name) + 14
            if x + w > self.width() - 8 and x > 8:
                x, y = 8.0, y + line + 2
            painter.fillRect(QRectF(x, y + line / 2 - 5, 10, 10), color)
            painter.setPen(TEXT_COLOR)
            painter.drawText(QRectF(x + 14, y, w, line), Qt.AlignmentFlag.AlignVCenter, name)
            x += w
        return y + line + 6

    # -- tooltips --------------------------------------------------------------------------
    def bar_at(self, point: QPointF) -> Bar | None:
        for rect, bar in self._hits:
            if rect.adjusted(0, -1, 0, 1).contains(point):
                return bar
        return None

    def event(self, event: QEvent) -> bool:
        if isinstance(event, QHelpEvent) and event.type() == event.Type.ToolTip:
            bar = self.bar_at(QPointF(event.pos()))
            if bar is None:
                QToolTip.hideText()
            else:
                m = self.model
                share = ""
                if m.stacked and m.total(bar.category):
                    share = (f" ({100 * bar.value / m.total(bar.category):.1f}% "
                             f"of {format_value(m.total(bar.category))})")
                QToolTip.showText(
                    event.globalPos(), f"{bar.category} · {bar.series}: {format_value(bar.value)} {m.unit}{share}", self
                )
            return True
        return super().event(event)
