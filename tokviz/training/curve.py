"""The compression curve: how many tokens the corpus, or any text, takes after k merges.

For the training corpus the curve follows from the training itself (each merge's count of
replaced tokens, kept in the result), so it costs nothing. For another text it is measured by
encoding with a tokenizer that knows only the first k merges (tiktoken, so it is fast).

This module does not train and draws nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from tokviz.training.trainer import TrainingResult
from tokviz.training.vocabfile import trained_tokenizer


def corpus_curve(result: TrainingResult) -> list[int]:
    """Corpus token count before any merge (index 0) and after each merge k (index k).

    >>> from tokviz.training.trainer import train_texts
    >>> corpus_curve(train_texts(["aaabdaaabac"], vocab_size=259, pattern="none"))
    [11, 9, 7, 5]
    """
    return result.corpus_tokens()


def text_curve(result: TrainingResult, text: str, ks: Sequence[int]) -> list[int]:
    """Token count of `text` encoded with only the first k merges, for each k in `ks`.

    Special-token text is encoded as plain text. `k` is clipped to the merges learned.

    >>> from tokviz.training.trainer import train_texts
    >>> r = train_texts(["aaabdaaabac"], vocab_size=259, pattern="none")
    >>> text_curve(r, "aaabdaaabac", [0, 1, 2, 3])
    [11, 9, 7, 5]
    """
    counts = []
    for k in ks:
        k = max(0, min(int(k), len(result.merges)))
        encoding = trained_tokenizer(result, num_merges=k).encoding
        counts.append(len(encoding.encode_ordinary(text)))
    return counts


def default_ks(num_merges: int, points: int = 24) -> list[int]:
    """About `points` merge counts from 0 to `num_merges`, denser at the start, where the curve bends.

    >>> default_ks(1000, 6)
    [0, 40, 160, 360, 640, 1000]
    """
    if num_merges <= 0:
        return [0]
    ks = {0, num_merges}
    for i in range(1, points):
        ks.add(round(num_merges * (i / (points - 1)) ** 2))
    return sorted(ks)
