"""The comparison as a real SVG: text a reader can select and search, and that scales.

Each pane becomes a column: its name, description and counts as `<text>`, then its tokens wrapped
as the pane wraps them (its own cell widths and wrap width, `TokenLayout`), each token a `<g>` with
a `<rect>` in the colour the pane draws it in (pills for special and unknown tokens, dashed boxes
for fragments) and a `<text>` with the label the pane shows; fragments' hex bytes and the id row
are smaller `<text>`s. The labels are the panes' own `Cell.label`s, so the SVG holds exactly the
panes' display. A painter-rendered SVG (QSvgGenerator over the widgets) would hold each cached
line as an embedded image instead.

Past `MAX_TOKENS` tokens a pane's column stops with a line saying how many were left out (the HTML
export holds every token).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtGui import QColor, QFontInfo, QFontMetricsF
from PySide6.QtWidgets import QLabel

from tokviz.gui.compare.cell_metrics import HEX_GAP, PAD_X
from tokviz.gui.compare.pane_result import PaneResult
from tokviz.gui.compare.token_layout import CELL_GAP, TokenLayout
from tokviz.gui.compare.token_view import (
    HEX_COLOR,
    ID_COLOR,
    LIMIT_PEN,
    LINE_GAP,
    MARGIN,
    PAST_LIMIT_FILL,
    TEXT_COLOR,
    TokenView,
)

MAX_TOKENS = 20_000  # per pane: a blog post's figure, not a 1 MB text (that is what HTML is for)
COLUMN_GAP = 16.0
HEADER_GAP = 4.0
SUBTLE = "#4b5563"
# characters XML 1.0 cannot hold (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class SvgPane(Protocol):
    spec: str
    view: TokenView
    stats_label: QLabel

    @property
    def result(self) -> PaneResult | None: ...
    @property
    def tokenizer(self): ...


def xml_text(text: str) -> str:
    """`text` escaped for an SVG, with characters XML cannot hold shown as U+FFFD.

    >>> xml_text("a<b & \\x1b")
    'a&lt;b &amp; \\ufffd'
    """
    # what xml.sax.saxutils.escape does, without importing it (it imports urllib.request, and
    # with it http, email and ssl: 8 MiB of the window's memory from the start)
    return _NOT_XML.sub("\ufffd", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _rgba(color: QColor) -> str:
    """A colour as SVG attributes: fill plus fill-opacity when it is translucent."""
    if color.alpha() == 255:
        return f'fill="{color.name()}"'
    return f'fill="{color.name()}" fill-opacity="{color.alphaF():.3f}"'


@dataclass(frozen=True)
class _Fonts:
    family: str
    main_px: int
    small_px: int
    main: QFontMetricsF
    small: QFontMetricsF

    @classmethod
    def of(cls, view: TokenView) -> _Fonts:
        main, small = view.fonts.main, view.fonts.small
        return cls(QFontInfo(main).family(), QFontInfo(main).pixelSize(), QFontInfo(small).pixelSize(),
                   QFontMetricsF(main), QFontMetricsF(small))

    def css(self) -> str:
        family = self.family.replace("'", "")
        return f"font-family: '{family}', 'Noto Sans', 'DejaVu Sans', sans-serif"


def comparison_svg(panes: Sequence[SvgPane], *, title: str = "tokviz comparison") -> str:
    """The panes that hold tokens for the first ready pane's text, side by side, as SVG text."""
    ready = [p for p in panes if p.result is not None]
    if not ready:
        raise ValueError("no pane has tokens to export yet")
    text = ready[0].result.text  # type: ignore[union-attr]
    chosen = [p for p in ready if p.result.text == text]  # type: ignore[union-attr]
    fonts = _Fonts.of(chosen[0].view)
    parts: list[str] = []
    x, height = 0.0, 0.0
    for pane in chosen:
        body, width, h = _column(pane, pane.result, fonts)  # type: ignore[arg-type]
        parts.append(f'<g class="pane" transform="translate({x:.1f},0)">{body}</g>')
        x += width + COLUMN_GAP
        height = max(height, h)
    width = max(x - COLUMN_GAP, 1.0)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" xml:space="preserve" style="{fonts.css()}">\n'
        f"<title>{xml_text(title)}</title>\n"
        f'<rect width="100%" height="100%" fill="#ffffff"/>\n' + "\n".join(parts) + "\n</svg>\n"
    )


def _column(pane: SvgPane, result: PaneResult, fonts: _Fonts) -> tuple[str, float, float]:
    """One pane's column: its SVG, width and height."""
    view = pane.view
    info = pane.tokenizer
    name = info.name if info is not None else pane.spec
    subtitle = info.describe() if info is not None else ""
    wrap = view.token_layout.wrap_width if view.token_layout is not None else 480.0
    width = wrap + 2 * MARGIN
    out: list[str] = [f'<rect class="frame" x="0" y="0" width="{width:.1f}" height="@H" fill="none" '
                      f'stroke="#d1d5db"/>']
    y = MARGIN + fonts.main.ascent() + 2
    out.append(f'<text class="name" x="{MARGIN}" y="{y:.1f}" font-size="{fonts.main_px + 2}" '
               f'font-weight="bold" fill="{TEXT_COLOR.name()}">{xml_text(name)}</text>')
    if subtitle:
        y += fonts.small.height() + HEADER_GAP
        out.append(f'<text class="desc" x="{MARGIN}" y="{y:.1f}" font-size="{fonts.small_px}" '
                   f'fill="{SUBTLE}">{xml_text(subtitle)}</text>')
    top = y + fonts.main.descent() + HEADER_GAP * 2
    count = min(len(result.tokens), MAX_TOKENS)
    layout = TokenLayout(result.widths[:count], result.breaks.before(count), wrap_width=wrap)
    layout.advance()
    top_h = fonts.main.height() + 4
    sub_h = fonts.small.height() if result.options.mode == "both" else 0.0
    line_h = top_h + sub_h + LINE_GAP
    out.append(f'<g class="tokens" transform="translate({MARGIN},{top:.1f})">')
    for line in range(layout.line_count):
        out.extend(_line(view, result, layout, line, line * line_h, top_h, fonts))
    out.append("</g>")
    y = top + layout.line_count * line_h + HEADER_GAP
    if count < len(result.tokens):
        y += fonts.small.ascent()
        out.append(f'<text class="more" x="{MARGIN}" y="{y:.1f}" font-size="{fonts.small_px}" fill="{SUBTLE}">'
                   f"… {len(result.tokens) - count:,} more tokens (the HTML export holds them all)</text>")
        y += fonts.small.descent()
    for row in _wrapped(pane.stats_label.text(), fonts.small, width - 2 * MARGIN):
        y += fonts.small.height()
        out.append(f'<text class="counts" x="{MARGIN}" y="{y:.1f}" font-size="{fonts.small_px}" '
                   f'fill="{SUBTLE}">{xml_text(row)}</text>')
    height = y + MARGIN
    out[0] = out[0].replace("@H", f"{height:.1f}")
    return "".join(out), width, height


def _wrapped(text: str, metrics: QFontMetricsF, width: float) -> list[str]:
    """The counts' rows, each broken at its " · " separators to fit `width` (a column's counts
    must not run into the next column)."""
    rows: list[str] = []
    for row in text.splitlines():
        current = ""
        for part in row.split(" · "):
            joined = f"{current} · {part}" if current else part
            if current and metrics.horizontalAdvance(joined) > width:
                rows.append(current)
                current = part
            else:
                current = joined
        rows.append(current)
    return rows


def _line(view: TokenView, result: PaneResult, layout: TokenLayout, line: int, y: float, top_h: float,
          fonts: _Fonts) -> list[str]:
    out: list[str] = []
    rng = layout.line_range(line)
    if not rng:
        return out
    xs = layout.line_xs(line).tolist()
    main_base = y + (top_h - fonts.main.height()) / 2 + fonts.main.ascent()
    small_base = y + (top_h - fonts.small.height()) / 2 + fonts.small.ascent()
    limit = view.limit
    tokens = result.tokens[rng.start:rng.stop]  # the line's tokens in one read of the columns
    for index, x, token in zip(rng, xs, tokens):
        cell = result.cells[index]
        w = float(result.widths[index])
        color = view.background(index)
        out.append(f'<g class="token k-{cell.kind.value}" data-id="{token.id}">')
        out.append(f"<title>id {token.id}</title>")
        if cell.pill:
            r = top_h / 2 - 1
            out.append(f'<rect x="{x:.1f}" y="{y + 1:.1f}" width="{w:.1f}" height="{top_h - 2:.1f}" '
                       f'rx="{r:.1f}" {_rgba(color)}/>')
        elif cell.hex:
            out.append(f'<rect x="{x + 0.5:.1f}" y="{y + 0.5:.1f}" width="{w - 1:.1f}" height="{top_h - 1:.1f}" '
                       f'{_rgba(color.lighter(135))} stroke="{color.darker(150).name()}" '
                       f'stroke-dasharray="3,2"/>')
        else:
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{top_h:.1f}" {_rgba(color)}/>')
        if cell.cont and index > rng.start:  # one character across the cut: the bridge the pane draws
            out.append(f'<rect x="{x - CELL_GAP - 1:.1f}" y="{y + top_h / 2 - 1.5:.1f}" '
                       f'width="{CELL_GAP + 2:.1f}" height="3" fill="{HEX_COLOR.name()}"/>')
        label_w = fonts.main.horizontalAdvance(cell.label)
        if cell.hex:
            lx, anchor = x + PAD_X, ""
        else:
            lx, anchor = x + w / 2, ' text-anchor="middle"'
        out.append(f'<text class="label" x="{lx:.1f}" y="{main_base:.1f}"{anchor} font-size="{fonts.main_px}" '
                   f'fill="{TEXT_COLOR.name()}">{xml_text(cell.label)}</text>')
        if cell.hex:
            hx = x + PAD_X + label_w + HEX_GAP
            out.append(f'<text class="hex" x="{hx:.1f}" y="{small_base:.1f}" font-size="{fonts.small_px}" '
                       f'fill="{HEX_COLOR.name()}">{xml_text(cell.hex)}</text>')
        if cell.sub:
            out.append(f'<text class="sub" x="{x + w / 2:.1f}" y="{y + top_h + fonts.small.ascent():.1f}" '
                       f'text-anchor="middle" font-size="{fonts.small_px}" fill="{ID_COLOR.name()}">'
                       f"{xml_text(cell.sub)}</text>")
        if limit is not None and index >= limit:
            out.append(f'<rect class="past" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{top_h:.1f}" '
                       f"{_rgba(PAST_LIMIT_FILL)}/>")
            if index == limit:
                out.append(f'<rect x="{x - 1.5:.1f}" y="{y:.1f}" width="3" height="{top_h:.1f}" '
                           f'fill="{LIMIT_PEN.color().name()}"/>')
        out.append("</g>")
    return out

