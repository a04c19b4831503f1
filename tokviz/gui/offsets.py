"""Qt counts text positions in UTF-16 code units, Python (and token spans) in code points.

An emoji outside the Basic Multilingual Plane is one code point but two UTF-16 units, so every
position that crosses between the editor and the panes goes through `Utf16Map`. Qt-free.
"""

from __future__ import annotations

import numpy as np


class Utf16Map:
    """Convert between code point and UTF-16 offsets.

    >>> m = Utf16Map("a👋b"); m.to_utf16(2), m.to_chars(3)
    (3, 2)
    """

    def __init__(self, text: str) -> None:
        self.text = text
        cps = np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)
        self.identity = not bool((cps > 0xFFFF).any())
        if not self.identity:
            units = np.where(cps > 0xFFFF, 2, 1)
            self._u16 = np.zeros(len(cps) + 1, dtype=np.int64)  # code point -> utf16 offset
            np.cumsum(units, out=self._u16[1:])

    def to_utf16(self, char: int) -> int:
        if self.identity:
            return char
        return int(self._u16[min(max(char, 0), len(self._u16) - 1)])

    def to_chars(self, unit: int) -> int:
        """The code point holding UTF-16 offset `unit` (the low half of a pair maps to its pair)."""
        if self.identity:
            return unit
        i = int(np.searchsorted(self._u16, unit, side="right")) - 1
        return max(i, 0)
