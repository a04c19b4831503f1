"""Where a context limit falls in a text, and cutting a text to a number of tokens.

`context_budget` says how much of a text the first N tokens cover; `truncate_to_tokens` cuts a text
to at most N tokens at a grapheme boundary (never inside 👍🏽, 🇰🇷 or `e` + U+0301). Both work on the
real tokens of the text; nothing here estimates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from tokviz.core.encoding import span_columns
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import Token


@dataclass(frozen=True)
class ContextBudget:
    """Where a token limit falls: the first `fit_chars` characters are covered only by tokens within
    the limit (for a folder: summed over files, each file cut on its own)."""

    limit: int
    tokens: int
    fit_chars: int
    chars: int
    files: int = 1
    files_fitting: int = 0

    @property
    def fits(self) -> bool:
        """The whole text (every file of a folder) fits within the limit."""
        return self.files_fitting == self.files

    @property
    def fraction(self) -> float:
        """How much of the text fits, in characters (1.0 for an empty text)."""
        return self.fit_chars / self.chars if self.chars else 1.0

    def __add__(self, other: ContextBudget) -> ContextBudget:
        return ContextBudget(
            self.limit, self.tokens + other.tokens, self.fit_chars + other.fit_chars,
            self.chars + other.chars, self.files + other.files, self.files_fitting + other.files_fitting,
        )


def context_budget(text: str, tokens: Sequence[Token], limit: int) -> ContextBudget:
    """Say where a limit of `limit` tokens falls in `text`, encoded as `tokens`.

    `fit_chars` is the start of the first character any token past the limit touches: a character
    cut across the limit (a fragment token on each side) does not fit. Encoding `text[:fit_chars]`
    alone may give a different count; `truncate_to_tokens` makes sure.
    """
    if limit < 0:
        raise ValueError(f"the token limit must be 0 or more, got {limit}")
    if len(tokens) <= limit:
        fit = len(text)
    else:
        fit = min(int(span_columns(tokens)[2][limit:].min()), len(text))
    return ContextBudget(limit, len(tokens), fit, len(text), 1, int(len(tokens) <= limit))


_GRAPHEME = regex.compile(r"\X")


def grapheme_floor(text: str, offset: int) -> int:
    """The largest grapheme-cluster boundary <= `offset` (never splits 👍🏽, 🇰🇷, `e`+U+0301, CRLF).

    >>> grapheme_floor("a🇰🇷", 2), grapheme_floor("ab", 1)
    (1, 1)
    """
    if offset >= len(text):
        return len(text)
    # a boundary always follows a control character (Unicode rule GB4), so start scanning there
    start = max(text.rfind(c, 0, offset) for c in "\n\t") + 1
    boundary = start
    for match in _GRAPHEME.finditer(text, start):
        if match.end() > offset:
            break
        boundary = match.end()
    return boundary


def truncate_to_tokens(
    tokenizer: Tokenizer, text: str, n: int, *, policy: SpecialPolicy = SpecialPolicy()
) -> str:
    """Cut `text` to a prefix that encodes to at most `n` tokens, at a grapheme boundary.

    A prefix can encode to more tokens than the first tokens of the whole text (a word cut in half
    splits into more pieces), so the prefix is re-encoded and cut again where the limit falls in
    *its* tokens, until it fits; each round cuts at least one character, and usually one or two
    rounds do. The result always fits; it is the longest prefix when the first cut fits.

    >>> from tokviz.core.catalog import load  # doctest: +SKIP
    >>> truncate_to_tokens(load("cl100k_base"), "hello world, hello", 2)  # doctest: +SKIP
    'hello world'
    """
    if n < 0:
        raise ValueError(f"the token limit must be 0 or more, got {n}")
    cut = len(text)
    tokens = tokenizer.encode_with(text, policy)
    while len(tokens) > n:
        if cut == 0:
            raise ValueError(f"{tokenizer.name} gives {len(tokens)} tokens even for an empty text")
        fit = context_budget(text[:cut], tokens, n).fit_chars
        cut = grapheme_floor(text, min(fit, cut - 1))
        tokens = tokenizer.encode_with(text[:cut], policy)
    return text[:cut]
