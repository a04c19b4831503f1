"""Utf16Map: code point and UTF-16 offsets, for a text with characters outside the BMP."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tokviz.gui.compare.offsets import Utf16Map


@given(st.text(st.sampled_from("a é 根👋🧑\u200d🤝\u200d🧑\n"), max_size=60))
def test_offsets_are_pythons_own_utf16_lengths(text: str) -> None:
    m = Utf16Map(text)
    for char in range(len(text) + 1):
        unit = len(text[:char].encode("utf-16-le")) // 2
        assert m.to_utf16(char) == unit
        assert m.to_chars(unit) == char


def test_the_table_is_four_bytes_a_character() -> None:
    m = Utf16Map("a👋b" * 1000)
    assert m.to_utf16(3000) == 4000
    assert m._table().itemsize == 4  # kept for the window's life: 3.2 MB of a 1 MB text, not 6.4
