"""A slow, obviously correct BPE trainer: recount every pair after every merge (minbpe's way)."""

from __future__ import annotations

from collections import Counter


def reference_merges(chunks: dict[bytes, int], num_merges: int, *, min_frequency: int = 2) -> list[tuple[int, int, int]]:
    """Merges as `(left, right, count)`: highest count, ties to the smallest (left, right)."""
    words = {tuple(w): f for w, f in chunks.items()}
    merges = []
    for new_id in range(256, 256 + num_merges):
        stats: Counter[tuple[int, int]] = Counter()
        for word, f in words.items():
            for pair in zip(word, word[1:]):
                stats[pair] += f
        if not stats:
            break
        pair, count = min(stats.items(), key=lambda kv: (-kv[1], kv[0]))
        if count < min_frequency:
            break
        merges.append((pair[0], pair[1], count))
        words = {_merge(w, pair, new_id): f for w, f in words.items()}
    return merges


def _merge(word: tuple[int, ...], pair: tuple[int, int], new_id: int) -> tuple[int, ...]:
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)
