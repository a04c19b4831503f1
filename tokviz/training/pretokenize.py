"""Split patterns: the presets, validation of custom regexes, and counting the chunks of a text.

A split pattern cuts text into chunks before BPE; merges never cross a chunk boundary. The
presets are tiktoken's strings, copied here (tiktoken's registry functions download vocabularies).
`none` means no split: each document (or each streamed block of a very large file) is one chunk.

This module does not read files (see `corpus`) and does not merge (see `bpe`).
"""

from __future__ import annotations

from collections import Counter

import regex

from tokviz.training.events import TrainingError

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
PRESETS: dict[str, str | None] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "none": None,
}
#: what tiktoken / tokenizers get for "no split": one chunk holding the whole text
WHOLE_TEXT_PATTERN = r"[\s\S]+"


def resolve_pattern(spec: str | None) -> tuple[str | None, str | None]:
    """Turn a preset name or a regex into `(pattern or None for no split, preset name or None)`.

    >>> resolve_pattern("none")
    (None, 'none')
    >>> resolve_pattern(r"\\w+|\\W")
    ('\\\\w+|\\\\W', None)
    """
    if spec is None:
        spec = "cl100k"
    if spec in PRESETS:
        return PRESETS[spec], spec
    compile_pattern(spec)
    return spec, None


def compile_pattern(pattern: str | None) -> regex.Pattern | None:
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


def count_chunks(text: str, compiled: regex.Pattern | None, counts: Counter[str]) -> None:
    """Add the chunks of `text` to `counts` (text outside every match is dropped, as in tiktoken).

    For the preset patterns the text is first cut into space-led segments and each distinct
    segment is split once (see `_segments`); the counts are exactly those of `findall` on the
    whole text, several times faster on prose, where words repeat.
    """
    if compiled is None:
        if text:
            counts[text] += 1
        return
    findall = compiled.findall
    if compiled.pattern not in _SEGMENT_SAFE:
        counts.update(findall(text))
    else:
        for segment, n in Counter(_segments(text)).items():
            if n == 1:
                counts.update(findall(segment))
            else:
                for chunk in findall(segment):
                    counts[chunk] += n
    counts.pop("", None)  # a pattern that can match nothing (say `\w*`) yields empty matches


#: patterns for which a space that follows a non-space always starts a new chunk: no alternative
#: holds a non-space followed by a space, none looks behind, and the segment before the cut ends
#: in a non-space, so `$` and `(?!\S)` see the same thing as in the whole text. Checked by a
#: property test against `findall` on the whole text.
_SEGMENT_SAFE = frozenset({GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN})


def _segments(text: str) -> list[str]:
    """Cut `text` before every space that follows a non-space character.

    >>> _segments("a b  c\\n d")
    ['a', ' b', '  c\\n d']
    """
    parts = text.split(" ")
    out: list[str] = []
    append = out.append
    pending = parts[0]
    for part in parts[1:]:
        if pending and not pending[-1].isspace():
            append(pending)
            pending = " " + part
        else:
            pending += " " + part
    append(pending)
    return out


def chunk_key(text: str) -> str:
    """A chunk as the merge loop holds it: one character per byte, whose code point is the byte.

    >>> chunk_key("é")
    'Ã©'
    """
    return text.encode("utf-8").decode("latin-1")
