"""Tokens per script: which writing systems a text's tokens are spent on.

A token's weight of 1 is spread evenly over the bytes of the input it covers, and each byte counts
for the class (`tokviz.core.scripts`) of its character. A token that covers no input
(SentencePiece's dummy-prefix `▁`) counts for the classes of its own text (whitespace). So the
per-script counts of a text always add up to its token count.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tokviz.core.columns import span_columns
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
    classes = char_classes(text) if classes is None else classes
    weights = np.zeros(len(SCRIPTS))
    if not tokens:
        return weights
    cps = code_points(text)
    widths = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)  # UTF-8 bytes per character
    byte_classes = np.repeat(classes, widths)
    n = len(byte_classes)
    byte_starts, byte_ends, _ = span_columns(tokens)
    starts, ends = byte_starts.clip(0, n), byte_ends.clip(0, n)
    spans = ends > starts
    share = np.where(spans, 1.0 / np.maximum(ends - starts, 1), 0.0)
    # difference array: +share from byte_start, -share from byte_end; its running sum is each
    # byte's weight (tokens that overlap on a cut character simply add up)
    diff = np.bincount(starts, share, minlength=n + 1) - np.bincount(ends, share, minlength=n + 1)
    weights += np.bincount(byte_classes, np.cumsum(diff)[:n], minlength=len(SCRIPTS))
    for k in np.flatnonzero(~spans).tolist():
        own = char_classes(tokens[k].text)
        if len(own):
            weights += np.bincount(own, minlength=len(SCRIPTS)) / len(own)
        else:
            weights[OTHER] += 1.0
    return weights
