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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtGui import QFontInfo, QFontMetricsF
from PySide6.QtWidgets import QLabel

from tokviz.gui.compare.pane_result import PaneResult
from tokviz.gui.compare.renderer import TEXT_COLOR, line_cells, svg_cells, xml_text
from tokviz.gui.compare.token_layout import TokenLayout
from tokviz.gui.compare.token_view import LINE_GAP, MARGIN, TokenView

MAX_TOKENS = 20_000  # per pane: a blog post's figure, not a 1 MB text (that is what HTML is for)
COLUMN_GAP = 16.0
HEADER_GAP = 4.0
SUBTLE = "#4b5563"


class SvgPane(Protocol):
    @property
    def spec(self) -> str: ...
    view: TokenView
    stats_label: QLabel

    @property
    def result(self) -> PaneResult | None: ...
    @property
    def tokenizer(self): ...


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
    """One line of a pane's tokens, as the renderer draws them in the pane."""
    rng = layout.line_range(line)
    if not rng:
        return []
    cells = result.cells[rng.start:rng.stop]
    shapes = line_cells(cells, layout.line_xs(line).tolist(), result.widths[rng.start:rng.stop].tolist(),
                        [view.background(i) for i in rng], view.measurer, top_h, y=y)
    limit = view.limit
    past = None if limit is None or limit >= rng.stop else max(limit - rng.start, 0)
    ids = [t.id for t in result.tokens[rng.start:rng.stop]]  # the line's tokens in one read of the columns
    return svg_cells(shapes, ids, [c.kind.value for c in cells], main_px=fonts.main_px, small_px=fonts.small_px,
                     past=past)
