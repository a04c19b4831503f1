"""The byte-level BPE merge loop: learn merges from chunk counts, incrementally.

Start from the 256 bytes; repeatedly merge the adjacent pair that occurs most often across the
chunks (weighted by each chunk's count) into a new id, 256 + i for merge i. Ties are broken by the
smallest `(left_id, right_id)`, rustbpe's rule, so the same counts always give the same merges.
A pair's count is the number of adjacent positions holding it (`aaa` holds `(a, a)` twice), as in
rustbpe, minbpe and tokenizers.

Speed comes from doing little per merge, and doing that little in C:

- a chunk is a `str` whose characters are token ids (`chr(id)`), so finding and replacing a pair
  is `str.split` / `str.join`;
- an index from each pair to the chunks holding it, so a merge only touches those chunks (pairs
  are only ever created next to a new id, so each pair's list is filled when that id is made;
  chunks that no longer hold the pair are skipped by a `pair in chunk` test, in C);
- pair counts change only next to a replaced occurrence, and the pair an occurrence breaks
  follows from the pair it makes, so one sum per new pair updates both counts;
- a pair whose count is below `min_frequency` is dropped (count, index, heap): no pair's count
  ever rises, so it can never be merged;
- a lazy heap of integer keys packing (count, pair): counts of existing pairs only fall, so a
  popped key whose count is stale is pushed back with the current count;
- the initial byte-pair counts and index are built with numpy; the cyclic GC is paused.

This module does not read files or split text (see `corpus`, `pretokenize`) and does not write
anything (see `vocabfile`).
"""

from __future__ import annotations

import gc
import heapq
import operator
import threading
from array import array
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from tokviz.training.events import ProgressCallback, Reporter, TrainingError

Merge = tuple[int, int, int]  # (left_id, right_id, count when merged)
_SHIFT = 42  # heap key = -count << 42 | left << 21 | right
_LOW = (1 << _SHIFT) - 1
_ID_BITS = 21
_ID_MASK = (1 << _ID_BITS) - 1
MAX_ID = 0x10FFFF  # a token id must be a code point, since chunks are strings of them



def _pack(count: int, left: int, right: int) -> int:
    return (-count << _SHIFT) | (left << _ID_BITS) | right


@dataclass
class MergeStats:
    merges: list[Merge]
    replaced: list[int]  # corpus tokens removed by each merge (< count for overlapping `aaa`)
    initial_tokens: int

    def corpus_tokens(self) -> list[int]:
        """Corpus token count before any merge and after each merge."""
        return compression_curve(self.initial_tokens, self.replaced)


def compression_curve(initial_tokens: int, replaced: Sequence[int]) -> list[int]:
    """Corpus tokens before any merge and after each, from what each merge removed.

    >>> compression_curve(10, [3, 2])
    [10, 7, 5]
    """
    return list(accumulate(replaced, operator.sub, initial=initial_tokens))


class BpeTrainer:
    """Incremental BPE over chunk counts.

    `chunks` maps each chunk, one character per byte (`pretokenize.chunk_key`), to its count.

    >>> BpeTrainer({"aaabdaaabac": 1}).train(3).merges
    [(97, 97, 4), (97, 98, 2), (256, 257, 2)]
    """

    def __init__(self, chunks: Mapping[str, int], *, min_frequency: int = 2) -> None:
        if min_frequency < 1:
            raise TrainingError(f"min frequency must be at least 1, got {min_frequency}")
        self.min_frequency = min_frequency
        self.initial_tokens = sum(len(w) * f for w, f in chunks.items())
        # single-byte chunks hold no pair and never change
        items = [(w, f) for w, f in chunks.items() if len(w) > 1 and f > 0]
        self.words: list[str] = [w for w, _ in items]
        self.freqs: list[int] = [f for _, f in items]
        self.counts: dict[str, int] = {}
        self.index: dict[str, np.ndarray | array[int]] = {}  # pair -> positions of words holding it
        self._count_initial_pairs()

    def _count_initial_pairs(self) -> None:
        words, freqs = self.words, self.freqs
        if not words:
            return
        data = np.frombuffer("".join(words).encode("latin-1"), dtype=np.uint8)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        inside = np.ones(len(data) - 1, dtype=bool)  # window i..i+1 lies in one word
        inside[np.cumsum(lengths)[:-1] - 1] = False
        keys = ((data[:-1].astype(np.uint16) << 8) | data[1:])[inside]
        owner = np.repeat(np.arange(len(words), dtype=np.int32), lengths)[:-1][inside]
        del data, inside
        weight = np.asarray(freqs, dtype=np.float64)[owner]
        totals = np.bincount(keys, weights=weight, minlength=1 << 16)  # exact below 2**53
        del weight
        live = totals[keys] >= self.min_frequency
        keys, owner = keys[live], owner[live]
        del live
        if not len(keys):
            return
        present = np.flatnonzero(totals >= self.min_frequency)  # below it, a pair can never merge
        pairs = {int(k): chr(k >> 8) + chr(k & 0xFF) for k in present}
        self.counts = {pairs[k]: int(c) for k, c in zip(present.tolist(), totals[present].tolist())}
        # index: the words holding each pair; a stable radix sort on the 16-bit pair keeps each
        # pair's words in order, so a word holding a pair twice is adjacent to itself
        order = np.argsort(keys, kind="stable")
        pair_of, word_of = keys[order], owner[order]
        del keys, owner, order
        keep = np.ones(len(pair_of), dtype=bool)
        keep[1:] = (pair_of[1:] != pair_of[:-1]) | (word_of[1:] != word_of[:-1])
        pair_of, word_of = pair_of[keep], word_of[keep]
        cuts = np.flatnonzero(pair_of[1:] != pair_of[:-1]) + 1
        for key, group in zip(pair_of[np.r_[0, cuts]].tolist(), np.split(word_of, cuts)):
            self.index[pairs[key]] = group

    def train(
        self,
        num_merges: int,
        *,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> MergeStats:
        """Learn up to `num_merges` merges; stop early when no pair reaches `min_frequency`.

        Progress events (phase "merging") carry the merges learned since the previous event.
        Raises Cancelled soon after `cancel` is set.
        """
        if 256 + num_merges - 1 > MAX_ID:
            raise TrainingError(f"at most {MAX_ID - 255} merges are supported, asked for {num_merges}")
        reporter = Reporter(progress, cancel, "merging", total=num_merges)
        stats = MergeStats([], [], self.initial_tokens)
        heap = [_pack(c, ord(p[0]), ord(p[1])) for p, c in self.counts.items()]
        heapq.heapify(heap)
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._loop(heap, num_merges, stats, reporter)
        finally:
            if gc_was_enabled:
                gc.enable()
        return stats

    def _loop(self, heap: list[int], num_merges: int, stats: MergeStats, reporter: Reporter) -> None:
        counts, merges = self.counts, stats.merges
        sent, tokens = 0, self.initial_tokens
        while len(merges) < num_merges and heap:
            key = heapq.heappop(heap)
            count, low = -(key >> _SHIFT), key & _LOW
            left, right = low >> _ID_BITS, low & _ID_MASK
            pair = chr(left) + chr(right)
            current = counts.get(pair, 0)
            if current != count:  # stale: the pair's count has fallen since it was pushed
                if current:
                    heapq.heappush(heap, _pack(current, left, right))
                continue
            if count < self.min_frequency:
                break
            new_id = 256 + len(merges)
            replaced = self._merge(pair, chr(new_id), count, heap)
            merges.append((left, right, count))
            stats.replaced.append(replaced)
            tokens -= replaced
            if reporter.due() or len(merges) == num_merges:
                reporter.emit(len(merges), new_merges=tuple(merges[sent:]), corpus_tokens=tokens)
                sent = len(merges)
            else:
                reporter.check()  # every merge: an Event.is_set() costs far less than a merge
        if sent < len(merges) or not merges:
            reporter.emit(len(merges), new_merges=tuple(merges[sent:]), corpus_tokens=tokens)

    def _merge(self, pair: str, new: str, count: int, heap: list[int]) -> int:
        """Replace `pair` by `new` in every chunk holding it; update counts, index and heap.

        Each occurrence appends its word to the index entry of the new pair it makes (next to
        `new`), one entry per occurrence, so a new pair's count is the sum of those words' counts
        (summed in C). The pair each occurrence breaks follows from the one it makes (`c new` breaks
        `c a`, `new c` breaks `b c`, `new new` breaks `b a`), so the losses are those same sums,
        subtracted once per new pair rather than tallied per occurrence.
        """
        words, freqs, counts, index = self.words, self.freqs, self.counts, self.index
        a, b = pair[0], pair[1]  # a pair is two symbols, one character each
        same = a == b
        fresh: defaultdict[str, list[int]] = defaultdict(list)  # new pair -> a word per occurrence
        held = index.pop(pair)
        replaced = 0  # only counted for `aa`: otherwise every counted window is replaced
        for wi in held.tolist() if isinstance(held, np.ndarray) else held:
            word = words[wi]
            if pair not in word:
                continue  # a stale entry: an earlier merge took this occurrence
            parts = word.split(pair)
            if len(parts) == 2:  # one occurrence: the common case, without the loop
                before, after = parts
                if before:
                    fresh[before[-1] + new].append(wi)
                if after:
                    fresh[new + after[0]].append(wi)
                words[wi] = before + new + after
                if same:
                    replaced += freqs[wi]
                continue
            for i in range(len(parts) - 1):
                before, after = parts[i], parts[i + 1]
                if before:
                    fresh[before[-1] + new].append(wi)
                elif i:  # the previous occurrence is right before this one
                    fresh[new + new].append(wi)
                if after:
                    fresh[new + after[0]].append(wi)
            words[wi] = new.join(parts)
            if same:
                replaced += (len(parts) - 1) * freqs[wi]
        del counts[pair]
        at, floor = freqs.__getitem__, self.min_frequency
        for q, held_by in fresh.items():
            n = sum(map(at, held_by))
            left, right = q[0], q[1]
            if left != new:
                lost = left + a
            elif right != new:
                lost = b + right
            else:
                lost = b + a
            m = counts.get(lost)
            if m is not None:  # None: below the floor (dropped), or `pair` itself (for `aa`)
                m -= n
                if m >= floor:
                    counts[lost] = m
                else:
                    del counts[lost]
                    index.pop(lost, None)
            if n >= floor:  # a pair below the floor can never be merged: counts only fall from here
                counts[q] = n
                index[q] = array("i", held_by)
                heapq.heappush(heap, (-n << _SHIFT) | (ord(left) << _ID_BITS) | ord(right))
        return replaced if same else count


def train_bpe(
    chunks: Mapping[str, int],
    num_merges: int,
    *,
    min_frequency: int = 2,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> MergeStats:
    """Learn merges from `chunk_key -> count`; see `BpeTrainer`.

    >>> [m[:2] for m in train_bpe({"aaabdaaabac": 1}, 3).merges]
    [(97, 97), (97, 98), (256, 257)]
    """
    return BpeTrainer(chunks, min_frequency=min_frequency).train(num_merges, progress=progress, cancel=cancel)
