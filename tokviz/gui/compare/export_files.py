"""Saving the comparison: a self-contained HTML page (analysis/html.py, the same page as
`tokviz encode --html`), the panes as drawn as a PNG, or as an SVG of real text (export_svg.py),
with their names and counts.
Every save is atomic (`write_atomic`: a temporary file, then a rename)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtWidgets import QWidget

from tokviz.analysis.html import HtmlPane, comparison_html
from tokviz.core.files import write_atomic
from tokviz.gui.compare.export_svg import SvgPane, comparison_svg

ExportFormat = Literal["html", "png", "svg"]
FILTERS = "HTML page (*.html);;PNG image (*.png);;SVG image (*.svg)"


ExportPane = SvgPane  # what a save needs of a pane: its spec, result, tokenizer, view and counts


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


def html_page(panes: Sequence[ExportPane], *, by_id: bool = False, limit: int | None = None) -> str:
    ready = [p for p in panes if p.result is not None]
    if not ready:
        raise ExportError("no pane has tokens to export yet")
    text = ready[0].result.text
    parts = [
        HtmlPane(p.tokenizer.name if p.tokenizer else p.spec, p.tokenizer.describe() if p.tokenizer else "",
                 p.result.tokens)
        for p in ready if p.result.text == text
    ]
    return comparison_html(text, parts, by_id=by_id, limit=limit)


def png_bytes(widget: QWidget) -> bytes:
    """`widget` as drawn (QWidget.grab), in PNG."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not widget.grab().save(buffer, "PNG"):
        raise ExportError("the image could not be encoded as PNG")
    buffer.close()
    return bytes(data.data())


def svg_bytes(panes: Sequence[ExportPane], *, title: str = "tokviz comparison") -> bytes:
    """The panes as SVG text (`export_svg`): every name, count and token label is selectable text."""
    try:
        return comparison_svg(panes, title=title).encode("utf-8")
    except ValueError as e:
        raise ExportError(str(e)) from None


def export_comparison(path: str, panes: Sequence[ExportPane], widget: QWidget, *, by_id: bool = False,
                      limit: int | None = None) -> ExportFormat:
    """Save the comparison to `path` in the format its suffix names; return the format."""
    fmt = format_of(path)
    if fmt == "html":
        data = html_page(panes, by_id=by_id, limit=limit).encode("utf-8")
    elif fmt == "png":
        data = png_bytes(widget)
    else:
        data = svg_bytes(panes)
    try:
        write_atomic(path, data)
    except OSError as e:
        raise ExportError(f"cannot write {path}: {e.strerror or e}") from None
    return fmt
