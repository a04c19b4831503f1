"""Script classification: known strings, emoji clusters, and speed on a large text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokviz.core.resources import samples
from tokviz.core.scripts import SCRIPTS, char_classes, classify_char, count_chars, script_runs


def classes(text: str) -> list[str]:
    return [SCRIPTS[c] for c in char_classes(text)]


@pytest.mark.parametrize("text, script", [
    ("대한민국", "hangul"),
    ("\u1100\u1161\u11a8", "hangul"),  # conjoining jamo
    ("中文汉字", "han"),
    ("漢字々", "han"),
    ("ひらがなゝ", "hiragana"),
    ("カタカナー", "katakana"),  # ー is Common with Katakana in its script extensions
    ("Hello", "latin"),
    ("café", "latin"),
    ("e\u0301", "latin"),  # a combining accent takes its base's class
    ("Привет", "cyrillic"),
    ("مرحبا", "arabic"),
    ("مَرْحَبًا", "arabic"),  # harakat are marks
    ("0123456789٣²", "digit"),
    (" \t\n\r\u3000\u00a0", "whitespace"),
    (".,!?;:「」。、$€©™", "punctuation"),
    ("αβγ", "other"),
    ("नमस्ते", "other"),
    ("\x00\x07", "other"),
])
def test_known_strings(text, script):
    assert classes(text) == [script] * len(text)


@pytest.mark.parametrize("text", [
    "👨\u200d👩\u200d👧",  # ZWJ family: five code points, all emoji
    "👍🏽",  # skin-tone modifier
    "🇰🇷",  # regional-indicator flag
    "1\ufe0f\u20e3",  # keycap: the digit too
    "#\ufe0f\u20e3",
    "❤\ufe0f",  # VS16
    "©\ufe0f",  # VS16 makes a typographic symbol an emoji
    "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # tag-sequence flag (England)
    "😀", "❤", "☺", "⌚",
])
def test_emoji_clusters_are_emoji_throughout(text):
    assert classes(text) == ["emoji"] * len(text)


def test_mixed_text_counts():
    text = "한국어 ok 1️⃣ ©, 東京 ひらがな カナ 🇯🇵"
    assert count_chars(text) == {
        "hangul": 3, "han": 2, "hiragana": 4, "katakana": 2, "latin": 2, "whitespace": 7,
        "punctuation": 2, "emoji": 5,
    }


def test_typographic_symbols_alone_are_punctuation():
    assert [classify_char(c) for c in "©®™‼↔"] == ["punctuation"] * 5


def test_classify_char_wants_one_character():
    with pytest.raises(ValueError, match="one character"):
        classify_char("ab")


def test_samples_are_what_they_say():
    by_file = {s.file: count_chars(s.read_text()) for s in samples()}
    korean = by_file["korean.txt"]
    assert korean["hangul"] > 0.65 * sum(korean.values())
    assert by_file["japanese.txt"]["hiragana"] > by_file["japanese.txt"]["katakana"] > 0
    assert by_file["chinese.txt"]["han"] > 400
    assert by_file["emoji_chat.txt"]["emoji"] > 50
    assert "whitespace" in by_file["json_indented.json"] and by_file["json_minified.json"]["whitespace"] < 30


@given(st.text())
def test_one_class_per_character_and_runs_cover_text(text):
    got = char_classes(text)
    assert len(got) == len(text) and all(c < len(SCRIPTS) for c in got)
    runs = list(script_runs(text))
    assert [s for s, _, _ in runs[:1]] == ([0] if text else [])
    assert all(a[1] == b[0] for a, b in zip(runs, runs[1:])) and (runs[-1][1] if runs else 0) == len(text)
    assert sum(count_chars(text).values()) == len(text)


def test_lone_surrogates_are_other():
    assert classes("a\ud800b") == ["latin", "other", "latin"]


def test_one_megabyte_is_classified_character_by_character():
    text = "".join(s.read_text() for s in samples())
    text = (text * (1_000_000 // len(text) + 1))[:1_000_000]
    got = char_classes(text)
    assert len(got) == 1_000_000
