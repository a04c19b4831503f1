"""How a token is described to a person, the same way in every view: its decoded text first (the
core's `display_text`, with named glyphs for invisible characters), the vocabulary's own spelling
(`Ġthe`, `▁the`, `<0xE6>`) second, then bytes, span, and the code points and Unicode names of
its characters. The panes' tooltips, the HTML export and the status line all use `token_tooltip`.
"""

from __future__ import annotations

import unicodedata

from tokviz.core.tokens import REPLACEMENT, Token, TokenKind, display_text, hex_bytes

MAX_CHARS_NAMED = 12  # a long token lists its first characters' names, then "…"
_PARTIAL_KINDS = (TokenKind.FRAGMENT, TokenKind.BYTE_FALLBACK)


def char_name(ch: str) -> str:
    """`U+XXXX NAME` of one character (control characters by their alias).

    >>> char_name("\\ufe0f"), char_name("\\x07"), char_name("é")
    ('U+FE0F VARIATION SELECTOR-16', 'U+0007 <control> BELL', 'U+00E9 LATIN SMALL LETTER E WITH ACUTE')
    """
    name = unicodedata.name(ch, "")
    if not name and unicodedata.category(ch) == "Cc":
        name = "<control> " + _CONTROL_ALIASES.get(ord(ch), "")
    return f"U+{ord(ch):04X} {name or '(unnamed)'}".rstrip()


_CONTROL_ALIASES = {
    0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x09: "CHARACTER TABULATION", 0x0A: "LINE FEED",
    0x0B: "LINE TABULATION", 0x0C: "FORM FEED", 0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE",
    0x7F: "DELETE", 0x85: "NEXT LINE",
}


def char_names(text: str, *, limit: int = MAX_CHARS_NAMED) -> list[str]:
    """One line per character of `text` (at most `limit`, then `…`).

    >>> char_names("a\\u200db")
    ['U+0061 LATIN SMALL LETTER A', 'U+200D ZERO WIDTH JOINER', 'U+0062 LATIN SMALL LETTER B']
    """
    lines = [char_name(ch) for ch in text[:limit]]
    if len(text) > limit:
        lines.append(f"… {len(text) - limit} more")
    return lines


def token_tooltip(token: Token, index: int | None = None, *, text: str | None = None) -> str:
    """The hover text of a token, in the one notation.

    A fragment names the characters of the input it is part of, when `text` (the input) is given.

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> print(token_tooltip(Token(51461, b" \\xe6\\xa0", 0, 3, 0, 2, TokenKind.FRAGMENT, "Ġæł"), text=" 根"))
    id 51461 · fragment
    text: '·�'
    piece: Ġæł
    bytes: 20 e6 a0 (3)
    chars 0–2 · bytes 0–3
    part of: ' 根'
      U+0020 SPACE
      U+6839 CJK UNIFIED IDEOGRAPH-6839
    """
    head = f"id {token.id} · {token.kind.value}"
    if index is not None:
        head = f"token #{index} · " + head
    lines = [
        head,
        f"text: {display_text(token.bytes)!r}" if token.kind != TokenKind.SPECIAL else f"text: {token.piece}",
        f"piece: {token.piece}",
        f"bytes: {hex_bytes(token.bytes)} ({len(token.bytes)})",
        f"chars {token.start}–{token.end} · bytes {token.byte_start}–{token.byte_end}",
    ]
    decoded = token.bytes.decode("utf-8", errors="replace")
    if token.kind in _PARTIAL_KINDS and text is not None and token.end <= len(text):
        whole = text[token.start:token.end]
        lines.append(f"part of: {whole!r}")
        lines.extend("  " + line for line in char_names(whole))
    elif token.kind != TokenKind.SPECIAL and decoded and decoded != REPLACEMENT:
        lines.extend("  " + line for line in char_names(decoded))
    return "\n".join(lines)
