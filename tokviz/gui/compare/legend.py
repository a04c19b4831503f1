"""The legend under the panes: each kind of token's swatch, drawn by the renderer as the panes
draw it, and what it means."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize
from PySide6.QtGui import QFontMetricsF, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

from tokviz.core.tokens import TokenKind
from tokviz.gui.compare.cells import HEX_KINDS, Cell
from tokviz.gui.compare.renderer import LIMIT_PEN, PAST_LIMIT_FILL, paint_background, shape_of
from tokviz.gui.widgets.theme import token_colors

PAST = "past the context limit"
ENTRIES: tuple[tuple[TokenKind, str], ...] = (  # (kind drawn, label)
    (TokenKind.NORMAL, "normal"),
    (TokenKind.FRAGMENT, "fragment"),
    (TokenKind.BYTE_FALLBACK, "byte fallback"),
    (TokenKind.SPECIAL, "special"),
    (TokenKind.UNKNOWN, "unknown"),
    (TokenKind.NORMAL, PAST),
)
SWATCH_W, GAP, ITEM_GAP = 18.0, 4.0, 12.0


class TokenLegend(QWidget):
    """A row of swatches and labels, one for each way the panes draw a token."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setToolTip("How the panes draw tokens: dashed boxes with hex bytes are parts of a "
                        "character, pills are special or unknown tokens")
        self._fm = QFontMetricsF(self.font())

    def labels(self) -> list[str]:
        """The entries' labels, in order."""
        return [label for _, label in ENTRIES]

    def sizeHint(self) -> QSize:  # noqa: N802
        width = sum(SWATCH_W + GAP + self._fm.horizontalAdvance(label) + ITEM_GAP for label in self.labels())
        return QSize(int(width), int(self._fm.height() + 4))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        colors = token_colors()
        painter = QPainter(self)
        h = self._fm.height()
        text_color = self.palette().color(QPalette.ColorRole.WindowText)
        x = 0.0
        baseline = 2 + self._fm.ascent()
        for kind, label in ENTRIES:
            rect = QRectF(x, 2.0, SWATCH_W, h)
            cell = Cell("", "··" if kind in HEX_KINDS else "", "", kind, 0)
            paint_background(painter, rect, colors.for_slot(0, 0, kind), shape_of(cell))
            if label == PAST:
                painter.fillRect(rect, PAST_LIMIT_FILL)
                painter.setPen(LIMIT_PEN)
                painter.drawLine(rect.topLeft(), rect.bottomLeft())
            painter.setPen(text_color)  # the window's text colour: readable in light and dark themes
            painter.drawText(QPointF(x + SWATCH_W + GAP, baseline), label)
            x += SWATCH_W + GAP + self._fm.horizontalAdvance(label) + ITEM_GAP
        painter.end()
