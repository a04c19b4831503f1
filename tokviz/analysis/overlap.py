"""What two or more vocabularies share: tokens compared by their bytes, Qt-free.

A vocabulary's *tokens* here are its ordinary ids' byte strings (special and unknown pieces are
left out: their bytes are a name, not text a model learned; they are compared by name in
`Overlap.specials`). Two vocabularies share a token when both have an id for the same bytes, under
any id: r50k_base and p50k_base give the same 50,256 byte strings the same ranks, and p50k adds 24
runs of spaces. A byte string under two ids of one vocabulary counts once.

`Overlap` answers: how many tokens all share, the Jaccard index of each pair, which tokens only one
has, each broken down by script (`tokviz.analysis.vocabulary.script_of`'s labels, plus `fragment`
for bytes that are not whole UTF-8) and by length in bytes. `new_merges` answers, for a vocabulary
and one that extends it (a `tokviz extend` extension, a trained BPE with more merges), which tokens
are new and which two tokens each is merged from.

>>> o = overlap_of_sets(["a", "b"], [{b"x": 0, b"yy": 1}, {b"x": 5, b"zz": 6}])
>>> o.shared_count, round(o.jaccard(0, 1), 3), [len(s) for s in o.only]
(1, 0.333, [1, 1])
>>> o.breakdown("length")[:2]
[('1', [1, 1], 1, [0, 0]), ('2', [1, 1], 0, [1, 1])]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tokviz.analysis.vocabulary import SCRIPT_LABELS, MergeParents, script_codes
from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import TokenKind

__all__ = [
    "LENGTH_BUCKETS", "Breakdown", "NewMerge", "Overlap", "length_bucket", "new_merges", "overlap_of",
    "overlap_of_sets", "token_bytes_of",
]

Breakdown = Literal["script", "length"]
#: byte-length classes, in display order
LENGTH_BUCKETS: tuple[str, ...] = ("1", "2", "3", "4", "5-8", "9-16", "17+")
_NOT_TEXT = (TokenKind.SPECIAL, TokenKind.UNKNOWN)


def length_bucket(n: int) -> str:
    """The byte-length class of a token of `n` bytes.

    >>> [length_bucket(n) for n in (1, 4, 5, 16, 40)]
    ['1', '4', '5-8', '9-16', '17+']
    """
    if n <= 4:
        return str(n)
    return "5-8" if n <= 8 else "9-16" if n <= 16 else "17+"


def token_bytes_of(tokenizer: Tokenizer) -> dict[bytes, int]:
    """Every ordinary token's bytes -> its (lowest) id; special and unknown pieces left out.

    A byte-level BPE's ranks are used as they are (they are exactly its ordinary tokens); any other
    vocabulary is read through `Tokenizer.vocab()`.
    """
    ranks = tokenizer.mergeable_ranks
    if ranks:
        return dict(ranks)
    out: dict[bytes, int] = {}
    for entry in tokenizer.vocab():
        if entry.kind not in _NOT_TEXT and entry.bytes:
            out.setdefault(entry.bytes, entry.id)
    return out


@dataclass
class Overlap:
    """The token sets of several vocabularies (bytes -> id each) and what they share."""

    names: list[str]
    sets: list[dict[bytes, int]]
    specials: list[set[str]] = field(default_factory=list)
    shared: set[bytes] = field(init=False)
    only: list[set[bytes]] = field(init=False)

    def __post_init__(self) -> None:
        if len(self.sets) < 2:
            raise ValueError("an overlap needs at least two vocabularies")
        keys = [set(s) for s in self.sets]
        self.shared = set.intersection(*keys)
        self.only = []
        for i, own in enumerate(keys):
            others = set().union(*(k for j, k in enumerate(keys) if j != i))
            self.only.append(own - others)
        if not self.specials:
            self.specials = [set() for _ in self.sets]

    @property
    def shared_count(self) -> int:
        return len(self.shared)

    @property
    def union_count(self) -> int:
        return len(set().union(*self.sets))

    def jaccard(self, a: int, b: int) -> float:
        """`|A ∩ B| / |A ∪ B|` of the token sets of vocabularies `a` and `b` (1.0 when both are empty)."""
        sa, sb = self.sets[a], self.sets[b]
        both = len(sa.keys() & sb.keys())
        union = len(sa) + len(sb) - both
        return both / union if union else 1.0

    def common(self, a: int, b: int) -> int:
        return len(self.sets[a].keys() & self.sets[b].keys())

    def same_ids(self, a: int, b: int) -> int:
        """How many of the tokens `a` and `b` share have the same id in both."""
        sa, sb = self.sets[a], self.sets[b]
        return sum(1 for data in sa.keys() & sb.keys() if sa[data] == sb[data])

    def breakdown(self, by: Breakdown) -> list[tuple[str, list[int], int, list[int]]]:
        """Rows `(label, tokens per vocabulary, shared by all, only in each)` per script or length
        class, in display order, leaving out classes no vocabulary has."""
        label = self._labeller(by)
        order = ("fragment", *SCRIPT_LABELS) if by == "script" else LENGTH_BUCKETS
        n = len(self.sets)
        rows: dict[str, tuple[list[int], list[int], list[int]]] = {
            name: ([0] * n, [0], [0] * n) for name in order
        }
        for i, s in enumerate(self.sets):
            for data in s:
                rows[label(data)][0][i] += 1
        for data in self.shared:
            rows[label(data)][1][0] += 1
        for i, only in enumerate(self.only):
            for data in only:
                rows[label(data)][2][i] += 1
        return [(name or "(empty)", totals, shared[0], only)
                for name, (totals, shared, only) in rows.items() if any(totals)]

    def only_rows(self, i: int) -> list[tuple[int, bytes]]:
        """The tokens only vocabulary `i` has, as `(id, bytes)` in id order."""
        s = self.sets[i]
        return sorted((s[data], data) for data in self.only[i])

    def _labeller(self, by: Breakdown) -> Callable[[bytes], str]:
        if by == "length":
            return lambda data: length_bucket(len(data))
        if by != "script":
            raise ValueError(f"unknown breakdown {by!r}: choose script or length")
        every = list(set().union(*self.sets))
        texts = [d.decode("utf-8", "replace") for d in every]
        codes = script_codes(texts)
        labels: dict[bytes, str] = {}
        for data, code in zip(every, codes.tolist()):
            try:
                data.decode("utf-8")
                labels[data] = SCRIPT_LABELS[code]
            except UnicodeDecodeError:
                labels[data] = "fragment"
        return labels.__getitem__


def overlap_of_sets(
    names: Sequence[str], sets: Sequence[Mapping[bytes, int]], specials: Sequence[set[str]] = ()
) -> Overlap:
    return Overlap(list(names), [dict(s) for s in sets], [set(s) for s in specials])


def overlap_of(tokenizers: Sequence[Tokenizer]) -> Overlap:
    """The overlap of two or more loaded vocabularies."""
    return Overlap(
        [t.name for t in tokenizers], [token_bytes_of(t) for t in tokenizers],
        [set(t.special_tokens) for t in tokenizers],
    )


@dataclass(frozen=True)
class NewMerge:
    """A token the extended vocabulary has and the base does not, with its merge parents (None
    when it is not made by a merge of two tokens, or the vocabulary has no ranks)."""

    id: int
    data: bytes
    parents: tuple[int, int] | None
    parent_bytes: tuple[bytes, bytes] | None


def new_merges(base: Mapping[bytes, int], extended: Tokenizer) -> list[NewMerge]:
    """The tokens of `extended` whose bytes `base` lacks, in id order, each with the two tokens
    of `extended` it is merged from (a byte-level BPE's parents, `MergeParents`)."""
    own = token_bytes_of(extended)
    merges = MergeParents.for_tokenizer(extended)
    out = []
    for data, token_id in sorted(((d, i) for d, i in own.items() if d not in base), key=lambda x: x[1]):
        pair = merges.parents(token_id) if merges is not None else None
        parent_bytes = None
        if pair is not None:
            parent_bytes = (extended.token_bytes(pair[0]), extended.token_bytes(pair[1]))
        out.append(NewMerge(token_id, data, pair, parent_bytes))
    return out
