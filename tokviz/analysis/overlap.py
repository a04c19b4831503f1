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

import heapq
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, AnyStr, Literal

import numpy as np

from tokviz.analysis.vocabulary import SCRIPT_LABELS, MergeParents, looks_like_hex, parse_hex, script_codes
from tokviz.core.cancel import check
from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import TokenKind, display_text, hex_bytes, is_fragment

__all__ = [
    "LENGTH_BUCKETS", "ONLY_COLUMNS", "Breakdown", "NewMerge", "OnlyTable", "Overlap", "PairStats",
    "contained_pairs", "length_bucket", "new_merges", "only_table", "overlap_of", "overlap_of_sets",
    "shown_bytes", "token_bytes_of",
]

Breakdown = Literal["script", "length"]
#: byte-length classes, in display order
LENGTH_BUCKETS: tuple[str, ...] = ("1", "2", "3", "4", "5-8", "9-16", "17+")
_NOT_TEXT = (TokenKind.SPECIAL, TokenKind.UNKNOWN)
#: tokens between two looks at the cancel flag in the longer loops, and the most one C call (which
#: holds the GIL, so the GUI thread waits) is given at once
_CHUNK = 8_192


def length_bucket(n: int) -> str:
    """The byte-length class of a token of `n` bytes.

    >>> [length_bucket(n) for n in (1, 4, 5, 16, 40)]
    ['1', '4', '5-8', '9-16', '17+']
    """
    if n <= 4:
        return str(n)
    return "5-8" if n <= 8 else "9-16" if n <= 16 else "17+"


def shown_bytes(data: bytes) -> str:
    """A token's bytes as a pane labels the token alone (and `tokviz encode` prints it): its text,
    whitespace visible, and a fragment's hex after it.

    >>> shown_bytes(b" the"), shown_bytes(b"\\xe6\\xa0")
    ('·the', '�⟨e6 a0⟩')
    """
    shown = display_text(data, visible_whitespace=True)
    return f"{shown}⟨{hex_bytes(data)}⟩" if is_fragment(data) else shown


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
    _scripts: dict[bytes, str] | None = field(init=False, default=None, repr=False)
    _union: int = field(init=False, default=0, repr=False)

    def __post_init__(self) -> None:
        if len(self.sets) < 2:
            raise ValueError("an overlap needs at least two vocabularies")
        # How many vocabularies hold each token, counted in a Python loop: the set algebra over
        # every key is a few long C calls that each hold the GIL (and so the window) throughout.
        holders: dict[bytes, int] = {}
        get = holders.get
        for s in self.sets:
            for data in s:
                holders[data] = get(data, 0) + 1
        n = len(self.sets)
        self.shared = {data for data, count in holders.items() if count == n}
        self.only = [{data for data in s if holders[data] == 1} for s in self.sets]
        self._union = len(holders)
        if not self.specials:
            self.specials = [set() for _ in self.sets]

    @property
    def shared_count(self) -> int:
        return len(self.shared)

    @property
    def union_count(self) -> int:
        return self._union

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

    def pair(self, a: int, b: int) -> PairStats:
        """`common`, `same_ids` and `jaccard` of vocabularies `a` and `b`, their intersection made once.

        >>> overlap_of_sets(["a", "b"], [{b"x": 0, b"y": 1}, {b"x": 0, b"y": 2, b"z": 3}]).pair(0, 1)
        PairStats(a=0, b=1, common=2, same_ids=1, union=3)
        """
        sa, sb = self.sets[a], self.sets[b]
        small, big = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
        # a loop, not `sa.keys() & sb.keys()`: one C call over 200k keys holds the GIL that long
        common = same = 0
        for data, token_id in small.items():
            other = big.get(data)
            if other is not None:
                common += 1
                same += other == token_id
        return PairStats(a, b, common, same, len(sa) + len(sb) - common)

    def breakdown(self, by: Breakdown, *, cancel: threading.Event | None = None
                  ) -> list[tuple[str, list[int], int, list[int]]]:
        """Rows `(label, tokens per vocabulary, shared by all, only in each)` per script or length
        class, in display order, leaving out classes no vocabulary has."""
        label = self._labeller(by, cancel)
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
        data = list(self.only[i])
        ids = np.fromiter((s[d] for d in data), dtype=np.int64, count=len(data))
        # numpy sorts the ids without the GIL: a sort of the tuples would hold it (and the window)
        return [(int(ids[k]), data[k]) for k in np.argsort(ids, kind="stable").tolist()]

    def _labeller(self, by: Breakdown, cancel: threading.Event | None = None) -> Callable[[bytes], str]:
        if by == "length":
            return lambda data: length_bucket(len(data))
        if by != "script":
            raise ValueError(f"unknown breakdown {by!r}: choose script or length")
        return self.scripts(cancel=cancel).__getitem__

    def scripts(self, *, cancel: threading.Event | None = None) -> dict[bytes, str]:
        """Every token's script label (`fragment` for bytes that are not whole UTF-8), made once
        (a union of 400k tokens takes seconds) and looking at `cancel` between chunks."""
        if self._scripts is not None:
            return self._scripts
        every = list({data: None for s in self.sets for data in s})  # a loop, not one long C call
        labels: dict[bytes, str] = {}
        for at in range(0, len(every), _CHUNK):
            check(cancel, "the overlap")
            chunk = every[at:at + _CHUNK]
            codes = script_codes([d.decode("utf-8", "replace") for d in chunk])
            for data, code in zip(chunk, codes.tolist()):
                try:
                    data.decode("utf-8")
                    labels[data] = SCRIPT_LABELS[code]
                except UnicodeDecodeError:
                    labels[data] = "fragment"
        self._scripts = labels
        return labels


def overlap_of_sets(
    names: Sequence[str], sets: Sequence[Mapping[bytes, int]], specials: Sequence[set[str]] = ()
) -> Overlap:
    return Overlap(list(names), [dict(s) for s in sets], [set(s) for s in specials])


def overlap_of(tokenizers: Sequence[Tokenizer], *, cancel: threading.Event | None = None) -> Overlap:
    """The overlap of two or more loaded vocabularies (`cancel` is looked at between them)."""
    sets = []
    for t in tokenizers:
        check(cancel, "the overlap")
        sets.append(token_bytes_of(t))
    check(cancel, "the overlap")
    return Overlap([t.name for t in tokenizers], sets, [set(t.special_tokens) for t in tokenizers])


@dataclass(frozen=True)
class PairStats:
    """Two vocabularies (by index) compared: tokens in both, of those under the same id, tokens in either."""

    a: int
    b: int
    common: int
    same_ids: int
    union: int

    @property
    def jaccard(self) -> float:
        return self.common / self.union if self.union else 1.0


def contained_pairs(overlap: Overlap) -> list[tuple[int, int]]:
    """`(base, extended)` index pairs where every token of `base` is in `extended` and `extended`
    has more: an extension, or a longer training run beside a shorter one (whose new merges say
    what the extension adds).

    >>> contained_pairs(overlap_of_sets(["a", "b", "c"], [{b"x": 0}, {b"x": 0, b"y": 1}, {b"z": 0}]))
    [(0, 1)]
    """
    sets = overlap.sets
    return [(a, b) for a in range(len(sets)) for b in range(len(sets))
            if a != b and len(sets[a]) < len(sets[b]) and sets[a].keys() <= sets[b].keys()]


@dataclass(frozen=True)
class NewMerge:
    """A token the extended vocabulary has and the base does not, with its merge parents (None
    when it is not made by a merge of two tokens, or the vocabulary has no ranks)."""

    id: int
    data: bytes
    parents: tuple[int, int] | None
    parent_bytes: tuple[bytes, bytes] | None


def new_merges(base: Mapping[bytes, int], extended: Tokenizer, *,
               cancel: threading.Event | None = None) -> list[NewMerge]:
    """The tokens of `extended` whose bytes `base` lacks, in id order, each with the two tokens
    of `extended` it is merged from (a byte-level BPE's parents, `MergeParents`)."""
    own = token_bytes_of(extended)
    merges = MergeParents.for_tokenizer(extended)
    out = []
    for k, (data, token_id) in enumerate(sorted(((d, i) for d, i in own.items() if d not in base),
                                                key=lambda x: x[1])):
        if k % 1024 == 0:
            check(cancel, "the overlap")
        pair = merges.parents(token_id) if merges is not None else None
        parent_bytes = None
        if pair is not None:
            parent_bytes = (extended.token_bytes(pair[0]), extended.token_bytes(pair[1]))
        out.append(NewMerge(token_id, data, pair, parent_bytes))
    return out


# -- the tokens only one vocabulary has, as a table ------------------------------------------------

OnlyColumn = Literal["vocabulary", "id", "text", "piece", "hex", "length", "script"]
#: (column, header) in the order a view shows them: the decoded text in the panes' notation first,
#: the vocabulary's own spelling (`Ġthe`, `▁the`, `<0xE6>`) second
ONLY_COLUMNS: tuple[tuple[OnlyColumn, str], ...] = (
    ("vocabulary", "Vocabulary"), ("id", "ID"), ("text", "Text"), ("piece", "Spelling"),
    ("hex", "Bytes"), ("length", "Length"), ("script", "Script"),
)


class OnlyTable:
    """The tokens only one of the vocabularies has, one row each, in parallel columns (numpy for
    the numbers, lists for the strings): what a table view reads cell by cell, sorts and filters
    without a widget or a tuple per row.

    >>> o = overlap_of_sets(["a", "b"], [{b"x": 0, b" yy": 1}, {b"x": 5, b"\\xe6": 6}])
    >>> t = OnlyTable(o, [{1: "Ġyy"}.get, {6: "<0xE6>"}.get])
    >>> [t.cell(r, "text") for r in range(len(t))], t.cell(1, "hex"), t.cell(1, "script")
    (['·yy', '�'], 'e6', 'fragment')
    >>> t.filter(text="yy").tolist(), t.filter(text="e6").tolist(), t.filter(vocabulary=1).tolist()
    ([0], [1], [1])
    >>> t.sort(None, "length", descending=True).tolist()
    [0, 1]
    >>> t.csv_rows([1])  # doctest: +NORMALIZE_WHITESPACE
    [{'vocabulary': 'b', 'id': 6, 'text': '�', 'spelling': '<0xE6>', 'bytes': 'e6', 'length': 1,
      'script': 'fragment'}]
    """

    def __init__(self, overlap: Overlap, spellings: Sequence[Callable[[int], str]] | None = None, *,
                 cancel: threading.Event | None = None) -> None:
        """`spellings[i](id)`: vocabulary `i`'s own spelling of `id` (`Tokenizer.piece`); without
        them the spelling column holds the decoded text."""
        self.names = list(overlap.names)
        scripts = overlap.scripts(cancel=cancel)
        vocab: list[int] = []
        ids: list[int] = []
        self.data: list[bytes] = []
        self.pieces: list[str] = []
        for i in range(len(overlap.sets)):
            check(cancel, "the overlap")
            rows = overlap.only_rows(i)
            vocab.extend([i] * len(rows))
            ids.extend(token_id for token_id, _ in rows)
            self.data.extend(data for _, data in rows)
            spell = spellings[i] if spellings is not None else None
            for at in range(0, len(rows), _CHUNK):
                check(cancel, "the overlap")
                chunk = rows[at:at + _CHUNK]
                self.pieces.extend(spell(token_id) if spell is not None else data.decode("utf-8", "replace")
                                   for token_id, data in chunk)
        check(cancel, "the overlap")
        self.texts = [display_text(d) for d in self.data]
        self.scripts = [scripts[d] for d in self.data]
        self.vocab = np.asarray(vocab, dtype=np.int64)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.lengths = np.fromiter(map(len, self.data), dtype=np.int64, count=len(self.data))
        self._ranks: dict[str, np.ndarray] = {}
        self._text_blobs: list[tuple[str, np.ndarray]] | None = None
        self._data_blob: tuple[bytes, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.data)

    def cell(self, row: int, column: OnlyColumn) -> str | int:
        if column == "vocabulary":
            return self.names[int(self.vocab[row])]
        if column == "id":
            return int(self.ids[row])
        if column == "text":
            return self.texts[row]
        if column == "piece":
            return self.pieces[row]
        if column == "hex":
            return hex_bytes(self.data[row])
        if column == "length":
            return int(self.lengths[row])
        if column == "script":
            return self.scripts[row]
        raise ValueError(f"unknown column {column!r}")

    def filter(self, *, text: str = "", vocabulary: int | None = None, script: str | None = None,
               length: str | None = None) -> np.ndarray:
        """The rows (in table order) whose text, spelling or bytes contain `text` (a query that reads
        as hex, `e6 a0`, also finds those bytes; `·` finds a space, as the panes write it), of
        vocabulary index `vocabulary`, script label `script` and length class `length`."""
        keep = np.ones(len(self), dtype=bool)
        if vocabulary is not None:
            keep &= self.vocab == vocabulary
        if length is not None:
            keep &= np.isin(self.lengths, _lengths_of(length, int(self.lengths.max(initial=0))))
        if script is not None:
            keep &= np.fromiter((s == script for s in self.scripts), dtype=bool, count=len(self))
        if text:
            keep &= self._contains(text)
        return np.flatnonzero(keep)

    def _contains(self, query: str) -> np.ndarray:
        """Rows holding `query`: one search of each column joined into one string (not a Python
        loop over the rows on the GUI thread), the matches' offsets mapped back to rows."""
        found = np.zeros(len(self), dtype=bool)
        for blob, starts in self._blobs():
            found[_rows_of(blob, starts, query)] = True
        data, starts = self._bytes_blob()
        wanted = {query.replace("·", " ").encode("utf-8")}
        if looks_like_hex(query.strip()):
            wanted.add(parse_hex(query))
        for needle in wanted:
            found[_rows_of(data, starts, needle)] = True
        return found

    def _blobs(self) -> list[tuple[str, np.ndarray]]:
        if self._text_blobs is None:
            self._text_blobs = [_joined(self.texts, _SEP), _joined(self.pieces, _SEP)]
        return self._text_blobs

    def _bytes_blob(self) -> tuple[bytes, np.ndarray]:
        if self._data_blob is None:
            # 0xff is in no UTF-8 text: a query's bytes cannot match across two tokens (a hex
            # query with ff can, and then finds the row it starts in: a rare over-match)
            self._data_blob = _joined(self.data, b"\xff")
        return self._data_blob

    def prepare(self, *, cancel: threading.Event | None = None) -> OnlyTable:
        """Make every column's sort order now (on a worker), so a click on a header costs nothing."""
        for column, _ in ONLY_COLUMNS:
            check(cancel, "the overlap")
            self._rank(column)
        self._blobs()
        self._bytes_blob()
        return self

    def sort(self, rows: np.ndarray | None, column: OnlyColumn, *, descending: bool = False) -> np.ndarray:
        """`rows` (all when None) ordered by `column`; ties keep table order (vocabulary, then id)."""
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, dtype=np.int64)
        rank = self._rank(column)[rows]
        order = np.argsort(-rank if descending else rank, kind="stable")
        return rows[order]

    def _rank(self, column: OnlyColumn) -> np.ndarray:
        """Each row's place in the order of `column` (equal values, equal places)."""
        if column not in self._ranks:
            if column in ("vocabulary", "id", "length"):
                values: np.ndarray = {"vocabulary": self.vocab, "id": self.ids, "length": self.lengths}[column]
            else:
                keys: Sequence[object] = (
                    self.data if column == "hex"  # the bytes order is the hex order
                    else {"text": self.texts, "piece": self.pieces, "script": self.scripts}[column]
                )
                values = _ranks_of(keys)
            self._ranks[column] = np.asarray(values, dtype=np.int64)
        return self._ranks[column]

    def csv_rows(self, rows: Sequence[int] | np.ndarray | None = None) -> list[dict[str, object]]:
        """`rows` (all when None) as records for `analysis.export.csv_text`: whole numbers, no floats."""
        chosen = range(len(self)) if rows is None else [int(r) for r in rows]
        return [{header.lower(): self.cell(r, column) for column, header in ONLY_COLUMNS} for r in chosen]


def _ranks_of(keys: Sequence[Any]) -> np.ndarray:
    """Each key's place in sorted order, equal keys equal places. Sorted in chunks and merged in
    Python: one sort of every string is one long C call that holds the GIL (and stalls the window).

    >>> _ranks_of(["b", "a", "c", "a"]).tolist()
    [1, 0, 2, 0]
    """
    n = len(keys)
    get = keys.__getitem__
    runs = [sorted(range(at, min(at + _CHUNK, n)), key=get) for at in range(0, n, _CHUNK)]
    ranks = np.zeros(n, dtype=np.int64)
    place, previous, first = -1, None, True
    for k in heapq.merge(*runs, key=get):
        key = keys[k]
        if first or key != previous:
            place += 1
            previous, first = key, False
        ranks[k] = place
    return ranks


_SEP = "\ud800"  # a lone surrogate: no decoded text or spelling holds one, nor can a query typed


def _joined(parts: Sequence[AnyStr], sep: AnyStr) -> tuple[AnyStr, np.ndarray]:
    """`parts` joined by `sep` (which none holds), and where each part starts."""
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)) + len(sep)
    starts = np.zeros(len(parts), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return sep.join(parts), starts


def _rows_of(blob: AnyStr, starts: np.ndarray, needle: AnyStr) -> np.ndarray:
    """The parts of a `_joined` blob that hold `needle` (by index).

    >>> blob, starts = _joined(["ab", "b", "ca"], "|")
    >>> _rows_of(blob, starts, "b").tolist(), _rows_of(blob, starts, "a").tolist()
    ([0, 1], [0, 2])
    """
    if not needle:
        return np.arange(len(starts))
    at: list[int] = []
    k = blob.find(needle)
    while k >= 0:
        at.append(k)
        k = blob.find(needle, k + 1)
    return np.unique(np.searchsorted(starts, np.asarray(at, dtype=np.int64), side="right") - 1)


def _lengths_of(bucket: str, longest: int) -> list[int]:
    """The byte lengths in a length class, up to `longest`.

    >>> _lengths_of("5-8", 40), _lengths_of("2", 40), _lengths_of("17+", 18)
    ([5, 6, 7, 8], [2], [17, 18])
    """
    if bucket not in LENGTH_BUCKETS:
        raise ValueError(f"unknown length class {bucket!r}: choose one of {', '.join(LENGTH_BUCKETS)}")
    return [n for n in range(1, max(longest, 17) + 1) if length_bucket(n) == bucket]


def only_table(overlap: Overlap, tokenizers: Sequence[Tokenizer], *,
               cancel: threading.Event | None = None) -> OnlyTable:
    """The `OnlyTable` of `overlap`, with each vocabulary's own spelling of its tokens, sorted ready."""
    return OnlyTable(overlap, [t.piece for t in tokenizers], cancel=cancel).prepare(cancel=cancel)
