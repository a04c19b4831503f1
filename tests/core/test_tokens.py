from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.core.layout import TokenInfo, tokens_from_bytes
from tokviz.core.tokens import (
    OffsetMap,
    Token,
    TokenKind,
    display_text,
    display_texts,
    hex_bytes,
    is_fragment,
    sanitize,
)


def test_fragment_detection_follows_utf8_wholeness():
    assert is_fragment(b" \xe6\xa0")  # Qwen 51461: part of 根
    assert is_fragment(b"\xb9")
    assert not is_fragment("根".encode())
    assert not is_fragment(b"plain ascii")
    assert not is_fragment(b"")


def test_display_text_marks_whitespace_controls_and_partial_bytes():
    assert display_text(b"a b\t\n") == "a·b→↵"
    assert display_text(b" \xe6\xa0") == "·\ufffd"
    assert display_text(b"\x00\x1b") == "⟨NUL⟩⟨ESC⟩"
    assert display_text(b"a b\t\n", visible_whitespace=False) == "a b\t\n"
    assert display_text(b"\x1b", visible_whitespace=False) == "⟨ESC⟩"


def test_a_combining_mark_after_a_name_sits_on_a_dotted_circle_not_on_the_name():
    # o200k cuts the keycap emoji 1️⃣ as "1" and VS16 + U+20E3: the keycap would enclose the "⟩"
    from tokviz.core import catalog

    o200k = catalog.load("o200k_base")
    pieces = [display_text(t.bytes) for t in o200k.encode("1\ufe0f\u20e3")]
    assert "".join(pieces).endswith("⟨VS16⟩◌\u20e3") and "⟩\u20e3" not in "".join(pieces)
    assert display_text("\r\u0301") == "⟨CR⟩◌\u0301"
    assert display_text("\r\u0301", visible_whitespace=False) == "\r\u0301"  # no name: nothing added
    assert display_text("e\u0301 \u0915\u093f") == "e\u0301·\u0915\u093f"  # marks on letters stay as they are


#: texts where the notation does something: names, whitespace, marks after a name, partial bytes
_NOTATION_CHARS = "a \t\n\r\x00\x07\xa0\u0301\u20e3\ufe0f\u200d\u3000\ufffd\uffff根👨é"
_PIECES = st.one_of(
    st.binary(max_size=6),
    st.text(alphabet=_NOTATION_CHARS, max_size=5).map(lambda t: t.encode("utf-8")),
    st.tuples(st.text(alphabet=_NOTATION_CHARS, max_size=4), st.integers(0, 12), st.integers(0, 12)).map(
        lambda t: t[0].encode("utf-8")[t[1]:t[1] + t[2]]  # a cut of whole characters: fragments
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=8), st.booleans())
def test_display_texts_equal_display_text_of_each(datas, visible):
    expected = [display_text(d, visible_whitespace=visible) for d in datas]
    assert display_texts(datas, visible_whitespace=visible) == expected


def test_display_texts_of_a_long_column_go_slice_by_slice_and_equal_each():
    """A column longer than one slice (and one text holding the separator U+FFFF itself)."""
    datas = [f"{i} a\t\u200d".encode() + bytes([0xE6 + i % 3]) for i in range(10_000)]
    datas[5000] = "\uffff".encode()
    assert display_texts(datas) == [display_text(d) for d in datas]


def test_hex_bytes():
    assert hex_bytes(b" \xe6\xa0") == "20 e6 a0"


def test_sanitize_replaces_lone_surrogates_keeping_offsets():
    text = "a\ud800b\udfffc"
    clean = sanitize(text)
    assert clean == "a\ufffdb\ufffdc" and len(clean) == len(text)
    assert sanitize("ok 根") == "ok 根"


def test_sanitize_joins_surrogate_pairs_as_tiktoken_does():
    assert sanitize("\ud83d\ude00!") == "\U0001f600!"
    assert sanitize("\ude00\ud83d") == "\ufffd\ufffd"  # low then high: not a pair
    assert sanitize("\ud83d\ud83d\ude00") == "\ufffd\U0001f600"



@given(st.text())
def test_offset_map_round_trips(text):
    omap = OffsetMap(text)
    data = text.encode("utf-8")
    for i in range(len(text) + 1):
        b = omap.byte_offset(i)
        assert len(text[:i].encode()) == b
        assert omap.char_start(b) == i or b == len(data)


def test_tokens_from_bytes_gives_overlapping_spans_for_a_cut_character():
    text = " 根"
    info = TokenInfo()
    info.add(1, b" \xe6\xa0", TokenKind.FRAGMENT, "Ġæł")
    info.add(2, b"\xb9", TokenKind.FRAGMENT, "¹")
    a, b = tokens_from_bytes(OffsetMap(text), [1, 2], info)
    assert (a.byte_start, a.byte_end, a.start, a.end) == (0, 3, 0, 2)
    assert (b.byte_start, b.byte_end, b.start, b.end) == (3, 4, 1, 2)
    assert isinstance(a, Token) and a.is_fragment and a.text == " \ufffd"


def test_tokens_from_bytes_rejects_bytes_that_do_not_add_up():
    import pytest

    with pytest.raises(ValueError):
        info = TokenInfo()
        info.add(1, b"abcd", TokenKind.NORMAL, "abcd")
        tokens_from_bytes(OffsetMap("abc"), [1], info)


@settings(max_examples=50)
@given(st.text(min_size=1))
def test_char_spans_vectorised_equal_scalar(text):
    omap = OffsetMap(text)
    n = len(omap.data)
    starts = np.arange(n)
    ends = np.minimum(starts + 2, n)
    cs, ce = omap.char_spans(starts, ends)
    assert cs == [omap.char_start(s) for s in starts]
    assert ce == [omap.char_end(e) for e in ends]
