"""Where tokenizers agree and where they differ on one text: the boundary diff, Qt-free.

Every tokenizer cuts the same text; a *cut* is a character boundary `p` (`0 < p < len(text)`) where
one of its tokens ends and one begins (the two ends of the text are not counted: every tokenizer
"cuts" there). A character split across several byte tokens is not cut inside: no character
boundary lies there. Cuts are kept as sorted numpy arrays, one entry per token, so a text costs
memory in proportion to its tokens, and every set operation is one numpy call.

Agreement of two cuttings is the share of the boundaries cut by either side that both cut:
`|A ∩ B| / |A ∪ B|` as a percentage (100 when neither cuts anywhere). It is symmetric, and 100
exactly when the two cut at the same places (the ids may still differ).

For two cuttings, the *differing stretches* are the minimal character ranges between boundaries
both cut (or the ends of the text) inside which one side cuts where the other does not; each lists
the tokens of each side in it. `identical` is the stronger fact: the two id sequences are equal.

>>> from tokviz.core.tokens import Token, TokenKind
>>> def cut(*spans):
...     return [Token(n, b"", 0, 0, s, e, TokenKind.NORMAL, "") for n, (s, e) in enumerate(spans)]
>>> d = diff_cuttings([cut((0, 2), (2, 5), (5, 6)), cut((0, 3), (3, 5), (5, 6))], n_chars=6)
>>> d.cuts[0].tolist(), d.cuts[1].tolist(), round(d.agreement[1], 2)
([2, 5], [3, 5], 33.33)
>>> [(s.start, s.end) for s in d.stretches()]
[(0, 5)]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from tokviz.core.encoding import Encoding
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import Token

__all__ = ["BoundaryDiff", "Stretch", "agreement", "cuts_of", "diff_cuttings", "diff_texts"]


def cuts_of(tokens: Sequence[Token], n_chars: int) -> np.ndarray:
    """The sorted character boundaries strictly inside the text where a token begins and every
    token before it has ended (token spans come in text order, as every backend gives them)."""
    starts, ends = _spans(tokens)
    if len(starts) < 2:
        return np.zeros(0, dtype=np.int64)
    reach = np.maximum.accumulate(ends[:-1])  # how far the tokens before each one go
    at = starts[1:][starts[1:] == reach]
    at = at[(at > 0) & (at < n_chars)]
    if len(at):
        at = at[np.concatenate(([True], at[1:] != at[:-1]))]  # sorted already: drop repeats
    return at.astype(np.int64, copy=False)


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """`|A ∩ B| / |A ∪ B|` in percent for two sorted unique cut arrays; 100.0 when both are empty.

    >>> round(agreement(np.array([1, 2]), np.array([2, 3])), 2), agreement(np.array([]), np.array([]))
    (33.33, 100.0)
    """
    shared = len(_in_sorted(a, b).nonzero()[0])
    union = len(a) + len(b) - shared
    if union == 0:
        return 100.0
    return 100.0 * shared / union


@dataclass(frozen=True)
class Stretch:
    """A character range `start:end` between two shared cuts where the two sides cut differently;
    `left` and `right` are the tokens of each side that lie in it."""

    start: int
    end: int
    left: list[Token]
    right: list[Token]


@dataclass
class BoundaryDiff:
    """The cuts of two or more tokenizations of one text, compared with a reference (index `reference`)."""

    n_chars: int
    tokens: list[Sequence[Token]]
    cuts: list[np.ndarray]
    reference: int = 0
    agreement: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        ref = self.cuts[self.reference]
        self.agreement = [agreement(ref, c) for c in self.cuts]

    def identical(self, a: int = 0, b: int = 1) -> bool:
        """Whether sides `a` and `b` gave the same ids (and so also the same cuts)."""
        ta, tb = self.tokens[a], self.tokens[b]
        if isinstance(ta, Encoding) and isinstance(tb, Encoding):
            return bool(np.array_equal(ta.ids, tb.ids))
        return [t.id for t in ta] == [t.id for t in tb]

    def stretch_ranges(self, a: int = 0, b: int = 1) -> np.ndarray:
        """The differing stretches of sides `a` and `b` as an `(n, 2)` array of `[start, end)`."""
        ca, cb = self.cuts[a], self.cuts[b]
        a_in_b = _in_sorted(ca, cb)
        shared = np.concatenate(([0], ca[a_in_b], [self.n_chars]))
        only = np.sort(np.concatenate((ca[~a_in_b], cb[~_in_sorted(cb, ca)])))
        which = np.searchsorted(shared, only, side="right") - 1
        if len(which):
            which = which[np.concatenate(([True], which[1:] != which[:-1]))]
        return np.stack([shared[which], shared[which + 1]], axis=1) if len(which) else np.zeros((0, 2), np.int64)

    def stretches(self, a: int = 0, b: int = 1) -> Iterator[Stretch]:
        """The differing stretches of sides `a` and `b`, in text order, with their tokens."""
        ta, tb = self.tokens[a], self.tokens[b]
        ranges = self.stretch_ranges(a, b)
        for (lo, hi), left, right in zip(ranges.tolist(), _tokens_in(ta, ranges), _tokens_in(tb, ranges)):
            yield Stretch(lo, hi, left, right)

    def count_stretches(self, a: int = 0, b: int = 1) -> int:
        return len(self.stretch_ranges(a, b))


def diff_cuttings(tokens: Sequence[Sequence[Token]], n_chars: int, reference: int = 0) -> BoundaryDiff:
    """Compare tokenizations of one text of `n_chars` characters (at least one)."""
    if not tokens:
        raise ValueError("a diff needs at least one tokenization")
    if not 0 <= reference < len(tokens):
        raise ValueError(f"reference {reference} is not one of the {len(tokens)} tokenizations")
    return BoundaryDiff(n_chars, list(tokens), [cuts_of(t, n_chars) for t in tokens], reference)


def diff_texts(
    text: str, tokenizers: Sequence[Tokenizer], policy: SpecialPolicy | None = None, reference: int = 0
) -> BoundaryDiff:
    """Cut `text` with every tokenizer (as columns, under one special-token policy) and compare.

    Character positions refer to the text the tokenizers cut (`tokviz.core.tokens.sanitize`d).
    Raises `ValueError` when the policy forbids special-token text that the input holds.
    """
    from tokviz.core.tokens import sanitize

    policy = policy or SpecialPolicy()
    cuttings = [
        t.encode_columns(text, allowed_special=policy.allowed_special, disallowed_special=policy.disallowed_special)
        for t in tokenizers
    ]
    return diff_cuttings(cuttings, len(sanitize(text)), reference)


def _in_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For sorted unique `a` and `b`: a mask of the entries of `a` that are in `b` (no hashing:
    numpy's `unique` is slow on large arrays)."""
    if len(b) == 0:
        return np.zeros(len(a), dtype=bool)
    at = np.searchsorted(b, a).clip(max=len(b) - 1)
    return np.asarray(b[at] == a)


def _spans(tokens: Sequence[Token]) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(tokens, Encoding):
        return tokens.starts, tokens.ends
    n = len(tokens)
    return (np.fromiter((t.start for t in tokens), dtype=np.int64, count=n),
            np.fromiter((t.end for t in tokens), dtype=np.int64, count=n))



def _tokens_in(tokens: Sequence[Token], ranges: np.ndarray) -> Iterator[list[Token]]:
    """For each `[lo, hi)` of `ranges`, the tokens starting in it: with `lo` and `hi` both cuts,
    exactly the tokens inside. From columns, the tokens of all the ranges are built in one pass."""
    bounds = np.searchsorted(_spans(tokens)[0], ranges, side="left")
    if not isinstance(tokens, Encoding):
        for i0, i1 in bounds.tolist():
            yield list(tokens[i0:i1])
        return
    counts = bounds[:, 1] - bounds[:, 0]
    # the indices of every range's tokens, concatenated: i0, i0+1, ..., i1-1 per range
    total = int(counts.sum())
    index = np.arange(total, dtype=np.int64) + np.repeat(bounds[:, 0] - np.cumsum(counts) + counts, counts)
    c = tokens
    rows = c.table.rows()
    built = [
        Token(i, rows[k][1], bs, be, st, en, rows[k][2], rows[k][3])
        for i, k, bs, be, st, en in zip(
            c.ids[index].tolist(), c.key_index[index].tolist(), c.byte_starts[index].tolist(),
            c.byte_ends[index].tolist(), c.starts[index].tolist(), c.ends[index].tolist(),
        )
    ]
    at = 0
    for n in counts.tolist():
        yield built[at:at + n]
        at += n
