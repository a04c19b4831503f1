"""The legend under the panes: a swatch drawn exactly as the token view draws each kind of token
(the renderer's own backgrounds), and what it means."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize
from PySide6.QtGui import QFontMetricsF, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

from tokviz.core.tokens import TokenKind
from tokviz.gui.compare.cells import Cell
from tokviz.gui.compare.renderer import LIMIT_PEN, PAST_LIMIT_FILL, paint_background, shape_of
from tokviz.gui.widgets.theme import token_colors

#: (what, kind drawn, label)
ENTRIES: tuple[tuple[str, TokenKind, str], ...] = (
    ("normal", TokenKind.NORMAL, "normal"),
    ("fragment", TokenKind.FRAGMENT, "fragment"),
    ("byte_fallback", TokenKind.BYTE_FALLBACK, "byte fallback"),
    ("special", TokenKind.SPECIAL, "special"),
    ("unknown", TokenKind.UNKNOWN, "unknown"),
    ("past", TokenKind.NORMAL, "past the context limit"),
)
SWATCH_W, GAP, ITEM_GAP = 18.0, 4.0, 12.0


class TokenLegend(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setToolTip("How the panes draw tokens: dashed boxes with hex bytes are parts of a "
                        "character, pills are special or unknown tokens")
        self._fm = QFontMetricsF(self.font())

    def labels(self) -> list[str]:
        return [label for _, _, label in ENTRIES]

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
        for what, kind, label in ENTRIES:
            rect = QRectF(x, 2.0, SWATCH_W, h)
            cell = Cell("", "··" if kind in (TokenKind.FRAGMENT, TokenKind.BYTE_FALLBACK) else "", "", kind, 0)
            paint_background(painter, rect, colors.for_slot(0, 0, kind), shape_of(cell))
            if what == "past":
                painter.fillRect(rect, PAST_LIMIT_FILL)
                painter.setPen(LIMIT_PEN)
                painter.drawLine(rect.topLeft(), rect.bottomLeft())
            painter.setPen(text_color)  # the window's text colour: readable in light and dark themes
            painter.drawText(QPointF(x + SWATCH_W + GAP, baseline), label)
            x += SWATCH_W + GAP + self._fm.horizontalAdvance(label) + ITEM_GAP
        painter.end()
