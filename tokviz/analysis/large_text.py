"""A large file counted in blocks: the counts `stats` gives for the whole text, in bounded memory.

`LargeText` reads a file in blocks and cuts its text only right after a newline that is followed
by an ASCII character. No count of `TextStats` crosses such a cut: a word ends at the newline
(whitespace), a line ends with it, and the character classes do not either: a mark or joiner takes
the class of the character before it, and an ASCII character is neither a mark nor a joiner, so
the first character of a block is classed on its own; an emoji cluster never holds a newline.
`count_tokens` encodes the blocks with `tokviz.core.stream` (exactly the whole encode's tokens)
and attributes each streamed part to scripts with the classes of its own characters.

Token counts, characters, bytes, words, lines, characters per script and the context budget are
exactly the whole text's, and so are the tokens per script: they are summed as whole numbers
(`attribution.share_counts`) and turned into floats once.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tokviz.analysis.attribution import add_share_counts, share_counts
from tokviz.analysis.budget import ContextBudget
from tokviz.core.scripts import SCRIPTS, char_classes
from tokviz.core.stream import encode_stream
from tokviz.core.textfile import wide_text
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.walk import Skipped

#: bytes read at a time
BLOCK_BYTES = 1 << 20


class LargeText:
    """A UTF-8 file's text as blocks cut where no count crosses (see the module docstring)."""

    def __init__(self, path: Path, *, block_bytes: int | None = None) -> None:
        self.path = path
        self.block_bytes = block_bytes or BLOCK_BYTES

    def problem(self) -> Skipped | None:
        """Why the file is skipped, as `stats.read_text_file` says it (a NUL byte anywhere first,
        then the first byte that is not UTF-8), or None."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset, bad = 0, None
        try:
            with open(self.path, "rb") as f:
                while True:
                    block = f.read(self.block_bytes)
                    if not offset and (wide := wide_text(block[:4])) is not None:
                        return Skipped(str(self.path), wide)
                    if (nul := block.find(b"\0")) >= 0:
                        return Skipped(str(self.path), f"binary (NUL byte at offset {offset + nul})")
                    if bad is None:
                        try:
                            decoder.decode(block, final=not block)
                        except UnicodeDecodeError as e:
                            start = offset + len(block) - len(e.object) + e.start
                            bad = f"not UTF-8 (byte 0x{e.object[e.start]:02x} at offset {start})"
                    if not block:
                        break
                    offset += len(block)
        except OSError as e:
            return Skipped(str(self.path), f"unreadable ({e.strerror or e})")
        return Skipped(str(self.path), bad) if bad else None

    def blocks(self) -> Iterator[str]:
        """The text in blocks, each cut right after a newline followed by an ASCII character (the
        last one ends where the text does)."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        held = ""
        with open(self.path, "rb") as f:
            while True:
                data = f.read(self.block_bytes)
                held += decoder.decode(data, final=not data)
                if not data:
                    break
                cut = _last_cut(held)
                if cut:
                    yield held[:cut]
                    held = held[cut:]
        if held:
            yield held


def _last_cut(text: str) -> int:
    """One past the last newline of `text` that is followed by an ASCII character; 0 for none."""
    at = len(text) - 1
    while (at := text.rfind("\n", 0, at)) >= 0:
        if text[at + 1].isascii():
            return at + 1
    return 0


@dataclass(frozen=True)
class TextCounts:
    """What `TextStats.of` counts, summed over blocks."""

    chars: int
    bytes: int
    words: int
    lines: int
    script_chars: dict[str, int]


def count_text(text: LargeText) -> TextCounts:
    chars = n_bytes = words = newlines = 0
    scripts = np.zeros(len(SCRIPTS), dtype=np.int64)
    last = ""
    for block in text.blocks():
        chars += len(block)
        n_bytes += len(block.encode("utf-8"))
        words += len(block.split())
        newlines += block.count("\n")
        scripts += np.bincount(char_classes(block), minlength=len(SCRIPTS))
        last = block[-1]
    lines = newlines + (1 if chars and last != "\n" else 0)
    return TextCounts(chars, n_bytes, words, lines, dict(zip(SCRIPTS, scripts.tolist())))


@dataclass(frozen=True)
class TokenCounts:
    tokens: int
    shares: np.ndarray  # attribution.share_counts of the whole text
    budget: ContextBudget | None


class _Read:
    """The blocks read so far and not yet attributed, with their character classes."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.classes: list[np.ndarray] = []
        self.start = 0  # char offset of texts[0]

    def feed(self, blocks: Iterator[str]) -> Iterator[str]:
        for block in blocks:
            self.texts.append(block)
            self.classes.append(char_classes(block))
            yield block

    def take(self, end: int) -> tuple[str, np.ndarray]:
        """The text and classes from `start` to `end`, dropped from what is kept."""
        text = "".join(self.texts)
        classes = np.concatenate(self.classes) if self.classes else np.zeros(0, dtype=np.uint8)
        cut = end - self.start
        self.texts, self.classes = [text[cut:]], [classes[cut:]]
        self.start = end
        return text[:cut], classes[:cut]


def count_tokens(
    text: LargeText, tokenizer: Tokenizer, policy: SpecialPolicy, limit: int | None, chars: int
) -> TokenCounts:
    """Tokens, tokens per script and the context budget of the whole text (`chars` characters),
    part by part."""
    read = _Read()
    parts = encode_stream(
        tokenizer, read.feed(text.blocks()), allowed_special=policy.allowed_special,
        disallowed_special=policy.disallowed_special,
    )
    tokens = 0
    shares = np.zeros((len(SCRIPTS), 1), dtype=np.int64)
    fit: int | None = None  # the first character a token past the limit touches
    byte_start = 0
    for part in parts:
        n = len(part.ids)
        if not n:
            continue
        end = int(part.ends[-1])
        char_start = read.start
        chunk, classes = read.take(end)
        part_shares = share_counts(chunk, part.shifted(-char_start, -byte_start), classes)
        shares = add_share_counts(shares, part_shares)
        byte_start += len(chunk.encode("utf-8"))
        if limit is not None and tokens + n > limit:
            first_past = int(part.starts[max(limit - tokens, 0):].min())
            fit = first_past if fit is None else min(fit, first_past)
        tokens += n
    budget = None
    if limit is not None:
        fitted = chars if fit is None else min(fit, chars)
        budget = ContextBudget(limit, tokens, fitted, chars, 1, int(tokens <= limit))
    return TokenCounts(tokens, shares, budget)
