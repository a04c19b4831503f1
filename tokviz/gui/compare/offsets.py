"""Qt counts text positions in UTF-16 code units, Python (and token spans) in code points.

An emoji outside the Basic Multilingual Plane is one code point but two UTF-16 units, so every
position that crosses between the editor and the panes goes through `Utf16Map`. Qt-free.
"""

from __future__ import annotations

import numpy as np


class Utf16Map:
    """Convert between code point and UTF-16 offsets; the table is built on first use (a paste
    should not pay for it up front), and not at all for a text inside the BMP.

    >>> m = Utf16Map("a👋b"); m.to_utf16(2), m.to_chars(3)
    (3, 2)
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._u16: np.ndarray | None = None  # code point -> UTF-16 offset
        self._identity: bool | None = None

    @property
    def identity(self) -> bool:
        """True when the text has no character outside the BMP (both offsets agree)."""
        if self._identity is None:
            self._identity = len(self.text.encode("utf-16-le", errors="surrogatepass")) == 2 * len(self.text)
        return self._identity

    def _table(self) -> np.ndarray:
        if self._u16 is None:
            cps = np.frombuffer(self.text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)
            # int32 while the offsets fit (the editor's own limit): 4 bytes a character kept, not 8
            self._u16 = np.zeros(len(cps) + 1, dtype=np.int32 if 2 * len(cps) < 2**31 else np.int64)
            np.cumsum((cps > 0xFFFF) + 1, out=self._u16[1:])
        return self._u16

    def to_utf16(self, char: int) -> int:
        """The UTF-16 offset of code point `char`."""
        if self.identity:
            return char
        table = self._table()
        return int(table[min(max(char, 0), len(table) - 1)])

    def to_utf16_span(self, start: int, end: int) -> tuple[int, int]:
        """The UTF-16 offsets of code points `start` and `end`."""
        return self.to_utf16(start), self.to_utf16(end)

    def to_chars(self, unit: int) -> int:
        """The code point holding UTF-16 offset `unit` (the low half of a pair maps to its pair)."""
        if self.identity:
            return unit
        return max(int(np.searchsorted(self._table(), unit, side="right")) - 1, 0)
