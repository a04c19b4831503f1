"""Geometry of a token cell: its width, and the paddings the renderer places its texts by.

Each distinct label is measured once per pair of fonts, for every pane (`_WIDTHS`).
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


#: text widths per pair of fonts (`QFont.key()`s), shared by every measurer of them: the panes
#: measure mostly the same labels. A dict's get and set are atomic, so measurers on different
#: threads share it; each keeps its own QFontMetricsF (reentrant, not thread-safe).
_WIDTHS: dict[tuple[str, str], dict[tuple[str, bool], float]] = {}


class CellMeasurer:
    """Widths of cells and of the texts in them, in a pair of fonts."""

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

    def width(self, cell: Cell) -> float:
        """The width of `cell`: its label and hex bytes, or its id row if wider, padded."""
        top = self.text_width(cell.label)
        if cell.hex:
            top += HEX_GAP + self.text_width(cell.hex, small=True)
        sub = self.text_width(cell.sub, small=True) if cell.sub else 0.0
        return max(max(top, sub) + 2 * (PILL_PAD_X if cell.pill else PAD_X), MIN_WIDTH)
