"""The one renderer of token cells: a line of cells as shapes and texts (`line_cells`), drawn by a
QPainter (`paint_cells`) or written as SVG (`svg_cells`), so the export is the view.

A cell is its background (a fill, a pill for special and unknown tokens, a dashed box for
fragments), a bridge to the previous cell where one character is cut across the two, an optional
underline, its label (centred, or left-aligned when hex bytes follow), its hex bytes and id row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from tokviz.gui.compare.cell_metrics import HEX_GAP, PAD_X, CellMeasurer
from tokviz.gui.compare.cells import Cell
from tokviz.gui.compare.token_layout import CELL_GAP

TEXT_COLOR = QColor("#1f2937")
HEX_COLOR = QColor("#8b1a1a")
ID_COLOR = QColor("#4b5563")
PAST_LIMIT_FILL = QColor(255, 255, 255, 170)  # tokens past a context limit fade out
LIMIT_PEN = QPen(QColor("#dc2626"), 3.0)
UNDERLINE_H = 3.0

Shape = Literal["fill", "pill", "dashed"]
# characters XML 1.0 cannot hold (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def shape_of(cell: Cell) -> Shape:
    """The background `cell` is drawn with."""
    return "pill" if cell.pill else "dashed" if cell.hex else "fill"


@dataclass(frozen=True, slots=True)
class Text:
    """A text at baseline `y`, starting at `x` (`centred` False) or centred on it."""

    x: float
    y: float
    text: str
    color: QColor
    width: float
    centred: bool = False

    @property
    def left(self) -> float:
        return self.x - self.width / 2 if self.centred else self.x


@dataclass(frozen=True, slots=True)
class CellShapes:
    """One cell, drawn: `rect` is its top row (label and hex bytes); the id row is below it."""

    rect: QRectF
    color: QColor
    shape: Shape
    label: Text
    hex: Text | None = None
    sub: Text | None = None
    bridge: QRectF | None = None
    underline: tuple[QRectF, QColor] | None = None


def line_cells(cells: Sequence[Cell], xs: Sequence[float], widths: Sequence[float], colors: Sequence[QColor],
               measurer: CellMeasurer, top_h: float, *, y: float = 0.0,
               underlines: Sequence[QColor | None] | None = None, bridge_first: bool = False) -> list[CellShapes]:
    """The shapes of one line's cells, at `xs` with `widths`, in `colors`, `top_h` high from `y`.
    A cell that continues the previous one's character gets a bridge to it (the line's first
    only with `bridge_first`)."""
    m = measurer
    main_base = y + (top_h - m.main.height()) / 2 + m.main.ascent()
    small_base = y + (top_h - m.small.height()) / 2 + m.small.ascent()
    sub_base = y + top_h + m.small.ascent()
    out = []
    for k, (cell, x, w, color) in enumerate(zip(cells, xs, widths, colors)):
        lw = m.text_width(cell.label)
        if cell.hex:
            label = Text(x + PAD_X, main_base, cell.label, TEXT_COLOR, lw)
            hex_text = Text(x + PAD_X + lw + HEX_GAP, small_base, cell.hex, HEX_COLOR,
                            m.text_width(cell.hex, small=True))
        else:
            label, hex_text = Text(x + w / 2, main_base, cell.label, TEXT_COLOR, lw, centred=True), None
        sub = Text(x + w / 2, sub_base, cell.sub, ID_COLOR, m.text_width(cell.sub, small=True), centred=True) \
            if cell.sub else None
        bridge = QRectF(x - CELL_GAP - 1.0, y + top_h / 2 - 1.5, CELL_GAP + 2.0, 3.0) \
            if cell.cont and (k or bridge_first) else None
        line = underlines[k] if underlines is not None else None
        underline = (QRectF(x, y + top_h - UNDERLINE_H, w, UNDERLINE_H), line) if line is not None else None
        out.append(CellShapes(QRectF(x, y, w, top_h), color, shape_of(cell), label, hex_text, sub, bridge, underline))
    return out


def paint_background(painter: QPainter, rect: QRectF, color: QColor, shape: Shape) -> None:
    """A cell's background: what the legend's swatches are too."""
    if shape == "pill":
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        radius = rect.height() / 2 - 1
        painter.drawRoundedRect(rect.adjusted(0, 1, 0, -1), radius, radius)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    elif shape == "dashed":
        painter.setPen(QPen(color.darker(150), 1.0, Qt.PenStyle.DashLine))
        painter.setBrush(color.lighter(135))
        painter.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))
    else:
        painter.fillRect(rect, color)


def paint_cells(painter: QPainter, shapes: Sequence[CellShapes], measurer: CellMeasurer) -> None:
    """Backgrounds, then every label in the main font, then hex bytes and ids in the small one:
    three passes, so font and pen change three times per line instead of per cell."""
    for s in shapes:
        paint_background(painter, s.rect, s.color, s.shape)
        if s.bridge is not None:
            painter.fillRect(s.bridge, HEX_COLOR)
        if s.underline is not None:
            painter.fillRect(*s.underline)
    painter.setFont(measurer.fonts.main)
    painter.setPen(TEXT_COLOR)
    for s in shapes:
        painter.drawText(QPointF(s.label.left, s.label.y), s.label.text)
    painter.setFont(measurer.fonts.small)
    for s in shapes:
        for text in (s.hex, s.sub):
            if text is not None:
                painter.setPen(text.color)
                painter.drawText(QPointF(text.left, text.y), text.text)


def svg_cells(shapes: Sequence[CellShapes], ids: Sequence[int], kinds: Sequence[str], *, main_px: int,
              small_px: int, past: int | None = None) -> list[str]:
    """The same cells as SVG elements, one `<g>` a token (its kind as a class, its id as data and
    title). Centred texts are anchored at their centre, so a reader with other fonts still
    centres them. Cells from index `past` on are faded as past a context limit."""
    out: list[str] = []
    for k, (s, token_id, kind) in enumerate(zip(shapes, ids, kinds)):
        r = s.rect
        out.append(f'<g class="token k-{kind}" data-id="{token_id}"><title>id {token_id}</title>')
        if s.shape == "pill":
            out.append(_rect(r.adjusted(0, 1, 0, -1), f'rx="{r.height() / 2 - 1:.1f}" {rgba(s.color)}'))
        elif s.shape == "dashed":
            out.append(_rect(r.adjusted(0.5, 0.5, -0.5, -0.5), f'{rgba(s.color.lighter(135))} '
                             f'stroke="{s.color.darker(150).name()}" stroke-dasharray="3,2"'))
        else:
            out.append(_rect(r, rgba(s.color)))
        if s.bridge is not None:
            out.append(_rect(s.bridge, rgba(HEX_COLOR)))
        if s.underline is not None:
            out.append(_rect(s.underline[0], rgba(s.underline[1])))
        out.append(_text(s.label, "label", main_px))
        if s.hex is not None:
            out.append(_text(s.hex, "hex", small_px))
        if s.sub is not None:
            out.append(_text(s.sub, "sub", small_px))
        if past is not None and k >= past:
            out.append(_rect(r, rgba(PAST_LIMIT_FILL), cls="past"))
            if k == past:
                out.append(_rect(QRectF(r.x() - 1.5, r.y(), 3.0, r.height()), rgba(LIMIT_PEN.color())))
        out.append("</g>")
    return out


def xml_text(text: str) -> str:
    """`text` escaped for an SVG, with characters XML cannot hold shown as U+FFFD.

    >>> xml_text("a<b & \\x1b")
    'a&lt;b &amp; \\ufffd'
    """
    # xml.sax.saxutils.escape would import urllib.request, and with it http, email and ssl
    return _NOT_XML.sub("\ufffd", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def rgba(color: QColor) -> str:
    """A colour as SVG attributes: fill plus fill-opacity when it is translucent."""
    if color.alpha() == 255:
        return f'fill="{color.name()}"'
    return f'fill="{color.name()}" fill-opacity="{color.alphaF():.3f}"'


def _rect(r: QRectF, attributes: str, *, cls: str = "") -> str:
    head = f'<rect class="{cls}" ' if cls else "<rect "
    return f'{head}x="{r.x():.1f}" y="{r.y():.1f}" width="{r.width():.1f}" height="{r.height():.1f}" {attributes}/>'


def _text(text: Text, kind: str, px: int) -> str:
    anchor = ' text-anchor="middle"' if text.centred else ""
    return (f'<text class="{kind}" x="{text.x:.1f}" y="{text.y:.1f}"{anchor} font-size="{px}" '
            f'fill="{text.color.name()}">{xml_text(text.text)}</text>')
