"""Saving the comparison: a self-contained HTML page (the same page as `tokviz encode --html`), the
panes as drawn as a PNG, or as an SVG of real text, with their names and counts. Every save is
atomic (`write_atomic`).

In the SVG each pane is a column: its name, description and counts as `<text>`, then its tokens
wrapped as the pane wraps them, each a `<g>` drawn by the renderer the pane paints with, so the
SVG holds exactly the panes' display as text a reader can select and search (a painter-rendered
SVG would hold each cached line as an image). Past `MAX_TOKENS` tokens a column stops with a line
saying how many were left out.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QFontInfo, QFontMetricsF
from PySide6.QtWidgets import QWidget

from tokviz.analysis.html import HtmlPane, comparison_html
from tokviz.core.files import write_atomic
from tokviz.gui.compare.pane import TokenPane
from tokviz.gui.compare.pane_result import PaneResult
from tokviz.gui.compare.renderer import TEXT_COLOR, line_cells, svg_cells, xml_text
from tokviz.gui.compare.status_line import wrap_message
from tokviz.gui.compare.token_layout import TokenLayout
from tokviz.gui.compare.token_view import MARGIN, line_heights

ExportFormat = Literal["html", "png", "svg"]
FILTERS = "HTML page (*.html);;PNG image (*.png);;SVG image (*.svg)"
MAX_TOKENS = 20_000  # per pane in an SVG: a blog post's figure, not a long text (HTML holds every token)
COLUMN_GAP = 16.0
HEADER_GAP = 4.0
SUBTLE = "#4b5563"


class ExportError(Exception):
    """A comparison that cannot be saved (nothing to save, or the file cannot be written)."""


def format_of(path: str) -> ExportFormat:
    """The format a file name asks for (by its suffix).

    >>> format_of("cmp.SVG")
    'svg'
    """
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix in ("html", "htm"):
        return "html"
    if suffix in ("png", "svg"):
        return suffix  # type: ignore[return-value]
    raise ExportError(f"{path}: choose a .html, .png or .svg file name")


def _of_one_text(panes: Sequence[TokenPane]) -> list[tuple[TokenPane, PaneResult]]:
    """The panes holding tokens for the first ready pane's text, with their results."""
    ready = [(p, p.result) for p in panes if p.result is not None]
    if not ready:
        raise ExportError("no pane has tokens to export yet")
    return [(p, r) for p, r in ready if r.text == ready[0][1].text]


def _name(pane: TokenPane) -> tuple[str, str]:
    """A pane's title and description."""
    return pane.short_name, pane.tokenizer.describe() if pane.tokenizer is not None else ""


def html_page(panes: Sequence[TokenPane], *, by_id: bool = False, limit: int | None = None) -> str:
    """The HTML page of the panes that hold tokens for one text."""
    chosen = _of_one_text(panes)
    parts = [HtmlPane(*_name(p), r.tokens) for p, r in chosen]
    return comparison_html(chosen[0][1].text, parts, by_id=by_id, limit=limit)


def png_bytes(widget: QWidget) -> bytes:
    """`widget` as drawn (QWidget.grab), in PNG."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not widget.grab().save(buffer, "PNG"):
        raise ExportError("the image could not be encoded as PNG")
    buffer.close()
    return bytes(data.data())


def svg_text(panes: Sequence[TokenPane], *, title: str = "tokviz comparison") -> str:
    """The panes that hold tokens for the first ready pane's text, side by side, as SVG text."""
    chosen = _of_one_text(panes)
    fonts = chosen[0][0].view.fonts
    px = (QFontInfo(fonts.main).pixelSize(), QFontInfo(fonts.small).pixelSize())
    parts: list[str] = []
    x, height = 0.0, 0.0
    for pane, result in chosen:
        body, width, h = _column(pane, result, *px)
        parts.append(f'<g class="pane" transform="translate({x:.1f},0)">{body}</g>')
        x += width + COLUMN_GAP
        height = max(height, h)
    width = max(x - COLUMN_GAP, 1.0)
    family = QFontInfo(fonts.main).family().replace("'", "")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" xml:space="preserve" '
        f"style=\"font-family: '{family}', 'Noto Sans', 'DejaVu Sans', sans-serif\">\n"
        f"<title>{xml_text(title)}</title>\n"
        f'<rect width="100%" height="100%" fill="#ffffff"/>\n' + "\n".join(parts) + "\n</svg>\n"
    )


def _column(pane: TokenPane, result: PaneResult, main_px: int, small_px: int) -> tuple[str, float, float]:
    """One pane's column, its fonts `main_px` and `small_px` pixels high: its SVG, width and height."""
    view = pane.view
    main, small = view.measurer.main, view.measurer.small
    name, subtitle = _name(pane)
    wrap = view.token_layout.wrap_width if view.token_layout is not None else 480.0
    width = wrap + 2 * MARGIN
    out: list[str] = [f'<rect class="frame" x="0" y="0" width="{width:.1f}" height="@H" fill="none" '
                      f'stroke="#d1d5db"/>']
    y = MARGIN + main.ascent() + 2
    out.append(f'<text class="name" x="{MARGIN}" y="{y:.1f}" font-size="{main_px + 2}" '
               f'font-weight="bold" fill="{TEXT_COLOR.name()}">{xml_text(name)}</text>')
    if subtitle:
        y += small.height() + HEADER_GAP
        out.append(_small_text("desc", y, subtitle, small_px))
    top = y + main.descent() + HEADER_GAP * 2
    count = min(len(result.tokens), MAX_TOKENS)
    layout = TokenLayout(result.widths[:count], result.breaks.before(count), wrap_width=wrap)
    layout.advance()
    top_h, line_h = line_heights(view.measurer, result.options.mode)
    out.append(f'<g class="tokens" transform="translate({MARGIN},{top:.1f})">')
    for line in range(layout.line_count):
        rng = layout.line_range(line)
        if not rng:
            continue
        cells = result.cells[rng.start:rng.stop]
        shapes = line_cells(cells, layout.line_xs(line).tolist(), result.widths[rng.start:rng.stop].tolist(),
                            view.backgrounds(rng, cells), view.measurer, top_h, y=line * line_h)
        past = None if view.limit is None or view.limit >= rng.stop else max(view.limit - rng.start, 0)
        ids = [t.id for t in result.tokens[rng.start:rng.stop]]  # the line's tokens in one read of the columns
        out.extend(svg_cells(shapes, ids, [c.kind.value for c in cells], main_px=main_px, small_px=small_px,
                             past=past))
    out.append("</g>")
    y = top + layout.line_count * line_h + HEADER_GAP
    if count < len(result.tokens):
        y += small.ascent()
        more = f"… {len(result.tokens) - count:,} more tokens (the HTML export holds them all)"
        out.append(_small_text("more", y, more, small_px))
        y += small.descent()
    for row in _wrapped(pane.stats_label.text(), small, width - 2 * MARGIN):
        y += small.height()
        out.append(_small_text("counts", y, row, small_px))
    height = y + MARGIN
    out[0] = out[0].replace("@H", f"{height:.1f}")
    return "".join(out), width, height


def _small_text(cls: str, y: float, text: str, px: int) -> str:
    return (f'<text class="{cls}" x="{MARGIN}" y="{y:.1f}" font-size="{px}" '
            f'fill="{SUBTLE}">{xml_text(text)}</text>')


def _wrapped(text: str, metrics: QFontMetricsF, width: float) -> list[str]:
    """The counts' rows, each broken at its " · " separators to fit `width` (a column's counts
    must not run into the next column)."""
    return [line for row in text.splitlines()
            for line in wrap_message(row, width, metrics.horizontalAdvance, max_lines=sys.maxsize)[0]]


def export_comparison(path: str, panes: Sequence[TokenPane], widget: QWidget, *, by_id: bool = False,
                      limit: int | None = None) -> ExportFormat:
    """Save the comparison to `path` in the format its suffix names; return the format."""
    fmt = format_of(path)
    if fmt == "html":
        data = html_page(panes, by_id=by_id, limit=limit).encode("utf-8")
    elif fmt == "png":
        data = png_bytes(widget)
    else:
        data = svg_text(panes).encode("utf-8")
    try:
        write_atomic(path, data)
    except OSError as e:
        raise ExportError(f"cannot write {path}: {e.strerror or e}") from None
    return fmt
