"""The byte-level BPE merge loop: learn merges from chunk counts, incrementally.

Start from the 256 bytes; repeatedly merge the adjacent pair that occurs most often across the
chunks (weighted by each chunk's count) into a new id, 256 + i for merge i. Ties are broken by the
smallest `(left_id, right_id)`, rustbpe's rule, so the same counts always give the same merges.
A pair's count is the number of adjacent positions holding it (`aaa` holds `(a, a)` twice), as in
rustbpe, minbpe and tokenizers; an occurrence is replaced left to right (`aaa` -> `[aa, a]`).

The chunks are laid end to end as one array of token ids, one position per byte, with a doubly
linked list over the live positions (`nxt`, `prv`; a chunk's ends point at a sentinel position
whose token is DEAD). Merging a pair writes the new id at its left position, marks the right one
DEAD and unlinks it. Speed comes from doing little per merge:

- an index from each pair to the positions holding it, ascending, so a merge only touches those
  (pairs are only ever created next to a new id, so each pair's list is filled once, when that
  id is made; positions that no longer hold the pair fail a token check and are skipped);
- pair counts change only next to a replaced occurrence, and the pair an occurrence breaks
  follows from the pair it makes (`c new` breaks `c a`, `new c` breaks `b c`, `new new` breaks
  `b a`), so one sum per new pair updates both counts;
- a pair whose count is below `min_frequency` is dropped (count, index, heap): no pair's count
  ever rises, so it can never be merged;
- a lazy heap of integer keys packing (count, pair): counts of existing pairs only fall, so a
  popped key whose count is stale is pushed back with the current count. A new pair counted far
  below the merge making it waits in a bucket by its count's bit length instead, and is pushed
  only when the heap's best falls near it (most never do: the heap stays small);
- a merge touching many positions (`BATCH` or more) runs as a few numpy operations over all of
  them (`_merge_batch`); a small one runs as a plain loop over its positions (`_merge_each`), the
  readable form of the same steps. Tests hold both to the slow reference (`_educational`);
- the initial byte-pair counts and index are built with numpy; the cyclic GC is paused.

The same loop, compiled (`_merge.c`, built with the package where a C compiler is found), runs
the merges when it is there: the same steps over the same arrays, without the interpreter's cost
per step. This module's loop runs without it, and is the reference the tests hold it to.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from typing import ClassVar, TypeAlias

import numpy as np
import numpy.typing as npt

from tokviz.training.events import ProgressCallback, Reporter, TrainingError

try:
    from tokviz.training import _merge
except ImportError:  # built without a C compiler: the Python loop below runs instead
    _merge = None  # type: ignore[assignment]

Merge = tuple[int, int, int]  # (left_id, right_id, count when merged)
Learned: TypeAlias = "list[tuple[int, int, int, int]]"  # merges learned in a batch, each with the tokens it removed
_ID_BITS = 21  # pair key = left << 21 | right
_ID_MASK = (1 << _ID_BITS) - 1
_SHIFT = 2 * _ID_BITS  # heap key = -count << 42 | pair key
_LOW = (1 << _SHIFT) - 1
MAX_ID = 0x10FFFF  # the largest id: pair keys pack two ids in 21 bits each (this limit is the older, lower one, kept)
DEAD = -1  # the token of a merged-away position and of the sentinel
_MAX_POSITIONS = (1 << 31) - 2  # positions are 32-bit

Positions: TypeAlias = "npt.NDArray[np.int32] | array[int]"  # ascending positions of a pair's left token
# a new pair: (its key, the key of the pair it broke, its count, its positions)
NewPair: TypeAlias = "tuple[int, int, int, Positions | list[int]]"


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

    # From this many positions a merge runs in numpy; below it, numpy's fixed cost per call
    # outweighs the loop (bench/bench_train.py: a wide range around this value is about as fast).
    BATCH: ClassVar[int] = 64
    # A new pair counted below 1/2**COLD_BITS of the merge making it waits in a bucket instead
    # of the heap; most never come near the top (about 3 in 4 of the pairs made on the bench).
    COLD_BITS: ClassVar[int] = 3
    # Positions per block when the initial pairs are counted: bounds the temporaries.
    INIT_BLOCK: ClassVar[int] = 1 << 20
    # Run the compiled loop when it is built (False: this module's loop, for the tests).
    NATIVE: ClassVar[bool] = True
    # Merges the compiled loop learns between two progress reports and cancel checks.
    NATIVE_STEP: ClassVar[int] = 16

    def __init__(self, chunks: Mapping[str, int], *, min_frequency: int = 2) -> None:
        if min_frequency < 1:
            raise TrainingError(f"min frequency must be at least 1, got {min_frequency}")
        self.min_frequency = min_frequency
        self.counts: dict[int, int] = {}  # pair key -> count, for pairs at min_frequency or above
        self.index: dict[int, Positions] = {}  # pair key -> positions that held it when it was made
        # every pair counted `_hot` or more is in the heap; the others wait in `_cold`, bucketed
        # by their count's bit length, and are pushed when the heap's best falls below `_hot`
        self._hot = 0
        self._cold: list[list[int]] = [[] for _ in range(65)]
        words = list(chunks)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        freqs = np.fromiter(chunks.values(), dtype=np.int64, count=len(words))
        self.initial_tokens = int(lengths @ freqs)
        keep = (lengths > 1) & (freqs > 0)  # single-byte chunks hold no pair and never change
        data = np.frombuffer("".join(compress(words, keep.tolist())).encode("latin-1"), dtype=np.uint8)
        del words
        if len(data) > _MAX_POSITIONS:
            raise TrainingError(f"the distinct chunks hold {len(data):,} bytes; at most {_MAX_POSITIONS:,} fit")
        lengths, freqs = lengths[keep], freqs[keep]
        wide = len(freqs) > 0 and int(freqs.max()) > np.iinfo(np.int32).max
        end = len(data)  # the sentinel's position
        # arrays for the loop (plain ints on indexing) and numpy views of the same memory
        self.tok, self.nxt, self.prv = (array("i", [0]) * (end + 1) for _ in range(3))
        self.fr = array("q" if wide else "i", [0]) * (end + 1)  # the count of the chunk holding each position
        self._views = tuple(np.frombuffer(a, dtype=np.int64 if a.typecode == "q" else np.int32)
                            for a in (self.tok, self.nxt, self.prv, self.fr))
        tok, nxt, prv, fr = self._views
        tok[:end] = data
        tok[end] = DEAD
        for lo in range(0, end + 1, self.INIT_BLOCK):  # in blocks: no corpus-sized temporary
            hi = min(lo + self.INIT_BLOCK, end + 1)
            nxt[lo:hi] = np.arange(lo + 1, hi + 1, dtype=np.int32)
            prv[lo:hi] = np.arange(lo - 1, hi - 1, dtype=np.int32)
        stops = np.cumsum(lengths)
        nxt[stops - 1] = end
        prv[stops - lengths] = end
        nxt[end] = prv[end] = end
        fr[:end] = np.repeat(freqs.astype(fr.dtype), lengths)
        fr[end] = 0
        del stops, lengths, freqs
        if end:
            self._count_initial_pairs(data)

    def _count_initial_pairs(self, data: npt.NDArray[np.uint8]) -> None:
        """Count the byte pairs and index their positions, a block of positions at a time.

        Two passes, so that no temporary grows with the corpus: the first sums each pair's count
        (weighted by its chunk's count), the second places each kept position in one int32 array,
        grouped by pair and ascending within a pair (a counting sort over the 16-bit pair keys).
        """
        _, nxt, _, fr = self._views
        pairs = end = len(data)
        pairs -= 1  # windows i..i+1
        totals = np.zeros(1 << 16, dtype=np.float64)  # exact below 2**53
        held = np.zeros(1 << 16, dtype=np.int64)  # positions holding each pair
        for lo in range(0, pairs, self.INIT_BLOCK):
            hi = min(lo + self.INIT_BLOCK, pairs)
            inside = nxt[lo:hi] != end  # window i..i+1 lies in one chunk
            small = (data[lo:hi].astype(np.uint16) << 8) | data[lo + 1 : hi + 1]
            keys = small[inside]
            totals += np.bincount(keys, weights=fr[lo:hi][inside], minlength=1 << 16)
            held += np.bincount(keys, minlength=1 << 16)
        ok = totals >= self.min_frequency  # below it, a pair can never merge
        held[~ok] = 0
        present = np.flatnonzero(held)
        if not len(present):
            return
        self.counts = {
            (k >> 8) << _ID_BITS | (k & 0xFF): int(c) for k, c in zip(present.tolist(), totals[present].tolist())
        }
        stops = np.cumsum(held)
        filled = stops - held  # where each pair's next position goes
        starts = filled[present].tolist()
        pos = np.empty(int(stops[-1]), dtype=np.int32)
        for lo in range(0, pairs, self.INIT_BLOCK):
            hi = min(lo + self.INIT_BLOCK, pairs)
            small = (data[lo:hi].astype(np.uint16) << 8) | data[lo + 1 : hi + 1]
            kept = (nxt[lo:hi] != end) & ok[small]
            at = np.flatnonzero(kept).astype(np.int32) + np.int32(lo)
            keys = small[kept]
            order = np.argsort(keys, kind="stable")  # stable: positions stay ascending
            keys, at = keys[order], at[order]
            n = np.bincount(keys, minlength=1 << 16)
            rank = np.arange(len(keys), dtype=np.int64) - (np.cumsum(n) - n)[keys]
            pos[filled[keys] + rank] = at
            filled += n
        for k, i, j in zip(present.tolist(), starts, stops[present].tolist()):
            self.index[(k >> 8) << _ID_BITS | (k & 0xFF)] = pos[i:j]

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
        if self.NATIVE and _merge is not None:
            self._record(self._native_merges(num_merges), num_merges, stats, reporter)
            return stats
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._record(self._python_merges(num_merges), num_merges, stats, reporter)
        finally:
            if gc_was_enabled:
                gc.enable()
        return stats

    def _record(self, batches: Iterator[Learned], num_merges: int, stats: MergeStats, reporter: Reporter) -> None:
        """Keep the merges each batch learned, and report them (or check for a cancel) after each."""
        merges, replaced = stats.merges, stats.replaced
        sent, tokens = 0, self.initial_tokens
        for batch in batches:
            for a, b, count, removed in batch:
                merges.append((a, b, count))
                replaced.append(removed)
                tokens -= removed
            if reporter.due() or len(merges) == num_merges:
                reporter.emit(len(merges), new_merges=tuple(merges[sent:]), corpus_tokens=tokens)
                sent = len(merges)
            else:
                reporter.check()  # an Event.is_set() costs far less than a merge
        if sent < len(merges) or not merges:
            reporter.emit(len(merges), new_merges=tuple(merges[sent:]), corpus_tokens=tokens)

    def _python_merges(self, num_merges: int) -> Iterator[Learned]:
        """The merges, one per batch, learned by this module's loop."""
        counts = self.counts
        heap = [(-c << _SHIFT) | k for k, c in counts.items()]
        heapq.heapify(heap)
        learned = 0
        while learned < num_merges:
            if not heap or -(heap[0] >> _SHIFT) < self._hot:  # a cold pair may be the best now
                if not self._warm(heap):
                    break
                continue
            key = heapq.heappop(heap)
            count, pair = -(key >> _SHIFT), key & _LOW
            current = counts.get(pair, 0)
            if current != count:  # stale: the pair's count has fallen since it was pushed
                if current:
                    heapq.heappush(heap, (-current << _SHIFT) | pair)
                continue
            if count < self.min_frequency:
                break
            # raise only: lowering is `_warm`'s, which pushes what the lower threshold lets in
            self._hot = max(self._hot, _warm_from(count, self.COLD_BITS))
            replaced = self._merge(pair, 256 + learned, count, heap)
            learned += 1
            yield [(pair >> _ID_BITS, pair & _ID_MASK, count, replaced)]

    def _native_merges(self, num_merges: int) -> Iterator[Learned]:
        """The merges, a few per batch, learned by the compiled loop (`_merge.c`)."""
        loop = _merge.Loop(self.tok, self.nxt, self.prv, self.fr, self.counts, self.index, self.min_frequency)
        self.counts, self.index = {}, {}  # the loop keeps its own copy of the pairs (it shares the arrays)
        learned = 0
        while learned < num_merges:
            batch = loop.run(min(self.NATIVE_STEP, num_merges - learned), 256 + learned)
            if not batch:
                return
            learned += len(batch)
            yield batch

    def _warm(self, heap: list[int]) -> bool:
        """Lower the threshold below the heap's best and push the cold pairs now above it.

        Returns False when no pair is left at all.
        """
        best = -(heap[0] >> _SHIFT) if heap else 0
        hot = _warm_from(best, self.COLD_BITS) if heap else 0
        counts, cold = self.counts, self._cold
        for bits, keys in enumerate(cold):
            if keys and (1 << bits) > hot:  # this bucket may hold counts at or above `hot`
                cold[bits] = []
                for key in keys:
                    n = counts.get(key, 0)
                    if n >= hot and n:
                        heapq.heappush(heap, (-n << _SHIFT) | key)
                    elif n:
                        cold[n.bit_length()].append(key)  # it fell: still below `hot`
        self._hot = hot
        return bool(heap)

    def _merge(self, pair: int, new: int, count: int, heap: list[int]) -> int:
        """Replace `pair` by `new` everywhere; update counts, index and heap; return the tokens removed."""
        held = self.index.pop(pair)
        del self.counts[pair]
        if len(held) >= self.BATCH:
            return self._merge_batch(pair, new, count, held, heap)
        return self._merge_each(pair, new, count, held, heap)

    def _merge_each(self, pair: int, new: int, count: int, held: Positions, heap: list[int]) -> int:
        """The merge as a loop over the positions, left to right (the reference for `_merge_batch`)."""
        tok, nxt, prv, fr = self.tok, self.nxt, self.prv, self.fr
        a, b = pair >> _ID_BITS, pair & _ID_MASK
        lefts: defaultdict[int, list[int]] = defaultdict(list)  # c -> positions of new pairs (c, new)
        rights: defaultdict[int, list[int]] = defaultdict(list)  # c -> positions of new pairs (new, c)
        replaced = 0
        for p in held.tolist() if isinstance(held, np.ndarray) else held:
            if tok[p] != a:
                continue  # stale: an earlier merge took this position
            q = nxt[p]
            if tok[q] != b:
                continue  # stale, or the right half was just taken by an overlapping `aa`
            r = nxt[q]
            tok[p], tok[q] = new, DEAD
            nxt[p], prv[r] = r, p
            replaced += fr[p]
            left = prv[p]
            c = tok[left]
            if c != DEAD:
                lefts[c].append(left)  # (new, new) when the previous occurrence was right here
            c = tok[r]
            if c != DEAD and not (c == a and tok[nxt[r]] == b):  # else `r` merges next: (new, new)
                rights[c].append(p)
        at = fr.__getitem__
        made: list[NewPair] = [
            (c << _ID_BITS | new, (c << _ID_BITS | a) if c != new else (b << _ID_BITS | a), sum(map(at, ps)), ps)
            for c, ps in lefts.items()
        ]
        made += [(new << _ID_BITS | c, b << _ID_BITS | c, sum(map(at, ps)), ps) for c, ps in rights.items()]
        self._add(made, heap)
        return replaced if a == b else count  # without overlaps, every counted window is replaced

    def _merge_batch(self, pair: int, new: int, count: int, held: Positions, heap: list[int]) -> int:
        """The merge as numpy operations over all the positions at once; same result as `_merge_each`."""
        tok, nxt, prv, fr = self._views
        a, b = pair >> _ID_BITS, pair & _ID_MASK
        p = held if isinstance(held, np.ndarray) else np.frombuffer(held, dtype=np.int32)
        q = nxt[p]
        live = (tok[p] == a) & (tok[q] == b)
        p, q = p[live], q[live]
        if a == b and len(p) > 1:  # in a run of overlapping occurrences, take every other one
            chained = np.concatenate(([False], prv[p[1:]] == p[:-1]))
            k = np.arange(len(p))
            run_start = np.maximum.accumulate(np.where(chained, 0, k))
            take = (k - run_start) % 2 == 0
            p, q = p[take], q[take]
        r = nxt[q]
        tok[p], tok[q] = new, DEAD
        nxt[p], prv[r] = r, p
        f = fr[p]
        replaced = int(f.sum(dtype=np.int64)) if a == b else count
        left = prv[p]  # after the unlinking: an adjacent earlier occurrence is now `new`
        lt, rt = tok[left], tok[r]
        lm = lt != DEAD
        rm = (rt != DEAD) & (rt != new)  # (new, new) is counted once, at its left
        made_left = (lt[lm].astype(np.int64) << _ID_BITS) | new
        keys = np.concatenate((made_left, (new << _ID_BITS) | rt[rm].astype(np.int64)))
        if not len(keys):
            return replaced
        where = np.concatenate((left[lm], p[rm]))
        weight = np.concatenate((f[lm], f[rm]))
        order = np.argsort(keys, kind="stable")  # stable: each pair's positions stay ascending
        keys, weight = keys[order], weight[order]
        positions = array("i", where[order].tobytes())  # each pair's slice is a compact copy
        change = np.empty(len(keys), dtype=bool)
        change[0] = True
        np.not_equal(keys[1:], keys[:-1], out=change[1:])
        starts = np.flatnonzero(change)
        sums = np.add.reduceat(weight, starts, dtype=np.int64)
        bounds = starts.tolist()
        bounds.append(len(keys))
        ab, bb = b << _ID_BITS | a, b << _ID_BITS
        made: list[NewPair] = []
        for key, n, i, j in zip(keys[starts].tolist(), sums.tolist(), bounds, bounds[1:]):
            c = key >> _ID_BITS
            if c != new:
                lost = c << _ID_BITS | a
            else:
                c = key & _ID_MASK
                lost = ab if c == new else bb | c
            made.append((key, lost, n, positions[i:j]))
        self._add(made, heap)
        return replaced

    def _add(self, made: Iterable[NewPair], heap: list[int]) -> None:
        """Count, index and push the new pairs; take each one's count off the pair it broke."""
        counts, index, floor, hot, cold = self.counts, self.index, self.min_frequency, self._hot, self._cold
        for key, lost, n, ps in made:
            m = counts.get(lost)
            if m is not None:  # None: below the floor (dropped), or the merged pair itself (`aa`)
                m -= n
                if m >= floor:
                    counts[lost] = m
                else:
                    del counts[lost]
                    index.pop(lost, None)
            if n >= floor:  # a pair below the floor can never be merged: counts only fall from here
                counts[key] = n
                index[key] = array("i", ps) if isinstance(ps, list) else ps
                if n >= hot:
                    heapq.heappush(heap, (-n << _SHIFT) | key)
                else:
                    cold[n.bit_length()].append(key)


def _warm_from(count: int, bits: int) -> int:
    """The threshold under a merge of `count`: a power of two at most `count / 2**bits`.

    >>> _warm_from(1000, 3), _warm_from(7, 3), _warm_from(0, 3)
    (64, 0, 0)
    """
    shift = count.bit_length() - 1 - bits
    return 1 << shift if shift >= 0 else 0


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
