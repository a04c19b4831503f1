"""How a token is described to a person, the same way in every view: its decoded text first (the
core's `display_text`, with named glyphs for invisible characters), the vocabulary's own spelling
(`Ġthe`, `▁the`, `<0xE6>`) second, then bytes, span, and the code points and Unicode names of
its characters. The panes' tooltips, the HTML export and the status line all use `token_tooltip`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tokviz.core.tokens import REPLACEMENT, Token, TokenKind, display_text, display_texts, hex_bytes

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


def _utf8_length(lead: int) -> int:
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 1  # a continuation byte or an invalid lead: one U+FFFD


def fragment_labels(parts: Sequence[bytes], *, visible_whitespace: bool = True) -> list[tuple[str, bool]]:
    """Read a run of neighbouring fragment tokens together: for each token, the characters that
    *begin* in it (decoded from the whole run, so a character cut across tokens is shown once, in
    the token holding its first byte), and whether its first byte continues a character begun
    in an earlier token.

    >>> fragment_labels([b"\\xea\\xb5", b"\\xad", b" \\xf0\\x9f", b"\\x91\\xa8"])
    [('국', False), ('', True), ('·👨', False), ('', True)]
    >>> fragment_labels([b"\\xe2\\x80", b"\\x8d"])
    [('⟨ZWJ⟩', False), ('', True)]
    """
    data = b"".join(parts)
    owner: list[int] = []  # byte offset -> token index
    for k, part in enumerate(parts):
        owner.extend([k] * len(part))
    chars: list[list[str]] = [[] for _ in parts]
    begun_before = [False] * len(parts)
    p = 0
    while p < len(data):
        n = _utf8_length(data[p])
        try:
            ch = data[p:p + n].decode("utf-8")
        except UnicodeDecodeError:
            ch, n = REPLACEMENT, 1
        chars[owner[p]].append(ch)
        for q in range(p + 1, min(p + n, len(data))):
            if owner[q] != owner[p]:
                begun_before[owner[q]] = True
        p += n
    out = []
    for k, got in enumerate(chars):
        label = display_text("".join(got), visible_whitespace=visible_whitespace)
        out.append((label, begun_before[k] and parts[k][:1] != b"" and (parts[k][0] & 0xC0) == 0x80))
    return out


def _utf8_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per lead byte: the length `_utf8_length` gives, and the range its second byte must fall in
    for the sequence to decode (UTF-8 has no overlong forms, surrogates or code points past U+10FFFF)."""
    length = np.array([_utf8_length(b) for b in range(256)], dtype=np.uint8)
    low, high = np.full(256, 0x80, dtype=np.uint8), np.full(256, 0xBF, dtype=np.uint8)
    low[0xE0], high[0xED], low[0xF0], high[0xF4] = 0xA0, 0x9F, 0x90, 0x8F
    return length, low, high


_LEAD_LENGTH, _SECOND_LOW, _SECOND_HIGH = _utf8_tables()
_REPLACEMENT_BYTES = np.frombuffer(REPLACEMENT.encode("utf-8"), dtype=np.uint8)


class _Reading(NamedTuple):
    """How `fragment_labels` reads the bytes of runs of tokens, byte by byte."""

    starts: np.ndarray  # per token: where its bytes begin
    ends: np.ndarray
    length: np.ndarray  # per byte: the length of the character a lead byte begins (`_utf8_length`)
    whole: np.ndarray  # per byte: a character that decodes begins here
    inside: np.ndarray  # per byte: a later byte of such a character

    @classmethod
    def of(cls, data: np.ndarray, sizes: np.ndarray, run_lengths: np.ndarray) -> _Reading:
        """`data`: the bytes of the runs' tokens, token after token; `sizes`: each token's number of
        bytes; `run_lengths`: each run's number of tokens (at least one)."""
        ends = np.cumsum(sizes)
        starts = ends - sizes
        # for every byte, how many bytes of its run it begins: a character never reaches past its run
        run_byte_ends = ends[np.cumsum(run_lengths) - 1]
        offset = np.int32 if len(data) < np.iinfo(np.int32).max else np.int64
        room = np.repeat(run_byte_ends.astype(offset), np.diff(run_byte_ends, prepend=0))
        room -= np.arange(len(data), dtype=offset)
        padded = np.concatenate([data, np.zeros(3, dtype=np.uint8)])
        length = _LEAD_LENGTH[data]
        # a character begins at byte p where `data[p:p + length]` decodes (within the run); every
        # other byte not inside such a character is one U+FFFD
        second = padded[1:len(data) + 1]
        ok2 = (room > 1) & (second >= _SECOND_LOW[data]) & (second <= _SECOND_HIGH[data])
        ok3 = ok2 & (room > 2) & ((padded[2:len(data) + 2] & 0xC0) == 0x80)
        ok4 = ok3 & (room > 3) & ((padded[3:len(data) + 3] & 0xC0) == 0x80)
        whole = np.select([length == 2, length == 3, length == 4], [ok2, ok3, ok4], default=data < 0x80)
        inside = np.zeros(len(data) + 3, dtype=bool)  # (3 more: read past the end as False)
        for k in (1, 2, 3):
            inside[np.flatnonzero(whole & (length > k)) + k] = True
        return cls(starts, ends, length, whole, inside[:len(data)])


def fragment_run_labels(parts: Sequence[bytes], run_lengths: np.ndarray, *,
                        visible_whitespace: bool = True) -> tuple[list[str], np.ndarray]:
    """`fragment_labels` of many runs at once: `parts` are their tokens' bytes, run after run, and
    `run_lengths` how many tokens each run has (at least one). Returns every token's label and
    its `continues` flag (a bool array), as `fragment_labels` of each run would, made in
    whole-array passes: a pane joins its fragment runs beside the GUI thread, which waits for
    the GIL while Python code runs there.

    >>> labels, cont = fragment_run_labels([b"\\xea\\xb5", b"\\xad", b" \\xf0\\x9f", b"\\x91\\xa8"], np.array([2, 2]))
    >>> labels, cont.tolist()
    (['국', '', '·👨', ''], [False, True, False, True])
    """
    n = len(parts)
    if not n:
        return [], np.zeros(0, dtype=bool)
    sizes = np.fromiter(map(len, parts), dtype=np.int64, count=n)
    data = np.frombuffer(b"".join(parts), dtype=np.uint8)
    read = _Reading.of(data, sizes, run_lengths)
    whole, inside, length = read.whole, read.inside, read.length
    owner = np.repeat(np.arange(n), sizes)  # byte -> token
    begun_before = np.zeros(n, dtype=bool)
    for k in (1, 2, 3):
        first = np.flatnonzero(whole & (length > k))
        other = owner[first + k]
        begun_before[other[other != owner[first]]] = True
    # the characters as UTF-8: each byte kept, each lone one replaced by U+FFFD's three bytes
    lone = ~whole & ~inside
    widths = np.where(lone, 3, 1)
    out_at = np.cumsum(widths) - widths
    out = np.repeat(data, widths)
    for k in range(3):
        out[out_at[lone] + k] = _REPLACEMENT_BYTES[k]
    # token t's characters are those beginning in it: from its first character start on
    begins = np.flatnonzero(~inside)
    bounds = np.append(out_at, len(out))[np.append(begins, len(data))[np.searchsorted(begins, read.starts)]]
    bounds = np.append(bounds, len(out)).tolist()
    text = out.tobytes()
    labels = display_texts([text[a:b] for a, b in zip(bounds[:-1], bounds[1:])],
                           visible_whitespace=visible_whitespace)
    first_byte = np.append(data, 0)[read.starts]  # 0 for a token of no bytes
    cont = begun_before & (sizes > 0) & ((first_byte & 0xC0) == 0x80)
    return labels, cont


#: the bits of a context (`fragment_contexts`): the tail's length, its bytes, the skipped bytes
_TAIL_BYTES_SHIFT, _SKIP_SHIFT = 2, 26
#: every context is below 2**CONTEXT_BITS
CONTEXT_BITS = 28


def fragment_contexts(data: np.ndarray, sizes: np.ndarray, run_lengths: np.ndarray) -> np.ndarray:
    """What `fragment_labels` reads of each token's neighbours in runs of tokens (`data`: their
    bytes, token after token; `sizes`: each token's number of bytes; `run_lengths`: each run's
    number of tokens): how many of its first bytes continue a character begun before it (0-3),
    and the bytes after it that end the last character begun in it (0-3 of them), as one
    integer below 2**CONTEXT_BITS. A token's label and flag follow from its bytes and this
    context alone (`fragment_labels_in_context`), so a pane reads each distinct (token, context)
    once.

    >>> fragment_contexts(np.frombuffer(b"\\xea\\xb5\\xad", np.uint8), np.array([2, 1]), np.array([2])).tolist() == [
    ...     (0xad << 2) + 1, 1 << 26]
    True
    """
    n = len(sizes)
    if not len(data):
        return np.zeros(n, dtype=np.int64)
    read = _Reading.of(data, sizes, run_lengths)
    inside = np.append(read.inside, np.zeros(3, dtype=bool))
    skip = np.zeros(n, dtype=np.int64)
    going = np.ones(n, dtype=bool)
    for j in range(3):
        going &= (sizes > j) & inside[read.starts + j]
        skip += going
    # the last character begun in the token, and how far past the token's end it reaches
    begins = np.flatnonzero(~read.inside)
    last = begins[np.maximum(np.searchsorted(begins, read.ends) - 1, 0)]
    reach = np.where((last >= read.starts) & (sizes > 0) & read.whole[last],
                     last + read.length[last] - read.ends, 0).clip(0)
    padded = np.append(data, np.zeros(3, dtype=np.uint8))
    context = reach + (skip << _SKIP_SHIFT)
    for i in range(3):
        tail = padded[read.ends + i].astype(np.int64)
        context += np.where(reach > i, tail, 0) << (_TAIL_BYTES_SHIFT + 8 * i)
    return context


#: a lead byte whose character takes exactly k more bytes, any continuation bytes
_LEAD_OF = {1: b"\xc2", 2: b"\xe1", 3: b"\xf1"}


def fragment_labels_in_context(parts: Sequence[bytes], contexts: np.ndarray, *,
                               visible_whitespace: bool = True) -> tuple[list[str], np.ndarray]:
    """The label and flag `fragment_labels` gives each of `parts` in a run, where `contexts` says
    what it reads of the run around it (`fragment_contexts`). Each is read as a run of its own:
    a lead byte its skipped bytes continue, the part, the tail that ends its last character.

    >>> labels, cont = fragment_labels_in_context([b"\\xea\\xb5", b"\\xad"], np.array([(0xad << 2) + 1, 1 << 26]))
    >>> labels, cont.tolist()
    (['국', ''], [False, True])
    """
    codes = np.asarray(contexts, dtype=np.int64)
    skips = (codes >> _SKIP_SHIFT).tolist()
    reaches = (codes & 3).tolist()
    tails = ((codes >> _TAIL_BYTES_SHIFT) & 0xFFFFFF).tolist()
    run: list[bytes] = []
    for part, skip, reach, tail in zip(parts, skips, reaches, tails):
        if skip:
            run.append(_LEAD_OF[skip])
        run.append(part)
        if reach:
            run.append(tail.to_bytes(3, "little")[:reach])
    lengths = 1 + (codes >> _SKIP_SHIFT > 0) + (codes & 3 > 0)
    labels, cont = fragment_run_labels(run, lengths, visible_whitespace=visible_whitespace)
    at = np.cumsum(lengths) - lengths + (codes >> _SKIP_SHIFT > 0)
    return list(map(labels.__getitem__, at.tolist())), cont[at]


def fragment_runs(kinds: Sequence[TokenKind]) -> list[range]:
    """Runs of neighbouring fragment / byte-fallback tokens (by index), in text order.

    >>> F, N = TokenKind.FRAGMENT, TokenKind.NORMAL
    >>> fragment_runs([N, F, F, N, F])
    [range(1, 3), range(4, 5)]
    """
    runs: list[range] = []
    start = None
    for k, kind in enumerate(kinds):
        if kind in _PARTIAL_KINDS:
            if start is None:
                start = k
        elif start is not None:
            runs.append(range(start, k))
            start = None
    if start is not None:
        runs.append(range(start, len(kinds)))
    return runs


def joined_fragments(tokens: Sequence[Token], *, visible_whitespace: bool = True,
                     indices: Sequence[int] | None = None) -> dict[int, tuple[str, bool]]:
    """`fragment_labels` for every fragment run of `tokens`: token index -> (label, continues).
    `indices` (sorted) limits the look to those tokens, when the caller already knows them."""
    if indices is None:
        kinds = [t.kind for t in tokens]
        runs = fragment_runs(kinds)
    else:
        runs = _runs_of(indices)
    out: dict[int, tuple[str, bool]] = {}
    for run in runs:
        labels = fragment_labels([tokens[i].bytes for i in run], visible_whitespace=visible_whitespace)
        out.update(zip(run, labels))
    return out


def _runs_of(indices: Sequence[int]) -> list[range]:
    runs: list[range] = []
    for i in indices:
        if runs and runs[-1].stop == i:
            runs[-1] = range(runs[-1].start, i + 1)
        else:
            runs.append(range(i, i + 1))
    return runs
