"""Which writing system each character of a text belongs to, for per-script token costs.

Every character (code point) gets one class from `SCRIPTS`: the scripts whose token cost people ask
about (Hangul, Han, Hiragana, Katakana, Latin, Cyrillic, Arabic), plus digits, whitespace,
punctuation (punctuation *and* symbols: `.`, `「`, `$`, `©`), emoji, and `other` (every other script,
control and format characters, unassigned code points).

A character takes the class of the grapheme cluster it belongs to:

* combining marks, joiners and variation selectors take the class of the character before them
  (`e` + U+0301 is Latin twice; Arabic harakat are Arabic);
* every character of an emoji cluster is emoji: ZWJ sequences (👨‍👩‍👧 is five emoji characters),
  skin-tone modifiers, flags (regional-indicator pairs and tag sequences), keycaps (`1️⃣`: the
  digit too), and anything a variation selector 16 asks to be shown as emoji (`©️`).
* A pictograph alone counts as emoji from U+2300 on (⌚, ☺, ❤, every pictograph above U+FFFF). The
  older typographic ones (©, ®, ™, ‼, ↔) stay punctuation unless VS16 follows them: in prose they
  are marks, not emoji.

Letters are classed by their Unicode script; letters the standard files under Common but whose
script extensions name one of ours go there (`ー`, the long-vowel mark, is Katakana). Numbers of
every script (`3`, `٣`, `²`, `Ⅻ`) are digits. All Unicode data comes from the `regex` module, so one
Unicode version decides every class.

This module does not segment words and does not detect languages (Chinese and Japanese share Han).

>>> count_chars("한국어 ok 👍🏽!")
{'hangul': 3, 'latin': 2, 'whitespace': 2, 'punctuation': 1, 'emoji': 2}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np
import regex

Script = Literal[
    "hangul", "han", "hiragana", "katakana", "latin", "cyrillic", "arabic",
    "digit", "whitespace", "punctuation", "emoji", "other",
]

#: every class, in display order; `char_classes` returns indices into this tuple
SCRIPTS: tuple[Script, ...] = (
    "hangul", "han", "hiragana", "katakana", "latin", "cyrillic", "arabic",
    "digit", "whitespace", "punctuation", "emoji", "other",
)
INDEX: dict[str, int] = {name: i for i, name in enumerate(SCRIPTS)}
EMOJI = INDEX["emoji"]
OTHER = INDEX["other"]
_INHERIT = 255  # a mark or joiner: takes the class of the character before it

_LETTER_SCRIPTS = (
    ("hangul", "Hangul"), ("han", "Han"), ("hiragana", "Hiragana"), ("katakana", "Katakana"),
    ("latin", "Latin"), ("cyrillic", "Cyrillic"), ("arabic", "Arabic"),
)
# First match wins: the order is the classification rule.
_CHAR = regex.compile(
    r"(?P<whitespace>[\s\p{Z}])"
    r"|(?P<emoji>[\p{Emoji_Presentation}\p{Emoji_Modifier}\p{Regional_Indicator}]"
    r"|(?=[\u2300-\U0010FFFF])\p{Extended_Pictographic})"
    r"|(?P<digit>\p{N})"
    r"|(?P<punctuation>[\p{P}\p{S}])"
    r"|(?P<inherit>[\p{M}\p{Script=Inherited}\u20E3\U000E0020-\U000E007F])"
    + "".join(f"|(?P<{name}>\\p{{Script={script}}})" for name, script in _LETTER_SCRIPTS)
    # Common letters used inside one of our scripts; Katakana before Hiragana for `ー`
    + "".join(
        f"|(?P<x_{name}>(?=\\p{{L}})\\p{{Script_Extensions={script}}})"
        for name, script in sorted(_LETTER_SCRIPTS, key=lambda s: s[0] != "katakana")
    )
)
# Where an emoji cluster may start: a pictograph, a modifier, a flag letter, or a keycap base.
_EMOJI_CLUSTER = regex.compile(
    r"(?=[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}]|[0-9#*]\uFE0F?\u20E3)\X"
)
_EMOJI_HINT = regex.compile(r"[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\u20E3]")
_CACHE: dict[int, int] = {}


def classify_char(ch: str) -> Script:
    """Class one character alone, without the context of its grapheme cluster.

    A mark or joiner alone is `other` (in a text it takes the class of the character before it).

    >>> classify_char("한"), classify_char("ー"), classify_char("٣"), classify_char("©")
    ('hangul', 'katakana', 'digit', 'punctuation')
    """
    if len(ch) != 1:
        raise ValueError(f"classify_char takes one character, got {len(ch)}: {ch!r}")
    code = _code(ord(ch))
    return SCRIPTS[OTHER if code == _INHERIT else code]


def _code(cp: int) -> int:
    code = _CACHE.get(cp)
    if code is None:
        ch = chr(cp)
        match = _CHAR.match(ch) if not 0xD800 <= cp <= 0xDFFF else None
        name = match.lastgroup.removeprefix("x_") if match and match.lastgroup else "other"
        code = _INHERIT if name == "inherit" else INDEX[name]
        _CACHE[cp] = code
    return code


def code_points(text: str) -> np.ndarray:
    """The text's code points as a uint32 array (lone surrogates included, one per character)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


def char_classes(text: str) -> np.ndarray:
    """Give the class of every character of `text`, as indices into `SCRIPTS` (a uint8 array).

    Vectorised: each distinct code point is classed once, never each character in Python.

    >>> [SCRIPTS[c] for c in char_classes("e\\u0301 1\\ufe0f\\u20e3")]
    ['latin', 'latin', 'whitespace', 'emoji', 'emoji', 'emoji']
    """
    cps = code_points(text)
    if not len(cps):
        return np.zeros(0, dtype=np.uint8)
    # a presence mask instead of np.unique: linear, not a sort
    present = np.zeros(0x110000, dtype=bool)
    present[cps] = True
    unique = np.flatnonzero(present)
    table = np.zeros(0x110000, dtype=np.uint8)
    table[unique] = np.fromiter((_code(int(cp)) for cp in unique), dtype=np.uint8, count=len(unique))
    classes: np.ndarray = table[cps]
    _inherit_marks(classes)
    if _EMOJI_HINT.search(text):
        _mark_emoji_clusters(text, classes)
    return classes


def _inherit_marks(classes: np.ndarray) -> None:
    """Give each mark or joiner the class of the nearest character before it that is not one."""
    marks = classes == _INHERIT
    if not marks.any():
        return
    positions = np.where(marks, -1, np.arange(len(classes)))
    np.maximum.accumulate(positions, out=positions)
    filled = np.where(positions >= 0, classes[np.maximum(positions, 0)], OTHER)
    classes[marks] = filled[marks]


def _mark_emoji_clusters(text: str, classes: np.ndarray) -> None:
    """Make every character of a grapheme cluster that shows as emoji an emoji character."""
    for match in _EMOJI_CLUSTER.finditer(text):
        start, end = match.span()
        cluster = match.group()
        if (classes[start:end] == EMOJI).any() or "\ufe0f" in cluster or "\u20e3" in cluster:
            classes[start:end] = EMOJI


def count_chars(text: str) -> dict[Script, int]:
    """Count the characters of each class, in `SCRIPTS` order, leaving out classes with none."""
    counts = np.bincount(char_classes(text), minlength=len(SCRIPTS))
    return {name: int(n) for name, n in zip(SCRIPTS, counts) if n}


def script_runs(text: str) -> Iterator[tuple[int, int, Script]]:
    """Yield `(start, end, class)` for each maximal run of characters of one class.

    >>> list(script_runs("ab 한"))
    [(0, 2, 'latin'), (2, 3, 'whitespace'), (3, 4, 'hangul')]
    """
    classes = char_classes(text)
    if not len(classes):
        return
    cuts = np.flatnonzero(classes[1:] != classes[:-1]) + 1
    bounds = [0, *cuts.tolist(), len(classes)]
    for start, end in zip(bounds, bounds[1:]):
        yield start, end, SCRIPTS[classes[start]]


__all__ = [
    "EMOJI", "INDEX", "OTHER", "SCRIPTS", "Script", "char_classes", "classify_char", "code_points",
    "count_chars", "script_runs",
]
