"""Tokens per script: which writing systems a text's tokens are spent on.

A token's weight of 1 is spread evenly over the bytes of the input it covers, and each byte counts
for the class (`tokviz.core.scripts`) of its character. A token that covers no input
(SentencePiece's dummy-prefix `▁`) counts for the classes of its own text (whitespace). So the
per-script counts of a text always add up to its token count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tokviz.core.encoding import span_columns
from tokviz.core.scripts import OTHER, SCRIPTS, char_classes, code_points
from tokviz.core.tokens import Token


def attribute_tokens(text: str, tokens: Sequence[Token], classes: np.ndarray | None = None) -> np.ndarray:
    """Spread each token over the classes of the bytes it covers; a float per class of `SCRIPTS`.

    The result adds up to `len(tokens)` (up to float rounding).

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> t = Token(1, b" ab", 0, 3, 0, 3, TokenKind.NORMAL, "Ġab")
    >>> w = attribute_tokens(" ab", [t]); round(float(w[SCRIPTS.index("latin")]), 3), round(float(w.sum()), 3)
    (0.667, 1.0)
    """
    return share_weights(share_counts(text, tokens, classes))


def share_counts(text: str, tokens: Sequence[Token], classes: np.ndarray | None = None) -> np.ndarray:
    """The attribution as whole numbers: `counts[c, n]` is how many bytes of class `c` are covered
    by tokens of `n` bytes (each such byte carries 1/n of its token); a token covering no input
    adds its own characters, `n` being their number.

    Integers add exactly, so the counts of a text's parts (a large file counted in blocks, the
    files of a folder) sum to the whole text's, and `share_weights` turns the sum into the same
    floats however it was split. Shape: (len(SCRIPTS), longest token + 1).
    """
    classes = char_classes(text) if classes is None else classes
    counts = np.zeros((len(SCRIPTS), 2), dtype=np.int64)
    if not tokens:
        return counts
    cps = code_points(text)
    widths = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)  # UTF-8 bytes per character
    byte_classes = np.repeat(classes, widths)
    n = len(byte_classes)
    byte_starts, byte_ends, _ = span_columns(tokens)
    starts, ends = byte_starts.clip(0, n), byte_ends.clip(0, n)
    lengths = ends - starts
    spans = lengths > 0
    # tokens sharing bytes with a neighbour (a cut character of a normalized text) go one by one;
    # the others lay their length over their bytes with an integer difference array
    prev_end = np.maximum.accumulate(np.concatenate([[0], np.where(spans, ends, 0)[:-1]]))
    next_start = np.minimum.accumulate(np.concatenate([np.where(spans, starts, n)[1:], [n]])[::-1])[::-1]
    shared = spans & ((starts < prev_end) | (ends > next_start))
    alone = spans & ~shared
    longest = int(lengths.max(initial=0))
    counts = np.zeros((len(SCRIPTS), longest + 2), dtype=np.int64)
    diff = np.bincount(starts[alone], lengths[alone], minlength=n + 1) - np.bincount(
        ends[alone], lengths[alone], minlength=n + 1
    )
    per_byte = np.cumsum(diff[:n]).astype(np.int64)  # each byte's token length, 0 where none
    covered = per_byte > 0
    keys = byte_classes[covered].astype(np.int64) * counts.shape[1] + per_byte[covered]
    counts += np.bincount(keys, minlength=counts.size).reshape(counts.shape)
    for k in np.flatnonzero(shared).tolist():
        own = np.bincount(byte_classes[starts[k] : ends[k]], minlength=len(SCRIPTS))
        counts[:, int(lengths[k])] += own
    for k in np.flatnonzero(~spans).tolist():
        own_classes = char_classes(tokens[k].text)
        width = len(own_classes)
        if width >= counts.shape[1]:
            counts = np.pad(counts, ((0, 0), (0, width + 1 - counts.shape[1])))
        if width:
            counts[:, width] += np.bincount(own_classes, minlength=len(SCRIPTS))
        else:
            counts[OTHER, 1] += 1
    return counts


def add_share_counts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sum of two `share_counts`, of any widths."""
    width = max(a.shape[1], b.shape[1])
    return np.pad(a, ((0, 0), (0, width - a.shape[1]))) + np.pad(b, ((0, 0), (0, width - b.shape[1])))


def share_weights(counts: np.ndarray) -> np.ndarray:
    """Tokens per class from `share_counts`: each sum of counts[c, n] / n, correctly rounded
    (math.fsum), so the same counts always give the same floats."""
    sizes = np.arange(counts.shape[1], dtype=np.float64)
    sizes[0] = 1.0  # column 0 is always empty
    return np.array([math.fsum((row / sizes).tolist()) for row in counts])
