"""Byte-level BPE the slow, obvious way: to read, and to check the fast trainer against.

Training starts from a text's chunks as byte sequences (each with how often it occurs), counts
every adjacent pair of ids over all chunks, merges the most frequent pair into a new id (256 + i
for merge i), and recounts everything from scratch before the next merge. Ties go to the smallest
`(left, right)` pair, the rule `tokviz.training.bpe` (and rustbpe) use, so both give the same
merges for the same counts; the tests hold the fast trainer to this module on random input.
Encoding applies the learned merges to a byte string, earliest merge first, as tiktoken's own
`_educational.py` does with ranks.

This module is not fast (it recounts every pair on every merge, minbpe's way, which makes a merge
cost the whole corpus), does not split text into chunks (see `pretokenize`), and is not used by the
trainer or any view.

>>> merges = train_merges({b"aaabdaaabac": 1}, 3)
>>> merges
[(97, 97, 4), (97, 98, 2), (256, 257, 2)]
>>> encode(merges, b"aaabdaaabac")
[258, 100, 258, 97, 99]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

Merge = tuple[int, int, int]  # left id, right id, the pair's count when it was merged


def train_merges(chunks: Mapping[bytes, int], num_merges: int, *, min_frequency: int = 2) -> list[Merge]:
    """Learn up to `num_merges` merges from `chunks` (chunk bytes -> how often it occurs); stop
    early when no pair occurs `min_frequency` times."""
    words = {tuple(chunk): count for chunk, count in chunks.items()}
    merges: list[Merge] = []
    for new_id in range(256, 256 + num_merges):
        stats = pair_counts(words)
        if not stats:
            break
        pair, count = min(stats.items(), key=lambda kv: (-kv[1], kv[0]))  # most frequent, then smallest
        if count < min_frequency:
            break
        merges.append((pair[0], pair[1], count))
        words = {merge(word, pair, new_id): count for word, count in words.items()}
    return merges


def pair_counts(words: Mapping[tuple[int, ...], int]) -> Counter[tuple[int, int]]:
    """How often each adjacent pair occurs, each word weighted by its count (`aaa` holds `(a, a)`
    twice).

    >>> pair_counts({(1, 1, 1): 2, (1, 2): 1})
    Counter({(1, 1): 4, (1, 2): 1})
    """
    stats: Counter[tuple[int, int]] = Counter()
    for word, count in words.items():
        for pair in zip(word, word[1:]):
            stats[pair] += count
    return stats


def merge(word: tuple[int, ...], pair: tuple[int, int], new_id: int) -> tuple[int, ...]:
    """Replace each occurrence of `pair` in `word`, left to right, by `new_id`.

    >>> merge((1, 1, 1, 2), (1, 1), 256)
    (256, 1, 2)
    """
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def encode(merges: Sequence[Merge], data: bytes) -> list[int]:
    """Cut `data` with the learned merges: apply each merge in the order it was learned."""
    word = tuple(data)
    for i, (left, right, _) in enumerate(merges):
        word = merge(word, (left, right), 256 + i)
    return list(word)
