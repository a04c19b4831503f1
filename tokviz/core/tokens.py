"""Tokens: what every backend returns and every view draws.

A token is the truth in bytes (`Token.bytes`) plus where it sits in the input (byte and character
spans) and what kind of thing it is. Text is only a view of the bytes: `display_text` is the one
function that turns a token's bytes into something a person can read.

This module does not tokenize anything; backends do (see `tokviz.core.backends`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import regex

REPLACEMENT = "\ufffd"


class TokenKind(str, enum.Enum):
    NORMAL = "normal"
    SPECIAL = "special"  # special / control token (`<|endoftext|>`, `<s>`, `[CLS]`)
    FRAGMENT = "fragment"  # bytes that are not whole UTF-8 characters (part of a character)
    BYTE_FALLBACK = "byte_fallback"  # SentencePiece `<0xNN>` piece
    UNKNOWN = "unknown"  # the vocabulary's unknown piece (`<unk>`)

    def __str__(self) -> str:
        return self.value


class Token(NamedTuple):
    """One token of an encoded text.

    `bytes` are the bytes the token stands for (what decoding it alone gives before UTF-8 decoding).
    `byte_start:byte_end` is its span in the UTF-8 encoding of the input and `start:end` its span in
    characters. Where a character is cut across several tokens, each of them covers that character,
    and the byte span says which of its bytes the token holds. For a model that normalizes its input
    (SentencePiece NFKC), the spans refer to the original text while `bytes` are what the model saw.

    A NamedTuple rather than a frozen dataclass: a long paste makes hundreds of thousands of tokens
    per pane, and a tuple is cheaper to construct. It is just as immutable.

    >>> t = Token(51461, b" \\xe6\\xa0", 0, 3, 0, 2, TokenKind.FRAGMENT, "Ġæł")
    >>> display_text(t.bytes)
    '·�'
    """

    id: int
    bytes: bytes
    byte_start: int
    byte_end: int
    start: int
    end: int
    kind: TokenKind
    piece: str  # the token as the vocabulary spells it (`▁the`, `Ġthe`, `<|endoftext|>`)

    @property
    def is_fragment(self) -> bool:
        return is_fragment(self.bytes)

    @property
    def text(self) -> str:
        """The token's bytes decoded alone, with U+FFFD where they are partial."""
        return self.bytes.decode("utf-8", errors="replace")


def is_fragment(data: bytes) -> bool:
    """True when `data` is not a sequence of whole UTF-8 characters.

    >>> is_fragment(b" \\xe6\\xa0"), is_fragment("根".encode())
    (True, False)
    """
    if data.isascii():
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


#: C0 control characters by their standard abbreviations (the control pictures U+2400.. are
#: empty boxes in most fonts: a name can be read)
_C0_NAMES = (
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
    "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
)
#: characters that draw as nothing (or as a space) get a visible name; always shown, whatever
#: the whitespace setting, since the text looks the same with and without them
INVISIBLE_NAMES: dict[str, str] = {
    **{chr(c): _C0_NAMES[c] for c in range(0x20) if chr(c) not in "\t\n\r"},
    "\x7f": "DEL",
    **{chr(c): f"U+{c:04X}" for c in range(0x80, 0xA0)},
    "\x85": "NEL",
    "\u00ad": "SHY",
    "\u034f": "CGJ",
    "\u061c": "ALM",
    "\u180e": "MVS",
    "\u200b": "ZWSP",
    "\u200c": "ZWNJ",
    "\u200d": "ZWJ",
    "\u200e": "LRM",
    "\u200f": "RLM",
    "\u2028": "LS",
    "\u2029": "PS",
    **{chr(0x202A + k): name for k, name in enumerate(("LRE", "RLE", "PDF", "LRO", "RLO"))},
    "\u2060": "WJ",
    "\u2061": "FA",
    "\u2062": "IT",
    "\u2063": "IS",
    "\u2064": "IP",
    **{chr(0x2066 + k): name for k, name in enumerate(("LRI", "RLI", "FSI", "PDI"))},
    **{chr(0xFE00 + k): f"VS{k + 1}" for k in range(16)},
    "\ufeff": "BOM",
}
#: whitespace made visible (when the view asks for it); CR is named so CRLF reads as two characters
_WHITESPACE = {" ": "·", "\t": "→", "\n": "↵", "\r": "⟨CR⟩", "\u00a0": "⟨NBSP⟩", "\u3000": "□"}
_NAMED = {ch: f"⟨{name}⟩" for ch, name in INVISIBLE_NAMES.items()}
_VISIBLE_TABLE = str.maketrans({**_NAMED, **_WHITESPACE})
_CONTROL_ONLY_TABLE = str.maketrans(_NAMED)
#: a named character followed by a combining mark (VS16 then the keycap U+20E3 in `1️⃣`): the mark
#: would draw on the name's closing `⟩` (a keycap around it), so it gets the dotted circle U+25CC,
#: the base Unicode shows a mark on alone
_LABELLED = "".join(_NAMED)
_NAME_THEN_MARK = regex.compile(f"([{regex.escape(_LABELLED)}])(?=\\p{{M}})")
_LABEL_THEN_MARK = regex.compile(f"([{regex.escape(_LABELLED + chr(13) + chr(0xA0))}])(?=\\p{{M}})")
_DOTTED_CIRCLE = "\u25cc"


def display_text(data: bytes | str, *, visible_whitespace: bool = True) -> str:
    """Give the text a view shows for a token's bytes (the one notation of every view).

    Partial UTF-8 becomes U+FFFD (as a streaming decoder shows it); characters that draw as
    nothing get their name in angle brackets (`⟨ZWJ⟩`, `⟨VS16⟩`, `⟨BEL⟩`, `⟨BOM⟩`) and, unless
    switched off, whitespace is made visible (`·` space, `→` tab, `↵` newline, `⟨CR⟩`, `⟨NBSP⟩`).

    >>> display_text(b"a b\\t\\r\\n\\xe6")
    'a·b→⟨CR⟩↵�'
    >>> display_text("❤\\ufe0f\\u200d\\x07\\u00a0", visible_whitespace=False)
    '❤⟨VS16⟩⟨ZWJ⟩⟨BEL⟩\\xa0'

    A combining mark right after a name is drawn on a dotted circle, not on the name's `⟩`:

    >>> display_text("1\\ufe0f\\u20e3")
    '1⟨VS16⟩◌⃣'
    """
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    if not text.isascii():  # an ASCII text holds no combining mark
        text = (_LABEL_THEN_MARK if visible_whitespace else _NAME_THEN_MARK).sub(rf"\1{_DOTTED_CIRCLE}", text)
    return text.translate(_VISIBLE_TABLE if visible_whitespace else _CONTROL_ONLY_TABLE)


#: what `display_texts` puts between the texts: a noncharacter, so no decoder merges it with a
#: neighbour's partial bytes (its lead byte ends any partial sequence before it, and it ends whole),
#: it has no name in the notation and is no combining mark (nothing is drawn on it or after it)
_SEPARATOR = "\uffff"
_SEPARATOR_BYTES = _SEPARATOR.encode("utf-8")


def display_texts(datas: Sequence[bytes], *, visible_whitespace: bool = True) -> list[str]:
    """Give `display_text` of each of `datas`, made a few thousand at a time.

    A whole column of a pane's tokens at once: they are joined with a separator, shown as one
    text and split again, so the Python work does not grow with their number. Each such pass
    holds the GIL while it runs, so the column goes in slices of `_SLICE`, between which other
    threads get their turn. Where one of them holds the separator itself, each is shown alone.

    >>> display_texts([b"a b", b"\\xe6\\xa0", b"\\xad\\n", b""])
    ['a·b', '�', '�↵', '']
    """
    shown: list[str] = []
    for start in range(0, len(datas), _SLICE):
        shown += _display_joined(datas[start:start + _SLICE], visible_whitespace)
    return shown


#: how many texts `display_texts` shows in one pass
_SLICE = 1 << 12


def _display_joined(datas: Sequence[bytes], visible_whitespace: bool) -> list[str]:
    if len(datas) < 2:
        return [display_text(data, visible_whitespace=visible_whitespace) for data in datas]
    text = _SEPARATOR_BYTES.join(datas).decode("utf-8", errors="replace")
    if text.count(_SEPARATOR) != len(datas) - 1:  # one of them holds U+FFFF: no split would be right
        return [display_text(data, visible_whitespace=visible_whitespace) for data in datas]
    return display_text(text, visible_whitespace=visible_whitespace).split(_SEPARATOR)


def hex_bytes(data: bytes) -> str:
    """Bytes as space-separated hex pairs, as the token tables show them.

    >>> hex_bytes(b" \\xe6\\xa0")
    '20 e6 a0'
    """
    return data.hex(" ")


def sanitize(text: str) -> str:
    """Give the text tiktoken's `encode` cuts: surrogate pairs joined, lone surrogates U+FFFD.

    A Python string can hold UTF-16 surrogates, which UTF-8 cannot encode. tiktoken fixes such a
    string up before encoding (`encode("utf-16", "surrogatepass").decode("utf-16", "replace")`):
    a high surrogate followed by a low one becomes the character they spell, any other surrogate
    U+FFFD. tokviz does exactly that, once, for every backend, so bytes and ids agree with tiktoken.
    Spans then refer to the sanitized text, which is shorter by one character per joined pair
    (each lone surrogate is one code point, and so is its U+FFFD).

    >>> sanitize("\\ud83d\\ude00 a\\ud800b") == "\\U0001f600 a\\ufffdb"
    True
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class OffsetMap:
    """Maps byte offsets in the UTF-8 encoding of a text to character offsets, and back.

    Built with numpy, not a Python loop per byte.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        raw = np.frombuffer(self.data, dtype=np.uint8)
        starts = (raw & 0xC0) != 0x80  # bytes that begin a character
        # 4 bytes an offset where they fit (a text under 2 GB): the two maps are 12 bytes a byte of
        # text or more, twice that as int64, made once per encode at a time
        offset = np.dtype(np.int32 if len(self.data) < np.iinfo(np.int32).max else np.int64)
        # char_of[b] = index of the character that byte b belongs to; char_of[len] = len(text)
        self._char_of: np.ndarray = np.empty(len(self.data) + 1, dtype=offset)
        np.cumsum(starts, out=self._char_of[:-1])
        self._char_of[:-1] -= 1
        self._char_of[-1] = len(text)
        self._byte_of: np.ndarray = np.empty(len(text) + 1, dtype=offset)
        self._byte_of[:-1] = np.flatnonzero(starts)
        self._byte_of[-1] = len(self.data)

    def char_start(self, byte_offset: int) -> int:
        """The character that contains `byte_offset`."""
        return int(self._char_of[byte_offset])

    def char_end(self, byte_offset: int) -> int:
        """One past the character that contains byte `byte_offset - 1`."""
        if byte_offset == 0:
            return 0
        return int(self._char_of[byte_offset - 1]) + 1

    def byte_offset(self, char_offset: int) -> int:
        return int(self._byte_of[char_offset])

    @property
    def byte_offsets(self) -> np.ndarray:
        """`byte_offsets[c]` = byte offset of character `c`; `byte_offsets[len(text)]` = total."""
        return self._byte_of

    def char_spans(self, byte_starts: np.ndarray, byte_ends: np.ndarray) -> tuple[list[int], list[int]]:
        """Vectorised `char_start` / `char_end` for many spans at once."""
        starts, ends = self.char_span_arrays(byte_starts, byte_ends)
        return starts.tolist(), ends.tolist()

    def char_span_arrays(self, byte_starts: np.ndarray, byte_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        starts = self._char_of[byte_starts]
        ends = np.where(byte_ends > byte_starts, self._char_of[np.maximum(byte_ends - 1, 0)] + 1, starts)
        return starts, ends


def kind_for_bytes(data: bytes) -> TokenKind:
    return TokenKind.FRAGMENT if is_fragment(data) else TokenKind.NORMAL
