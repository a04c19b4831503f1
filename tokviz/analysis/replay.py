"""Merge replay: why a text is cut the way it is, merge by merge.

`replay(tokenizer, text)` redoes what the tokenizer does to `text`, in pure Python, and records it:

Which replay applies is read from the tokenizer's capabilities (`mergeable_ranks` and
`split_pattern`, `sentencepiece`, `preprocessing`), never from its backend:

* **byte-level BPE** (tiktoken-backed tokenizers): special tokens are split off as the policy says,
  the rest is cut into chunks by the tokenizer's split regex (the `regex` module, the same pattern),
  and each chunk goes from single bytes to its tokens by merging, each step the adjacent pair of
  lowest rank (leftmost on a tie), as tiktoken's `_educational.bpe_encode` shows. A chunk that is a
  vocabulary entry as a whole is taken directly, as tiktoken does (its merges are still shown).
* **SentencePiece BPE** (Mistral, Llama 2, trained BPE models): each plain segment is normalized
  (`Tokenizer.normalize`: NFKC where the model says so, spaces as `▁`, the dummy prefix), user-defined
  symbols are cut off whole, and the characters are merged, each step the adjacent pair that makes
  the vocabulary piece of highest score (leftmost on a tie), as sentencepiece's `bpe_model.cc`
  does. Symbols not in the vocabulary become `<0xNN>` byte pieces (byte fallback) or one unknown
  piece per run.
* **a preprocessing tokenizer** (the ChatGLM-6B profile): its inner model is replayed over the
  rewritten text (`<n>`, `<|blank_n|>` are user-defined symbols, never merged), and the ids it
  appends (`[gMASK]` `<sop>`) end the replay.

Each `ChunkReplay` holds the initial parts, the `MergeStep`s (rank or piece id, score, position)
and the final ids; `Replay.ids` is the whole text's ids and `Replay.matches_backend` says whether
they equal what the tokenizer itself returns (the tests check it on random text).

One known way to differ: the split regex here runs on the `regex` module, whose Unicode tables can
be newer than tiktoken's Rust regex. A character assigned only in the newer Unicode (`\\U000323b0`,
CJK Extension J) is a letter to one and not to the other, so the chunks, and the ids, can differ
around it; `Replay.mismatch` then says so.

This module does not replay Unigram models (they pick the most probable segmentation by Viterbi,
there are no merges), WordPiece or Hugging Face BPE: `replay` raises `ReplayNotApplicable`.
"""

from __future__ import annotations

import heapq
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import regex

from tokviz.core.tokenizer import (
    AllowedSpecial,
    DisallowedSpecial,
    PieceType,
    Preprocessing,
    SpecialPolicy,
    Tokenizer,
)
from tokviz.core.tokens import display_text, sanitize

Algorithm = Literal["byte-bpe", "sentencepiece-bpe"]
SPACE_MARK = "\u2581"


class ReplayNotApplicable(Exception):
    """The tokenizer does not cut text by merges; the message says what it does instead."""


@dataclass(frozen=True)
class MergeStep:
    """One merge: parts `index` and `index + 1` became `merged`.

    `rank` is the merged token's rank (byte-level BPE, also its id) or piece id (SentencePiece);
    `score` is the SentencePiece piece score (None for byte-level BPE).
    """

    index: int
    merged: bytes
    rank: int
    score: float | None = None


@dataclass(frozen=True)
class ChunkReplay:
    """One pre-tokenization chunk (or special token, or SentencePiece segment) and its merges.

    `start:end` is the chunk's character span in the replayed text. `text` is what the model
    merged (for SentencePiece the normalized text with `▁`). Parts are bytes; SentencePiece parts
    are their piece's text with `▁` as a space, so `display_text` shows every part the same way.
    """

    start: int
    end: int
    text: str
    initial: tuple[bytes, ...]
    steps: tuple[MergeStep, ...]
    final: tuple[bytes, ...]
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    special: bool = False
    note: str = ""

    def states(self) -> Iterator[tuple[bytes, ...]]:
        """The parts before any merge, then after each step (computed as you go, so a long chunk
        costs nothing until shown)."""
        parts = list(self.initial)
        yield tuple(parts)
        for step in self.steps:
            parts[step.index : step.index + 2] = [step.merged]
            yield tuple(parts)

    def labels(self, parts: Sequence[bytes]) -> list[str]:
        """Readable text for parts (`·` for a space, U+FFFD for part of a character)."""
        return [display_text(p) for p in parts]


@dataclass(frozen=True)
class Replay:
    tokenizer: str
    algorithm: Algorithm
    text: str
    chunks: tuple[ChunkReplay, ...]
    backend_ids: tuple[int, ...] = field(default=(), compare=False)

    @property
    def ids(self) -> list[int]:
        return [i for chunk in self.chunks for i in chunk.ids]

    @property
    def matches_backend(self) -> bool:
        return list(self.backend_ids) == self.ids

    @property
    def mismatch(self) -> str:
        """Empty when the replay ends in the tokenizer's ids; otherwise what a view should say."""
        if not self.backend_ids or self.matches_backend:
            return ""
        ids, theirs = self.ids, self.backend_ids
        first = next((k for k, (a, b) in enumerate(zip(ids, theirs)) if a != b), min(len(ids), len(theirs)))
        return (
            f"the replay differs from {self.tokenizer}'s own ids from token {first} on; the usual cause "
            f"is a character newer than the tokenizer library's Unicode tables, which the split regex "
            f"here (Python's regex module) classifies differently"
        )

    @property
    def merge_count(self) -> int:
        return sum(len(chunk.steps) for chunk in self.chunks)


def algorithm_of(tokenizer: Tokenizer) -> Algorithm:
    """Which replay applies to `tokenizer`, or ReplayNotApplicable saying why none does."""
    if tokenizer.mergeable_ranks is not None and tokenizer.split_pattern is not None:
        return "byte-bpe"
    if (prep := tokenizer.preprocessing) is not None:  # a rewrite before a model: replay the model
        return algorithm_of(prep.inner)
    model = tokenizer.sentencepiece
    if model is not None:
        model_type = model.model_type
        if model_type == "bpe":
            return "sentencepiece-bpe"
        if model_type == "unigram":
            raise ReplayNotApplicable(
                f"{tokenizer.name} is a SentencePiece Unigram model: it has no merges to replay; it "
                f"picks the most probable segmentation of each text (Viterbi over piece scores). "
                f"The pipeline view shows the pieces it chose."
            )
        raise ReplayNotApplicable(
            f"{tokenizer.name} is a SentencePiece {model_type or 'unknown-type'} model: no merges to replay"
        )
    raise ReplayNotApplicable(
        f"merge replay covers tiktoken rank files and SentencePiece BPE models; {tokenizer.name} "
        f"({tokenizer.family}) is neither. The pipeline view shows its stages."
    )


def replay(
    tokenizer: Tokenizer,
    text: str,
    *,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = (),
    check: bool = True,
) -> Replay:
    """Replay how `tokenizer` cuts `text`, chunk by chunk and merge by merge.

    With `check`, the tokenizer also encodes the text and `Replay.backend_ids` holds its ids.
    Raises ReplayNotApplicable for tokenizers without merges, ValueError (tiktoken's message) for a
    disallowed special token.

    >>> r = replay(load("cl100k_base"), "hello world")  # doctest: +SKIP
    >>> [(c.text, c.ids) for c in r.chunks], r.matches_backend  # doctest: +SKIP
    ([('hello', (15339,)), (' world', (1917,))], True)
    """
    algorithm = algorithm_of(tokenizer)
    prep = tokenizer.preprocessing
    text = sanitize(text)
    segments = tokenizer.split_special(text, allowed_special, disallowed_special)
    chunks: list[ChunkReplay] = []
    for start, end, special_id in segments:
        if special_id is not None:
            chunks.append(_special_chunk(tokenizer, text, start, end, special_id))
        elif prep is not None:
            chunks.extend(_preprocessed_segment(tokenizer, prep, algorithm, text, start, end))
        else:
            chunks.extend(_plain_segment(tokenizer, algorithm, text, start, end))
    backend: tuple[int, ...] = ()
    if check:
        tokens = tokenizer.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        backend = tuple(t.id for t in tokens)
    return Replay(tokenizer.name, algorithm, text, tuple(chunks), backend)


def replay_with(tokenizer: Tokenizer, text: str, policy: SpecialPolicy, *, check: bool = True) -> Replay:
    return replay(
        tokenizer, text, allowed_special=policy.allowed_special,
        disallowed_special=policy.disallowed_special, check=check,
    )


def _plain_segment(tokenizer: Tokenizer, algorithm: Algorithm, text: str, start: int, end: int) -> list[ChunkReplay]:
    if algorithm == "byte-bpe":
        return _byte_bpe_segment(tokenizer, text, start, end)
    return _sp_bpe_segment(tokenizer, text, start, end) if start < end else []


def _special_chunk(tokenizer: Tokenizer, text: str, start: int, end: int, special_id: int) -> ChunkReplay:
    data = text[start:end].encode("utf-8")
    return ChunkReplay(
        start, end, text[start:end], (data,), (), (data,), (special_id,), (tokenizer.piece(special_id),),
        special=True, note="special token: matched as a whole before any splitting or merging",
    )


# -- byte-level BPE -------------------------------------------------------------------------------


_PATTERNS: dict[str, regex.Pattern] = {}


def split_chunks(pattern: str, text: str) -> list[tuple[int, int]]:
    """Character spans of the split regex's matches (tiktoken's pre-tokenization).

    >>> from tokviz.core.patterns import CL100K_PATTERN
    >>> [("hello world"[a:b]) for a, b in split_chunks(CL100K_PATTERN, "hello world")]
    ['hello', ' world']
    """
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        compiled = _PATTERNS[pattern] = regex.compile(pattern)
    return [m.span() for m in compiled.finditer(text)]


def _byte_bpe_segment(tokenizer: Tokenizer, text: str, start: int, end: int) -> list[ChunkReplay]:
    ranks, pattern = tokenizer.mergeable_ranks, tokenizer.split_pattern
    assert ranks is not None and pattern is not None  # algorithm_of chose byte-bpe for them
    chunks = []
    for a, b in split_chunks(pattern, text[start:end]):
        chunk = text[start + a : start + b]
        initial, steps, final = byte_pair_merges(ranks, chunk.encode("utf-8"))
        note = ""
        whole = chunk.encode("utf-8")
        if len(final) > 1 and whole in ranks:
            note = (
                f"the whole chunk is vocabulary entry {ranks[whole]}: tiktoken looks chunks up "
                f"before merging, so it is one token although the merges end in {len(final)}"
            )
            final = (whole,)
        ids = tuple(ranks[p] for p in final)
        pieces = tuple(tokenizer.piece(i) for i in ids)
        chunks.append(ChunkReplay(start + a, start + b, chunk, initial, steps, final, ids, pieces, note=note))
    return chunks


def byte_pair_merges(
    ranks: Mapping[bytes, int], data: bytes
) -> tuple[tuple[bytes, ...], tuple[MergeStep, ...], tuple[bytes, ...]]:
    """Merge `data` from single bytes, lowest rank first and leftmost on a tie (tiktoken's order),
    in O(n log n) with a heap; return the initial parts, the steps and the final parts.

    >>> _, steps, final = byte_pair_merges({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, b"abb")
    >>> [(s.index, s.merged, s.rank) for s in steps], final
    ([(0, b'ab', 2), (0, b'abb', 3)], (b'abb',))
    """
    n = len(data)
    initial = tuple(data[i : i + 1] for i in range(n))
    # a part is known by its start offset k: it is data[k:end[k]]; nxt/prv link the live parts
    end = list(range(1, n + 1))
    nxt = [*range(1, n), -1][:n]
    prv = [-1, *range(n - 1)][:n]
    alive = [True] * n
    heap = [(r, k, k + 2) for k in range(n - 1) if (r := ranks.get(data[k : k + 2])) is not None]
    heapq.heapify(heap)
    positions = _PartIndex(n)
    steps = []
    while heap:
        rank, left, merged_end = heapq.heappop(heap)
        right = nxt[left]
        if not alive[left] or right < 0 or end[right] != merged_end:
            continue  # stale: one of the two parts has changed since the pair was pushed
        steps.append(MergeStep(positions.position(left), data[left:merged_end], rank))
        positions.remove(right)
        alive[right] = False
        end[left] = merged_end
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        for a in (prv[left], left):
            b = nxt[a] if a >= 0 else -1
            if b >= 0 and (r := ranks.get(data[a : end[b]])) is not None:
                heapq.heappush(heap, (r, a, end[b]))
    final = tuple(data[k : end[k]] for k in range(n) if alive[k])
    return initial, tuple(steps), final


class _PartIndex:
    """Position of a live part among the live parts (a Fenwick tree over start offsets), so each
    step can say "parts i and i+1" in O(log n)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.tree = [0] * (n + 1)
        for i in range(1, n + 1):
            self.tree[i] += 1
            j = i + (i & -i)
            if j <= n:
                self.tree[j] += self.tree[i]

    def remove(self, k: int) -> None:
        i = k + 1
        while i <= self.n:
            self.tree[i] -= 1
            i += i & -i

    def position(self, k: int) -> int:
        """Number of live parts before offset k."""
        total, i = 0, k
        while i > 0:
            total += self.tree[i]
            i -= i & -i
        return total


# -- SentencePiece BPE ----------------------------------------------------------------------------



@dataclass
class _SpModel:
    """What sentencepiece's BPE encoder consults, read once per tokenizer."""

    pieces: dict[str, int]  # NORMAL, USER_DEFINED and UNUSED pieces, as `pieces_` in model_interface
    scores: dict[int, float]
    unused: frozenset[int]
    user_defined: regex.Pattern | None  # longest user-defined symbol at a position
    byte_ids: dict[int, int] | None  # byte value -> `<0xNN>` id, when byte fallback is on
    unk_id: int

    @classmethod
    def read(cls, tokenizer: Tokenizer) -> _SpModel:
        model = tokenizer.sentencepiece
        assert model is not None  # algorithm_of chose sentencepiece-bpe for it
        pieces, scores, user, unused, byte_ids = {}, {}, [], set(), {}
        for i, (piece, kind, score) in enumerate(zip(model.pieces, model.types, model.scores)):
            if kind in (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED):
                pieces[piece] = i
                scores[i] = score
            if kind == PieceType.USER_DEFINED:
                user.append(piece)
            elif kind == PieceType.UNUSED:
                unused.add(i)
            elif kind == PieceType.BYTE:
                byte_ids[int(piece[3:5], 16)] = i
        matcher = None
        if user:
            alternatives = sorted(user, key=len, reverse=True)
            matcher = regex.compile("|".join(regex.escape(u) for u in alternatives))
        return cls(pieces, scores, frozenset(unused), matcher, byte_ids or None, model.unk_id)


_SP_MODELS: weakref.WeakKeyDictionary[Tokenizer, _SpModel] = weakref.WeakKeyDictionary()


def _sp_model(tokenizer: Tokenizer) -> _SpModel:
    model = _SP_MODELS.get(tokenizer)
    if model is None:
        model = _SP_MODELS[tokenizer] = _SpModel.read(tokenizer)
    return model


def _sp_bytes(symbol: str) -> bytes:
    return symbol.replace(SPACE_MARK, " ").encode("utf-8")


def _sp_bpe_segment(tokenizer: Tokenizer, text: str, start: int, end: int) -> list[ChunkReplay]:
    model = _sp_model(tokenizer)
    segment = text[start:end]
    normalized = tokenizer.normalize(segment)
    if normalized is None:  # a model without a normalizer merges the text as it is
        normalized = segment
    if not normalized:
        return []
    symbols, steps = sp_bpe_merges(model, normalized)
    ids, notes = _sp_ids(model, symbols)
    pieces = tuple(tokenizer.piece(i) for i in ids)
    return [
        ChunkReplay(
            start, end, normalized, tuple(_sp_bytes(s) for s, _ in _sp_symbols(model, normalized)),
            steps, tuple(_sp_bytes(s) for s in symbols), tuple(ids), pieces, note="; ".join(notes),
        )
    ]


def _sp_symbols(model: _SpModel, normalized: str) -> list[tuple[str, bool]]:
    """`(symbol, frozen)`: characters, and user-defined symbols cut off whole and frozen (never
    merged), as sentencepiece's PrefixMatcher does."""
    symbols, pos = [], 0
    while pos < len(normalized):
        match = model.user_defined.match(normalized, pos) if model.user_defined else None
        if match is not None and match.end() > pos:
            symbols.append((match.group(), True))
            pos = match.end()
        else:
            symbols.append((normalized[pos], False))
            pos += 1
    return symbols


def sp_bpe_merges(model: _SpModel, normalized: str) -> tuple[list[str], tuple[MergeStep, ...]]:
    """Merge the symbols of a normalized text as sentencepiece's BPE model does: the pair making the
    piece of highest score first, leftmost on a tie; user-defined symbols never merge. Returns the
    final symbols (unused pieces re-split) and the steps."""
    cut = _sp_symbols(model, normalized)
    symbols = [s for s, _ in cut]
    frozen = [f for _, f in cut]
    n = len(symbols)
    nxt = [*range(1, n), -1][:n]
    prv = [-1, *range(n - 1)][:n]
    heap: list[tuple[float, int, int, int, int]] = []
    rev_merge: dict[str, tuple[str, str]] = {}

    def push(left: int, right: int) -> None:
        if left < 0 or right < 0 or frozen[left] or frozen[right]:
            return
        merged = symbols[left] + symbols[right]
        piece_id = model.pieces.get(merged)
        if piece_id is None:
            return
        heapq.heappush(heap, (-model.scores[piece_id], left, right, len(merged), piece_id))
        if piece_id in model.unused:
            rev_merge[merged] = (symbols[left], symbols[right])

    for k in range(1, n):
        push(k - 1, k)
    positions = _PartIndex(n)
    steps = []
    while heap:
        neg_score, left, right, size, piece_id = heapq.heappop(heap)
        if not symbols[left] or not symbols[right] or len(symbols[left]) + len(symbols[right]) != size:
            continue  # stale
        symbols[left] += symbols[right]
        symbols[right] = ""
        steps.append(MergeStep(positions.position(left), _sp_bytes(symbols[left]), piece_id, -neg_score))
        positions.remove(right)
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        push(prv[left], left)
        push(left, nxt[left])
    final: list[str] = []
    for symbol in symbols:
        if symbol:
            _resegment(model, symbol, rev_merge, final)
    return final, tuple(steps)


def _resegment(model: _SpModel, symbol: str, rev_merge: dict[str, tuple[str, str]], out: list[str]) -> None:
    """An unused piece is not emitted: it is split back into the two symbols that made it."""
    piece_id = model.pieces.get(symbol)
    if piece_id is None or piece_id not in model.unused or symbol not in rev_merge:
        out.append(symbol)
        return
    left, right = rev_merge[symbol]
    _resegment(model, left, rev_merge, out)
    _resegment(model, right, rev_merge, out)


def _sp_ids(model: _SpModel, symbols: list[str]) -> tuple[list[int], list[str]]:
    """Ids of the final symbols: a symbol not in the vocabulary becomes its UTF-8 bytes as
    `<0xNN>` pieces (byte fallback) or the unknown id, one per run of unknown symbols."""
    ids: list[int] = []
    notes: list[str] = []
    last_unknown = False
    for symbol in symbols:
        piece_id = model.pieces.get(symbol)
        if piece_id is not None:
            ids.append(piece_id)
            last_unknown = False
        elif model.byte_ids is not None:
            ids.extend(model.byte_ids[b] for b in symbol.encode("utf-8"))
            notes.append(f"{symbol!r} is not in the vocabulary: byte fallback")
        else:
            if not last_unknown:
                ids.append(model.unk_id)
                notes.append(f"{symbol!r} is not in the vocabulary: unknown")
            last_unknown = True
    return ids, notes


# -- a tokenizer that rewrites the text first (the ChatGLM-6B profile) -----------------------------


def _preprocessed_segment(
    tokenizer: Tokenizer, prep: Preprocessing, algorithm: Algorithm, text: str, start: int, end: int
) -> list[ChunkReplay]:
    """The inner model's merges over the rewritten segment; a chunk's text is what the model
    merged (`<|blank_2|>`, `<n>`), its span the original characters, its ids the outer ones."""
    rewritten = prep.apply(text[start:end])
    if not rewritten:
        return []
    inner = _plain_segment(prep.inner, algorithm, rewritten, 0, len(rewritten))
    outer = prep.outer_ids([i for chunk in inner for i in chunk.ids])
    dropped = sum(len(chunk.ids) for chunk in inner) - len(outer)  # leading ids the tokenizer drops
    chunks, pos = [], 0
    for chunk in inner:
        skip = min(dropped, len(chunk.ids))
        dropped -= skip
        ids = tuple(outer[pos : pos + len(chunk.ids) - skip])
        pos += len(ids)
        note = chunk.note
        if skip:
            note = "; ".join(filter(None, [f"its first {skip} tokens dropped (see the preprocessing)", note]))
        pieces = tuple(tokenizer.piece(i) for i in ids)
        chunks.append(
            ChunkReplay(start, end, chunk.text, chunk.initial, chunk.steps, chunk.final, ids, pieces, note=note)
        )
    return chunks
