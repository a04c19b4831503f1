"""Geometry of a token cell: its width, and where the painting view puts its hex label.

Cells are measured on the thread that draws them (`TokenWidths.measured_later`): Qt's font cache
is per thread, and a thread measuring beside the GUI thread held its own copies of every
fallback font face the labels reach (CJK, emoji). Each distinct label is measured once per pair
of fonts, for every pane (`_WIDTHS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QFont, QFontMetricsF

from tokviz.gui.compare.cells import Cell

PAD_X = 3.0  # inside a cell, left and right
PILL_PAD_X = 6.0  # pills are rounder
HEX_GAP = 3.0  # between a fragment's `�` and its hex bytes
MIN_WIDTH = 6.0  # a cell with an empty label (newline with whitespace hidden) stays hoverable


@dataclass(frozen=True)
class Fonts:
    """The two fonts a cell uses: the label font and a smaller one for hex bytes and ids."""

    main: QFont
    small: QFont

    @classmethod
    def default(cls, base: QFont | None = None) -> Fonts:
        main = QFont(base) if base is not None else QFont()
        small = QFont(main)
        small.setPointSizeF(max(main.pointSizeF() * 0.78, 6.0))
        return cls(main, small)


#: text widths measured so far, per pair of fonts (`QFont.key()`s), shared by every measurer of
#: those fonts: the panes measure mostly the same labels (four vocabularies
#: cut one text into largely the same words). A dict's get and set are atomic, so measurers on
#: different threads share it as they are; each keeps its own QFontMetricsF (reentrant, not
#: thread-safe).
_WIDTHS: dict[tuple[str, str], dict[tuple[str, bool], float]] = {}


class CellMeasurer:
    """Width of cells; also used by the view to place the hex label inside a fragment cell."""

    def __init__(self, fonts: Fonts) -> None:
        self.fonts = fonts
        self.main = QFontMetricsF(fonts.main)
        self.small = QFontMetricsF(fonts.small)
        self._widths = _WIDTHS.setdefault((fonts.main.key(), fonts.small.key()), {})

    def text_width(self, text: str, *, small: bool = False) -> float:
        """Advance of `text` in the main (or small) font, remembered per string."""
        key = (text, small)
        width = self._widths.get(key)
        if width is None:
            width = self._widths[key] = (self.small if small else self.main).horizontalAdvance(text)
        return width

    def label_width(self, cell: Cell) -> float:
        return self.text_width(cell.label)

    def width(self, cell: Cell) -> float:
        pad = PILL_PAD_X if cell.pill else PAD_X
        top = self.label_width(cell)
        if cell.hex:
            top += HEX_GAP + self.text_width(cell.hex, small=True)
        sub = self.text_width(cell.sub, small=True) if cell.sub else 0.0
        return max(max(top, sub) + 2 * pad, MIN_WIDTH)
