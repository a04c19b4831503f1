"""Split patterns: the presets, validation of custom regexes, and counting the chunks of a text.

A split pattern cuts text into chunks before BPE; merges never cross a chunk boundary. The
presets are tiktoken's strings, copied here (tiktoken's registry functions download vocabularies).
`none` means no split by a pattern: each line (with its newline) is one chunk, as SentencePiece and
tokenizers' trainers take a file line by line; repeated lines are counted once.

This module does not read files (see `corpus`) and does not merge (see `bpe`).
"""

from __future__ import annotations

import functools
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from itertools import compress
from typing import Literal

import regex

from tokviz.core.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN
from tokviz.training.events import TrainingError
from tokviz.training.segcount import SegmentTable, count_block
from tokviz.training.splitter import BATCH as SPLIT_BATCH
from tokviz.training.splitter import SplitFinder, SplitHelper, add_pairs, count_found, split_with

PRESETS: dict[str, str | None] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "none": None,
}


def resolve_pattern(spec: str) -> tuple[str | None, str | None]:
    """Turn a preset name or a regex into `(pattern or None for no split, preset name or None)`.

    >>> resolve_pattern("none")
    (None, 'none')
    >>> resolve_pattern(r"\\w+|\\W")
    ('\\\\w+|\\\\W', None)
    """
    if spec in PRESETS:
        return PRESETS[spec], spec
    compile_pattern(spec)
    return spec, None


def compile_pattern(pattern: str | None) -> regex.Pattern[str] | None:
    """Compile a split pattern with the `regex` module, or raise TrainingError saying why."""
    if pattern is None:
        return None
    if not pattern:
        raise TrainingError("the split pattern is empty; use --pattern none for no split")
    try:
        compiled = regex.compile(pattern)
    except regex.error as e:
        raise TrainingError(f"split pattern {pattern!r} does not compile: {e}") from e
    return compiled


#: how `ChunkCounter` finds and counts segments: `re` (`SEGMENT.findall` and a Counter: the
#: readable reference), `numpy` (`segcount`: the same counts, exactly, in about half the time and
#: a third of the memory on the bench corpus), `auto` (numpy for texts of `NUMPY_MIN_BYTES` or more)
Engine = Literal["auto", "numpy", "re"]
NUMPY_MIN_BYTES = 1 << 14  # below this numpy's cost per call outweighs what it saves


def lines(text: str) -> list[str]:
    """Cut `text` after each newline (only `\\n`: the other line breaks stay inside a line).

    >>> lines("a\\nb\\r\\n\\nc")
    ['a\\n', 'b\\r\\n', '\\n', 'c']
    >>> lines("")
    []
    """
    parts = text.split("\n")
    last = parts.pop()
    out = [part + "\n" for part in parts]
    if last:
        out.append(last)
    return out


class ChunkCounter:
    """Count the chunks of many texts; `counts()` gives `chunk -> count`.

    For the preset patterns each text is cut into segments at points no match crosses
    (`SEGMENT`) and only the distinct segments are split, once, at the end: segments seen the
    same number of times are joined and split by one `findall` call. The counts are exactly those
    of `findall` on each whole text, at a fraction of the regex work, since words repeat.
    `engine` says how the segments are found and counted (`Engine`); every engine counts the same.

    >>> c = ChunkCounter(compile_pattern(CL100K_PATTERN))
    >>> c.add("the cat the hat"); c.add("the end")
    >>> sorted(c.counts().items())
    [(' cat', 1), (' end', 1), (' hat', 1), (' the', 1), ('the', 2)]
    """

    def __init__(self, compiled: regex.Pattern[str] | None, *, engine: Engine = "auto") -> None:
        self.compiled = compiled
        self.chunks: Counter[str] = Counter()
        self.segments: Counter[str] = Counter()
        self.segmented = compiled is not None and compiled.pattern in SEGMENT_SAFE
        # the smallest text `segcount` counts (-1: none)
        self.numpy_min = {"auto": NUMPY_MIN_BYTES, "numpy": 0, "re": -1}[engine]
        self.table = SegmentTable()  # the segments `segcount` counted; `segments` holds the others
        #: a helper that splits batches of the table's new segments while the text is still
        #: read (`share`); None: every segment is split at the end (`counts`)
        self.helper: SplitHelper | None = None

    def add(self, text: str, data: bytes | None = None) -> None:
        """Count `text`; `data`, when given, is its UTF-8 encoding (saves encoding it again)."""
        if self.compiled is None:
            self.chunks.update(lines(text))
            return
        findall = self.compiled.findall
        if not self.segmented:
            self.chunks.update(findall(text))
            return
        if 0 <= self.numpy_min <= len(text):
            found = count_block(text.encode("utf-8") if data is None else data)
            if found is not None:
                first, last, blocks = found
                self.chunks.update(findall(first))
                self.chunks.update(findall(last))
                for block in blocks:
                    self.table.add(block, self.segments)  # a segment whose hash collides: a string
                    self._share()
                return
        segments = SEGMENT.findall(text)
        if segments and not segments[-1]:
            segments.pop()  # findall's empty match at the end
        if len(segments) <= 2:
            self.chunks.update(findall(text))
            return
        # the first and last segments touch the ends of the text (`$` sees the end); the middle
        # ones start with a cut space and end before one, so they can be joined in any order
        self.chunks.update(findall(segments[0]))
        self.chunks.update(findall(segments[-1]))
        self.segments.update(segments[1:-1])

    def _share(self) -> None:
        """Give the helper, while it has room, batches of the segments no batch has held yet,
        merging the pending blocks in first (`flush`) when it would otherwise wait for them."""
        helper = self.helper
        if helper is None or not helper.room(SHARE_AHEAD):
            return
        if self.table.pending_size >= SHARE_PENDING:
            self.table.flush(self.segments)
        self.table.share(SHARE_BATCH, functools.partial(helper.offer, ahead=SHARE_AHEAD))

    def counts(self, check: Callable[[], None] | None = None, helper: SplitHelper | None = None) -> Counter[str]:
        """Split the pending segments and return all chunk counts; `helper` (`splitter`, by
        default the one that shared the reading) may split some of them.

        `check()` is called between batches of about a megabyte (it may raise to cancel).
        """
        if self.compiled is not None:  # segments come only with a pattern
            self.table.flush(self.segments)
            split_table(self.table, self.compiled, self.chunks, check, helper or self.helper)
            split_segments(self.segments, self.compiled, self.chunks, check)
            self.segments = Counter()
        self.chunks.pop("", None)  # a pattern that can match nothing (say `\w*`) yields empty matches
        return self.chunks


def split_segments(
    segments: dict[str, int],
    compiled: regex.Pattern[str],
    chunks: Counter[str],
    check: Callable[[], None] | None = None,
) -> None:
    """Add the chunks of `segment -> count` (middle segments, see `ChunkCounter`) to `chunks`,
    emptying `segments` as it goes (the distinct segments are the largest thing counting holds:
    each batch is let go once split, so memory falls while the chunks grow).

    Segments seen the same number of times are joined and split by one `findall` call. For the
    presets the ASCII segments (most of them, in most corpora) are split by the pattern's exact
    ASCII translation in the standard `re` module (`ascii_findall`), which is faster than `regex`
    on the same text and gives the same chunks on ASCII text.
    """
    findall = compiled.findall
    fast = ascii_findall(compiled.pattern)
    by_count: dict[int, list[str]] = {}
    for segment, n in segments.items():
        group = by_count.get(n)
        if group is None:
            by_count[n] = [segment]
        else:
            group.append(segment)
    segments.clear()
    while by_count:
        n, group = by_count.popitem()
        while group:
            if check is not None:
                check()
            batch = group[-_BATCH:]  # from the end: the list shrinks in place
            del group[-_BATCH:]
            if fast is None:
                parts = [findall("".join(batch))]
            else:
                ascii_flags = list(map(str.isascii, batch))
                rest = list(compress(batch, map(operator.not_, ascii_flags)))
                parts = [fast("".join(compress(batch, ascii_flags)))]
                if rest:
                    parts.append(findall("".join(rest)))
            del batch
            count_found(chunks, parts, n)
            del parts


def split_table(
    table: SegmentTable,
    compiled: regex.Pattern[str],
    chunks: Counter[str],
    check: Callable[[], None] | None = None,
    helper: SplitHelper | None = None,
) -> None:
    """`split_segments` for the segments of a (flushed) `SegmentTable`, emptying it; with
    `helper`, the batches it takes are split there (`splitter`).

    The ASCII segments are split as bytes (`ascii_findall_bytes`: the same chunks, and `re`
    finds and `Counter` counts bytes ~20 % faster than the same text as a str); their chunks are
    turned into strings once each, at the end.
    """
    finder = SplitFinder(compiled.pattern, ascii_pattern(compiled.pattern), chunks)

    def batches() -> Iterator[tuple[int, list[bytes]]]:
        size = _BATCH if helper is None else SPLIT_BATCH
        for batch in table.batches(size, check):  # (checked while gathered, and while split)
            if check is not None:
                check()
            yield batch

    split_with(finder, batches(), helper)
    ascii_chunks = finder.ascii_chunks
    if ascii_chunks:  # ASCII: each decodes as it is
        add_pairs(chunks, list(map(bytes.decode, ascii_chunks)), ascii_chunks.values())


_BATCH = 1 << 14  # segments split per findall call: a short step between cancel checks
SHARE_BATCH = 1 << 12  # segments in a batch `ChunkCounter._share` sends (some tens of kB)
SHARE_AHEAD = 6  # batches the helper may hold then: a few hundred kB in its pipe
SHARE_PENDING = 1 << 14  # pending segments `_share` merges into the table early


#: Cut points for the presets: before a space that follows a non-space. No alternative of these
#: patterns holds a non-space followed by a space and none looks behind, and the text before a cut
#: ends in a non-space, so `$` and `(?!\S)` see the same as in the whole text. A property test
#: checks `ChunkCounter` against `findall` on the whole text.
SEGMENT = re.compile(r" ?(?:[^ ]++|(?<=\s) )*+")
SEGMENT_SAFE = frozenset({GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN})


#: the classes the presets use, as the `regex` module defines them, restricted to ASCII
_ASCII_CLASSES = ("s", "p{L}", "p{N}", "p{Lu}", "p{Ll}", "p{Lt}", "p{Lm}", "p{Lo}", "p{M}")
_CLASS_ESCAPE = re.compile(r"\\(?:p\{[A-Za-z]+\}|[sS])")


def _ascii_members(name: str) -> str:
    """The ASCII characters in the `regex` class `\\name`, as the inside of a `re` class."""
    test = regex.compile("\\" + name)
    return "".join(re.escape(c) if c not in "\t\n\r\x0b\x0c" else repr(c)[1:-1]
                   for c in map(chr, range(128)) if test.fullmatch(c))


@cache
def ascii_pattern(pattern: str) -> str | None:
    r"""`pattern` rewritten for the standard `re` module, exact on ASCII text; None when it uses
    a class escape this does not translate (only the presets are translated).

    `\p{..}` and `\s` become the ASCII characters the `regex` module puts in them, `\S` their
    complement; possessive quantifiers, lookahead, `$` and scoped `(?i:...)` mean the same in
    `re` (Python 3.11+). A property test checks every preset against `regex` on ASCII text.

    >>> ascii_pattern(GPT2_PATTERN)[:33]
    "'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]++"
    >>> ascii_pattern(r"\\w+") is None
    True
    """
    if pattern not in SEGMENT_SAFE:
        return None
    members = {name: _ascii_members(name) for name in _ASCII_CLASSES}
    members["p{L}"], members["p{N}"] = "A-Za-z", "0-9"  # the same sets, shorter
    members["p{Lu}"], members["p{Ll}"] = "A-Z", "a-z"
    out, depth, i = [], 0, 0
    for m in _CLASS_ESCAPE.finditer(pattern):
        text = pattern[i : m.start()]
        depth = _class_depth(text, depth)
        out.append(text)
        name = m.group()[1:]
        if name == "S":
            if depth:
                return None  # a negated class inside a class: not needed by the presets
            out.append(f"[^{members['s']}]")
        else:
            inside = members[name]
            if depth:
                out.append(inside)
            elif inside:
                out.append(f"[{inside}]")
            else:
                return None
        i = m.end()
    out.append(pattern[i:])
    return "".join(out)


def _class_depth(text: str, depth: int) -> int:
    """Whether the pattern is inside a `[...]` after `text` (the presets do not nest classes)."""
    escaped = False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == "[":
            depth = 1
        elif c == "]":
            depth = 0
    return depth


@cache
def ascii_findall(pattern: str) -> Callable[[str], list[str]] | None:
    """`re.compile(ascii_pattern(pattern)).findall`, or None (see `ascii_pattern`)."""
    translated = ascii_pattern(pattern)
    return None if translated is None else re.compile(translated).findall


@cache
def ascii_findall_bytes(pattern: str) -> Callable[[bytes], list[bytes]] | None:
    """`ascii_findall` for ASCII bytes: the translation has no class escape left, only ASCII
    characters, so as a bytes pattern it finds the same chunks, as bytes."""
    translated = ascii_pattern(pattern)
    return None if translated is None else re.compile(translated.encode("ascii")).findall


def chunk_key(text: str) -> str:
    """A chunk as the merge loop holds it: one character per byte, whose code point is the byte.

    >>> chunk_key("é")
    'Ã©'
    """
    return text.encode("utf-8").decode("latin-1")
