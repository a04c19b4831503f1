"""Encode a text of any length window by window, with exactly the tokens of one whole encode.

`encode_stream` reads the text as an iterable of strings (blocks of a file, say), encodes windows
of about `window` characters that overlap by `overlap` characters, and yields each window's tokens
as columns (spans on the whole text) as soon as they are known. Memory is bounded by the window,
not by the text.

Why a cut is safe. A window is cut at a token boundary `c` in the middle of its overlap with the
next window, and only where both windows cut the text into the *same* tokens (ids, bytes, char
and byte spans) over the whole middle half of the overlap, with a clean boundary at `c` (no token
crosses it). Tokens before `c` come from the first window, tokens from `c` on from the second.

* Byte-level BPE with a split pattern (tiktoken, trained vocabularies, byte-level `tokenizer.json`
  and GGUF vocabularies): the tokens are the BPE of each piece the split pattern cuts, and each
  piece is merged on its own, so the tokens agree wherever the pieces agree. The pattern is
  scanned left to right, each match starting where the last one ended, and none of the patterns
  looks behind its match, so two scans of the same characters that share a piece boundary cut
  identically from there on until one reaches the end of its window (where a lookahead such as
  `\\s+(?!\\S)` or a greedy run sees the end instead of the next character). The first window agrees
  with the whole text from its start (the previous cut, by induction) until such an end effect;
  the second window is not at its end anywhere in the overlap. Where an end effect changed a piece
  of the first window inside the compared region, the two differ there and no cut is made; a
  piece starting before the region and running past it (a long run of spaces) leaves no boundary
  in the region, and again no cut is made. Special tokens are split out before the pattern
  (tiktoken's `encode`): the overlap is far longer than any special token, so one cut by a window
  edge is whole in the other window and the region's tokens differ if it mattered.
* SentencePiece (and SentencePiece-style GGUF, ChatGLM around its inner model): the model puts a
  dummy-prefix `▁` at the start of every encoded text and may drop trailing spaces at its end, so
  a window must never be encoded from the cut; each window is encoded with context on both sides
  and only its middle is used. Segmentation is not proven local here (BPE merges and unigram
  Viterbi run over a whitespace-delimited piece, but `split_by_whitespace` is a model option):
  the agreement of two independently started windows over the middle region is the check, and
  where they disagree the cut is not made.
* A unigram model (`Tokenizer.scores_whole_text`) is the exception. Its Viterbi search sums
  scores from the text's start (sentencepiece in float32) and breaks ties between two cuts (`.` +
  `...` against `...` + `.`) by their rounding, so a token can depend on text any distance before
  it. No cut of such a text is proven safe, and a text within one window (`WINDOW`) is encoded in
  one call. A longer one is still cut, with a `StreamWarning`: one call on it would hold memory in
  proportion to it, many times its size, and sentencepiece's summed scores grow past float32's
  precision. In 5 MB
  of mixed text, 20 of 2,683,814 tokens differed from one call's with botchan-unigram-1k and 4
  of 3,927,120 with kyoto-ja-unigram-8k, the first ones 2 million tokens in, and neither count
  did. At the first difference of each, the two cuts' scores summed to within 0.004 (`ku` + `d`
  against `k` + `ud`), and one call had the better sum for kyoto but not for botchan.
* Hugging Face `tokenizer.json`: the normalizer, the pre-tokenizer (regex splits, byte level,
  metaspace with its first-word prefix) and the model run per pre-token; the same agreement check
  guards the cut.

Where no cut is found the window grows to the next one's end and the check is repeated, so the
result is the whole encode's (a unigram model's aside); only text with no agreeing boundary
anywhere (one run of megabytes of spaces) makes the window as large as that run.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator

import numpy as np

from tokviz.core.encoding import Encoding
from tokviz.core.tokenizer import AllowedSpecial, DisallowedSpecial, Tokenizer

#: characters per window, and how many of them the next window shares
WINDOW = 1 << 20
OVERLAP = 1 << 13


class StreamWarning(UserWarning):
    """A unigram model's text was encoded in windows (see the module docstring)."""


class _Text:
    """The part of a streamed text from a mark on: chars on demand, absolute offsets."""

    def __init__(self, blocks: Iterable[str]) -> None:
        self._blocks = iter(blocks)
        self.text = ""
        self.start = 0  # absolute char offset of text[0]
        self.byte_start = 0  # absolute byte offset of text[0]
        self.eof = False

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    def read_to(self, end: int) -> int:
        """Read until `end` chars are in (or the text ends); the absolute end available."""
        parts = [self.text]
        have = self.end
        while have < end and not self.eof:
            block = next(self._blocks, None)
            if block is None:
                self.eof = True
            elif block:
                parts.append(block)
                have += len(block)
        self.text = "".join(parts)
        if not self.eof and self.end == end:  # learn now whether this is the end
            block = next(self._blocks, None)
            while block == "":
                block = next(self._blocks, None)
            if block is None:
                self.eof = True
            else:
                self.text += block
        return min(end, self.end)

    def slice(self, start: int, end: int) -> str:
        return self.text[start - self.start : end - self.start]

    def byte_offset(self, at: int) -> int:
        return self.byte_start + len(self.text[: at - self.start].encode("utf-8"))

    def drop_before(self, at: int) -> None:
        self.byte_start = self.byte_offset(at)
        self.text = self.text[at - self.start :]
        self.start = at


def encode_stream(
    tokenizer: Tokenizer,
    blocks: Iterable[str],
    *,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = (),
    window: int | None = None,
    overlap: int | None = None,
) -> Iterator[Encoding]:
    """Yield the tokens of the text `blocks` spell, in order, as columns with spans on the whole
    text; together they are exactly `tokenizer.encode_columns("".join(blocks))`'s tokens.

    `window` is the tokenizer's `encode_window` by default (where it encodes faster in windows),
    else `WINDOW`; `overlap` is `OVERLAP`, or a quarter of a smaller window. Each yielded part's
    `key_index` points into its own `table`; its `n_bytes` is the byte offset where the part
    ends. A disallowed special token raises ValueError as `encode` does
    (possibly after earlier parts were yielded).

    >>> from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer
    >>> tok = TiktokenTokenizer("tiny", {b"a": 0, b"b": 1, b" ": 2, b"ab": 3}, pattern="[ab]+| ")
    >>> text = "ab ba " * 40
    >>> parts = list(encode_stream(tok, [text[:7], text[7:]], window=64, overlap=16))
    >>> len(parts) > 1, [i for p in parts for i in p.ids.tolist()] == tok.encode_ids(text)
    (True, True)
    """
    window = window or tokenizer.encode_window or WINDOW
    overlap = overlap or min(OVERLAP, window // 4)
    if window < 2 * overlap or overlap < 8:
        raise ValueError("window must be at least twice the overlap, and the overlap at least 8")
    text = _Text(blocks)
    warned = not tokenizer.scores_whole_text  # a unigram text cut into windows is told (docstring)

    def encode(start: int, end: int) -> Encoding:
        cols = tokenizer.encode_columns(
            text.slice(start, end), allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return cols.shifted(start, text.byte_offset(start))

    start, end = 0, text.read_to(window)
    cur = encode(start, end)
    first = 0  # the first token of `cur` not yet yielded
    while not (text.eof and end == text.end):  # more text after this window
        if not warned:
            warnings.warn(StreamWarning(
                f"{tokenizer.name} is a unigram model and this text is longer than {window:,} characters: "
                "it is encoded window by window, not in one call (which would hold memory in proportion to "
                "the text), so a token may differ from one call's where two cuts score alike"), stacklevel=2)
            warned = True
        next_start = end - overlap
        next_end = text.read_to(next_start + window)
        nxt = encode(next_start, next_end)
        quarter = overlap // 4
        found = _agreeing_cut(cur, nxt, next_start + quarter, end - quarter)
        if found is None:  # no safe cut here: widen the current window over the next one
            cut = int(cur.starts[first]) if first < len(cur) else end
            end = next_end
            cur = encode(start, end)
            first = _index_at(cur, cut)
            continue
        i_cur, i_next = found
        yield cur.part(first, i_cur)
        text.drop_before(next_start)
        cur, start, end, first = nxt, next_start, next_end, i_next
    yield cur.part(first, len(cur))


def encode_whole(
    tokenizer: Tokenizer,
    text: str,
    *,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = (),
) -> Encoding:
    """`tokenizer.encode_columns(text)`: the same tokens (ids, bytes, spans), encoded window by
    window where the text is longer than the tokenizer's `encode_window` (faster there), else in
    one call. Windowed, the distinct tokens may be listed in another order (`Encoding.joined`).

    >>> from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer
    >>> tok = TiktokenTokenizer("tiny", {b"a": 0, b"b": 1, b" ": 2, b"ab": 3}, pattern="[ab]+| ")
    >>> encode_whole(tok, "ab ba ab").ids.tolist() == tok.encode_ids("ab ba ab")
    True
    """
    window = tokenizer.encode_window
    if window is None or len(text) <= window:
        return tokenizer.encode_columns(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    parts = list(encode_stream(tokenizer, [text], allowed_special=allowed_special,
                               disallowed_special=disallowed_special))
    return Encoding.joined(parts, len(text.encode("utf-8", "surrogatepass")))


def _agreeing_cut(a: Encoding, b: Encoding, lo: int, hi: int) -> tuple[int, int] | None:
    """A clean token boundary in [lo, hi] where `a` and `b` cut identically over the whole of it:
    (its index in `a`, its index in `b`), or None."""
    ra = _region(a, lo, hi)
    rb = _region(b, lo, hi)
    if ra is None or rb is None:
        return None
    (a0, a1), (b0, b1) = ra, rb
    n = a1 - a0
    if n < 2 or b1 - b0 != n:
        return None
    for col in ("ids", "starts", "ends", "byte_starts", "byte_ends"):
        if not np.array_equal(getattr(a, col)[a0:a1], getattr(b, col)[b0:b1]):
            return None
    a_datas, b_datas = a.table.datas, b.table.datas
    if ([a_datas[k] for k in a.key_index[a0:a1].tolist()]
            != [b_datas[k] for k in b.key_index[b0:b1].tolist()]):
        return None
    # clean boundaries: the token before ends where this one starts, in chars and in bytes
    clean = np.flatnonzero(
        (a.ends[a0 : a1 - 1] <= a.starts[a0 + 1 : a1]) & (a.byte_ends[a0 : a1 - 1] <= a.byte_starts[a0 + 1 : a1])
        & (a.starts[a0 : a1 - 1] < a.starts[a0 + 1 : a1])
    ) + 1
    if not len(clean):
        return None
    k = int(clean[np.argmin(np.abs(clean - n // 2))])
    return a0 + k, b0 + k


def _region(cols: Encoding, lo: int, hi: int) -> tuple[int, int] | None:
    """The index range of the tokens lying within chars [lo, hi]; None where spans are not in order
    (then no cut is trusted)."""
    starts, ends = cols.starts, cols.ends
    if len(starts) and (np.any(np.diff(starts) < 0) or np.any(np.diff(ends) < 0)):
        return None
    i = int(np.searchsorted(starts, lo, "left"))
    j = int(np.searchsorted(ends, hi, "right"))
    return (i, j) if i < j else None


def _index_at(cols: Encoding, cut: int) -> int:
    """The first token starting at char `cut` or later, which a widened window must start with."""
    i = int(np.searchsorted(cols.starts, cut, "left"))
    if i < len(cols) and i > 0 and cols.ends[i - 1] > cut:
        raise RuntimeError(f"a widened window crosses the cut at char {cut}")
    return i
