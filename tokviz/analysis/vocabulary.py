"""Browsing a whole vocabulary: a columnar table, fast filters, BPE parents, occurrences.

`VocabularyTable.from_tokenizer(tok)` holds one row per id the tokenizer has (holes in a rank
file's id space have no row) in parallel columns: numpy arrays for the numeric ones, lists for the
strings. A Qt table model asks `len(table)`, `table.cell(row, column)` and `table.filter(...)`
(row indices, a numpy array) and never branches on the backend.

>>> table = VocabularyTable.from_tokenizer(load("qwen"))  # doctest: +SKIP
>>> rows = table.filter(VocabFilter(hex="e6 a0"))  # doctest: +SKIP
>>> 51461 in table.ids[rows]  # doctest: +SKIP
True

`MergeParents` answers "which two tokens is this token merged from" for byte-level BPE rank files
(tiktoken-backed tokenizers): it re-runs BPE on the token's own bytes with only the ranks below the
token's, and the final two parts are its parents.

This module does not encode text, draw anything or import Qt. It labels a token's script
(`script_of`) from `tokviz.core.scripts`' per-character classes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from tokviz.core import scripts as char_scripts
from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import Token, TokenKind, display_text, hex_bytes, is_fragment

# -- scripts --------------------------------------------------------------------------------------

Script = Literal["hangul", "han", "kana", "latin", "cyrillic", "arabic", "digits", "whitespace", "emoji"]
SCRIPTS: tuple[str, ...] = (
    "hangul", "han", "kana", "latin", "cyrillic", "arabic", "digits", "whitespace", "emoji",
)
#: every label `script_of` gives: `` (empty text), `other`, the filterable scripts, `mixed`
SCRIPT_LABELS: tuple[str, ...] = ("", "other", *SCRIPTS, "mixed")
_CODE = {label: code for code, label in enumerate(SCRIPT_LABELS)}
# tokviz.core.scripts' per-character classes -> the browser's labels (kana = hiragana + katakana)
_LABEL_OF_CLASS = {"hiragana": "kana", "katakana": "kana", "digit": "digits", "punctuation": "other"}
_CLASS_TO_CODE = np.array(
    [_CODE[_LABEL_OF_CLASS.get(name, name)] for name in char_scripts.SCRIPTS], dtype=np.uint8
)


def _codes_of_rows(texts: Sequence[str]) -> np.ndarray:
    """Script label code per text: the texts are classed in one vectorised pass (NUL-separated, so
    no mark or emoji cluster reaches across rows) and each row's classes OR-ed into a bit mask."""
    n = len(texts)
    if n == 0:
        return np.zeros(0, dtype=np.uint8)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n) + 1
    classes = char_scripts.char_classes("\x00".join(texts) + "\x00")
    bits = np.left_shift(np.uint16(1), _CLASS_TO_CODE[classes].astype(np.uint16))
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    ends = starts + lengths - 1  # the NUL after each row is not part of it
    bits[ends] = 0
    present = np.bitwise_or.reduceat(bits, starts)
    return _label_codes(present)


def script_codes(texts: Sequence[str]) -> np.ndarray:
    """The `script_of` label of each text, as indices into `SCRIPT_LABELS`, in one vectorised pass.

    >>> [SCRIPT_LABELS[c] for c in script_codes([" the", "한국", "\\n"])]
    ['latin', 'hangul', 'whitespace']
    """
    return _codes_of_rows(texts)


def _label_codes(present: np.ndarray) -> np.ndarray:
    """One label per row from the set of label codes present (a bit mask)."""
    ws, other = 1 << _CODE["whitespace"], 1 << _CODE["other"]
    letters = present & ~np.uint16(ws | other)
    out = np.full(len(present), _CODE["mixed"], dtype=np.uint8)
    out[present == 0] = _CODE[""]
    out[(letters == 0) & (present != 0)] = _CODE["other"]
    out[present == ws] = _CODE["whitespace"]
    single = (letters != 0) & ((letters & (letters - 1)) == 0)
    out[single] = np.log2(letters[single]).astype(np.uint8)
    return out


def script_of(text: str) -> str:
    """Name the script of a token's text: the one script of its letters, digits or emoji, ignoring
    spaces, punctuation and U+FFFD; `whitespace` when all whitespace, `mixed` for several, `other`
    for none. Characters are classed by `tokviz.core.scripts` (kana = hiragana + katakana).

    >>> script_of(" 한국어"), script_of("東京"), script_of("ひらがなカタカナ"), script_of(" the")
    ('hangul', 'han', 'kana', 'latin')
    >>> script_of("\\n\\n")
    'whitespace'
    >>> script_of("2024"), script_of("a1"), script_of("😀"), script_of("!?"), script_of("")
    ('digits', 'mixed', 'emoji', 'other', '')
    """
    return SCRIPT_LABELS[int(_codes_of_rows([text])[0])]


# -- the table ------------------------------------------------------------------------------------

Column = Literal["id", "piece", "text", "hex", "length", "kind", "whole_utf8", "script"]
#: (column, header) in the order a view shows them
COLUMNS: tuple[tuple[Column, str], ...] = (
    ("id", "ID"),
    ("text", "Text"),  # decoded, in the panes' notation; the vocabulary's own spelling second
    ("piece", "Piece"),
    ("hex", "Bytes"),
    ("length", "Length"),
    ("kind", "Kind"),
    ("whole_utf8", "Whole UTF-8"),
    ("script", "Script"),
)
KINDS: tuple[TokenKind, ...] = tuple(TokenKind)
_KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
_TEXT_SEPARATOR = "\ud800"  # a lone surrogate: no decoded text, readable text or piece holds one


class VocabRow(NamedTuple):
    id: int
    text: str
    piece: str
    hex: str
    length: int
    kind: TokenKind
    whole_utf8: bool
    script: str


@dataclass(frozen=True)
class VocabFilter:
    """What rows to keep; every set field must hold (AND).

    `text` matches, case-insensitively, the token's decoded text, its readable text (`·the`) or its
    piece (`Ġthe`, `▁the`). `hex` is a byte sequence (`e6 a0`, `E6A0`, `0xe6 0xa0`) the token's
    bytes contain. `id_min`/`id_max` are inclusive.
    """

    text: str = ""
    hex: str = ""
    fragments_only: bool = False
    special_only: bool = False
    script: Script | None = None
    id_min: int | None = None
    id_max: int | None = None
    #: keep only these ids (an odd-token category, `tokviz.analysis.oddities`)
    only_ids: tuple[int, ...] | None = None


def looks_like_hex(query: str) -> bool:
    """Whether a search reads as bytes in hex (`e6 a0`, `0xE6A0`, `\\xe6`): pairs of hex digits,
    at least one pair, with the usual separators.

    >>> looks_like_hex("e6 a0"), looks_like_hex("0xE6,0xA0"), looks_like_hex("cafe"), looks_like_hex("the")
    (True, True, True, False)
    """
    try:
        return bool(parse_hex(query))
    except ValueError:
        return False


def parse_hex(query: str) -> bytes:
    """Read a byte sequence written in hex.

    >>> parse_hex("e6 a0"), parse_hex("0xE6,0xA0")
    (b'\\xe6\\xa0', b'\\xe6\\xa0')
    """
    digits = query.lower().replace("0x", "").replace("\\x", "")
    digits = "".join(c for c in digits if c not in " ,;:-\t")
    try:
        if len(digits) % 2:
            raise ValueError
        return bytes.fromhex(digits)
    except ValueError:
        raise ValueError(
            f"{query!r} is not a byte sequence in hex: write pairs of hex digits, e.g. 'e6 a0'"
        ) from None


class VocabularyTable:
    """Every id of a tokenizer as parallel columns, with filters and sorting for a table view."""

    def __init__(
        self,
        ids: Sequence[int],
        pieces: list[str],
        data: list[bytes],
        kinds: Sequence[TokenKind],
        *,
        name: str = "",
        merges: MergeParents | None = None,
    ) -> None:
        if not len(ids) == len(pieces) == len(data) == len(kinds):
            raise ValueError("columns of a VocabularyTable must have the same length")
        self.name = name
        self.ids = np.asarray(ids, dtype=np.int64)
        self.pieces = pieces
        self.data = data
        self.decoded = [d.decode("utf-8", "replace") for d in data]  # U+FFFD for partial UTF-8
        self.texts = [display_text(t) for t in self.decoded]
        self.lengths = np.fromiter(map(len, data), dtype=np.int32, count=len(data))
        self.kinds = np.fromiter((_KIND_CODE[k] for k in kinds), dtype=np.uint8, count=len(data))
        # only a row whose decoding shows U+FFFD can be a fragment (or hold a real U+FFFD)
        self.whole_utf8 = np.fromiter(
            ("\ufffd" not in t or not is_fragment(d) for t, d in zip(self.decoded, data)),
            dtype=bool, count=len(data),
        )
        self.merges = merges
        self._row_of = {int(i): row for row, i in enumerate(self.ids.tolist())}
        self._cache: dict[str, object] = {}

    @classmethod
    def from_tokenizer(cls, tokenizer: Tokenizer) -> VocabularyTable:
        """Build the table, search blobs and script column included (seconds for a large
        vocabulary; backends other than tiktoken go through `Tokenizer.vocab()`): build it off the
        GUI thread. Afterwards filters only read it (sorting caches one rank array per column)."""
        merges = MergeParents.for_tokenizer(tokenizer)
        if merges is not None:
            return cls._from_ranks(tokenizer, merges)
        ids, pieces, data, kinds = [], [], [], []
        for entry in tokenizer.vocab():
            ids.append(entry.id)
            pieces.append(entry.piece)
            data.append(entry.bytes)
            kinds.append(entry.kind)
        return cls(ids, pieces, data, kinds, name=tokenizer.name).prepare()

    @classmethod
    def _from_ranks(cls, tokenizer: Tokenizer, merges: MergeParents) -> VocabularyTable:
        """Fast path for rank files: bytes straight from the ranks, pieces by one `translate`."""
        from tokviz.core.backends.tiktoken_backend import BYTE_LEVEL

        spell = str.maketrans({chr(b): c for b, c in BYTE_LEVEL.items()})
        rows = sorted((i, d) for d, i in merges.ranks.items())
        specials = sorted((i, s) for s, i in tokenizer.special_tokens.items())
        ids = [i for i, _ in rows] + [i for i, _ in specials]
        data = [d for _, d in rows] + [s.encode("utf-8") for _, s in specials]
        # one translate over all bytes (one character per byte), then cut: not a call per row
        spelled = b"".join(d for _, d in rows).decode("latin-1").translate(spell)
        ends = np.cumsum([len(d) for _, d in rows]).tolist()
        pieces = [spelled[a:b] for a, b in zip([0, *ends], ends)] + [s for _, s in specials]
        kinds = [
            TokenKind.FRAGMENT if not d.isascii() and is_fragment(d) else TokenKind.NORMAL for _, d in rows
        ]
        kinds += [TokenKind.SPECIAL] * len(specials)
        order = np.argsort(np.asarray(ids), kind="stable").tolist()
        ids, pieces, data, kinds = ([column[k] for k in order] for column in (ids, pieces, data, kinds))
        return cls(ids, pieces, data, kinds, name=tokenizer.name, merges=merges).prepare()

    # -- reading ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.data)

    def row_of(self, token_id: int) -> int | None:
        """The row showing `token_id`, or None when the id is not in the vocabulary."""
        return self._row_of.get(token_id)

    @property
    def scripts(self) -> np.ndarray:
        """Script code per row (an index into `SCRIPT_LABELS`), computed once."""
        codes = self._cache.get("scripts")
        if codes is None:
            codes = self._cache["scripts"] = _codes_of_rows(self.decoded)
        return codes  # type: ignore[return-value]

    def cell(self, row: int, column: Column) -> str | int | bool:
        """One cell's value, as a view shows it (the kind and script by name)."""
        if column == "id":
            return int(self.ids[row])
        if column == "piece":
            return self.pieces[row]
        if column == "text":
            return self.texts[row]
        if column == "hex":
            return hex_bytes(self.data[row])
        if column == "length":
            return int(self.lengths[row])
        if column == "kind":
            return KINDS[self.kinds[row]].value
        if column == "whole_utf8":
            return bool(self.whole_utf8[row])
        if column == "script":
            return SCRIPT_LABELS[self.scripts[row]]
        raise ValueError(f"unknown column {column!r}; the columns are {[c for c, _ in COLUMNS]}")

    def row(self, row: int) -> VocabRow:
        return VocabRow(*(self.cell(row, c) for c, _ in COLUMNS))  # type: ignore[arg-type]

    # -- filtering and sorting --------------------------------------------------------------------

    def filter(self, spec: VocabFilter | None = None, **fields) -> np.ndarray:
        """Row indices (ascending) of the rows `spec` keeps; fields may be given as keywords.

        Every condition is a numpy mask; text and hex searches are one regex scan over all rows
        joined, never a Python loop over the rows.

        >>> table.filter(VocabFilter(script="hangul", fragments_only=False))  # doctest: +SKIP
        array([  1811,   2580, ...])
        """
        spec = spec if spec is not None else VocabFilter(**fields)
        mask = np.ones(len(self), dtype=bool)
        if spec.id_min is not None:
            mask &= self.ids >= spec.id_min
        if spec.id_max is not None:
            mask &= self.ids <= spec.id_max
        if spec.only_ids is not None:
            mask &= np.isin(self.ids, np.asarray(spec.only_ids, dtype=np.int64))
        if spec.fragments_only:
            mask &= ~self.whole_utf8
        if spec.special_only:  # special / control pieces, and the unknown piece
            mask &= np.isin(self.kinds, [_KIND_CODE[TokenKind.SPECIAL], _KIND_CODE[TokenKind.UNKNOWN]])
        if spec.script is not None:
            if spec.script not in SCRIPTS:
                raise ValueError(f"unknown script {spec.script!r}; choose one of {', '.join(SCRIPTS)}")
            mask &= self.scripts == _CODE[spec.script]
        if spec.hex:
            mask &= self._contains("bytes", parse_hex(spec.hex))
        if spec.text:
            mask &= self._contains("text", spec.text.casefold())  # matches decoded, readable or piece
        return np.flatnonzero(mask)

    def prepare(self) -> VocabularyTable:
        """Compute the search blobs and the script column now (off the GUI thread), so that every
        later filter is fast; `from_tokenizer` calls it."""
        self._blob("bytes")
        self._blob("text")
        self.scripts  # noqa: B018  (computes and caches the column)
        return self

    def _contains(self, column: Literal["bytes", "text"], needle: bytes | str) -> np.ndarray:
        """Mask of rows whose column contains `needle`, from one regex scan over all rows joined
        by a separator: NUL for bytes (a needle holding NUL is checked row by row), a lone
        surrogate for text (decoded UTF-8 never holds one)."""
        found = np.zeros(len(self), dtype=bool)
        if not needle:
            return ~found
        blob, separators, per_row = self._blob(column)
        separator = b"\x00" if column == "bytes" else _TEXT_SEPARATOR
        if separator in needle:  # type: ignore[operator]
            if column == "bytes":
                found[[r for r, d in enumerate(self.data) if needle in d]] = True  # type: ignore[operator]
            return found
        pattern: Any = re.escape(needle)  # type: ignore[type-var]  # bytes or str, as `blob` is
        positions = np.fromiter((m.start() for m in re.finditer(pattern, blob)), dtype=np.int64)
        found[np.searchsorted(separators, positions) // per_row] = True
        return found

    def _blob(self, column: Literal["bytes", "text"]) -> tuple[bytes | str, np.ndarray, int]:
        """All rows joined (text: decoded, readable and piece per row, case-folded), the offsets of
        the separators, and how many separators end one row."""
        key = f"blob:{column}"
        cached = self._cache.get(key)
        if cached is None:
            if column == "bytes":
                blob: bytes | str = b"\x00".join([*self.data, b""])
                ends = np.cumsum(self.lengths.astype(np.int64) + 1) - 1
                cached = (blob, ends, 1)
            else:
                fields = itertools.chain.from_iterable(zip(self.decoded, self.texts, self.pieces))
                blob = _TEXT_SEPARATOR.join([*fields, ""]).casefold()  # casefold may lengthen: ß -> ss
                points = np.frombuffer(blob.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
                cached = (blob, np.flatnonzero(points == ord(_TEXT_SEPARATOR)), 3)
            self._cache[key] = cached
        return cached  # type: ignore[return-value]

    def sort(self, rows: np.ndarray | None, column: Column, *, descending: bool = False) -> np.ndarray:
        """`rows` (all when None) reordered by a column; ties in id order (reversed when descending)."""
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, dtype=np.int64)
        rank = self._sort_rank(column)
        order = np.argsort(-rank[rows] if descending else rank[rows], kind="stable")
        return rows[order]

    def _sort_rank(self, column: Column) -> np.ndarray:
        """Each row's position in the whole table sorted by `column` (cached per column)."""
        key = f"rank:{column}"
        rank = self._cache.get(key)
        if rank is None:
            if column in ("id", "length", "kind", "whole_utf8", "script"):
                values: Any = {
                    "id": self.ids, "length": self.lengths, "kind": self.kinds,
                    "whole_utf8": self.whole_utf8, "script": self.scripts,
                }[column]
                order = np.argsort(values, kind="stable")
            else:
                values = {"piece": self.pieces, "text": self.texts, "hex": self.data}[column]
                order = np.asarray(sorted(range(len(self)), key=values.__getitem__), dtype=np.int64)
            rank = np.empty(len(self), dtype=np.int64)
            rank[order] = np.arange(len(self))
            self._cache[key] = rank
        return rank  # type: ignore[return-value]

    # -- relations ----------------------------------------------------------------------------------

    def parents(self, token_id: int) -> tuple[int, int] | None:
        """The two ids `token_id` is merged from; None for a byte, a special token, a token no
        merge makes, or a vocabulary without ranks."""
        return self.merges.parents(token_id) if self.merges is not None else None

    def children(self, token_id: int) -> tuple[int, ...]:
        """Ids merged from `token_id` (as left or right part); the first call indexes the whole
        vocabulary (seconds: call it off the GUI thread)."""
        return self.merges.children(token_id) if self.merges is not None else ()


# -- byte-level BPE parents -----------------------------------------------------------------------


def bpe_parts(ranks: Mapping[bytes, int], data: bytes, *, max_rank: int | None = None) -> list[bytes]:
    """Merge `data`'s bytes as tiktoken does (lowest rank first, leftmost on a tie), using only
    ranks below `max_rank`.

    >>> bpe_parts({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, b"abb")
    [b'abb']
    >>> bpe_parts({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, b"abb", max_rank=3)
    [b'ab', b'b']
    """
    parts = [data[i : i + 1] for i in range(len(data))]
    limit = max_rank if max_rank is not None else float("inf")
    get = ranks.get
    while len(parts) > 1:
        best, best_rank = -1, limit
        for k in range(len(parts) - 1):
            rank = get(parts[k] + parts[k + 1])
            if rank is not None and rank < best_rank:
                best, best_rank = k, rank
        if best < 0:
            break
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    return parts


class MergeParents:
    """Parents and children of byte-level BPE tokens, derived from the ranks alone."""

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        self.ranks = ranks
        self._bytes_of = {rank: data for data, rank in ranks.items()}
        self._parents: dict[int, tuple[int, int] | None] = {}
        self._children: dict[int, tuple[int, ...]] | None = None

    @classmethod
    def for_tokenizer(cls, tokenizer: Tokenizer) -> MergeParents | None:
        """For a tokenizer whose ids are the ranks of a byte-level BPE (`mergeable_ranks`); None
        for any other."""
        ranks = tokenizer.mergeable_ranks
        return cls(ranks) if ranks else None

    def parents(self, token_id: int) -> tuple[int, int] | None:
        """`(left_id, right_id)` whose merge makes `token_id`, checked to re-merge to it.

        >>> MergeParents({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}).parents(3)
        (2, 1)
        """
        if token_id in self._parents:
            return self._parents[token_id]
        data = self._bytes_of.get(token_id)
        found = None
        if data is not None and len(data) > 1:
            parts = bpe_parts(self.ranks, data, max_rank=token_id)
            if len(parts) == 2 and parts[0] + parts[1] == data:
                left, right = self.ranks[parts[0]], self.ranks[parts[1]]
                if left < token_id and right < token_id:
                    found = (left, right)
        self._parents[token_id] = found
        return found

    def children(self, token_id: int) -> tuple[int, ...]:
        if self._children is None:
            index: dict[int, list[int]] = {}
            for child in sorted(self._bytes_of):
                pair = self.parents(child)
                if pair is not None:
                    for parent in set(pair):
                        index.setdefault(parent, []).append(child)
            self._children = {parent: tuple(kids) for parent, kids in index.items()}
        return self._children.get(token_id, ())


# -- occurrences ----------------------------------------------------------------------------------


def occurrences(tokens: Sequence[Token] | Iterable[int], token_id: int) -> np.ndarray:
    """Indices of the tokens (or ids) equal to `token_id`, for "jump to occurrences".

    >>> occurrences([5, 7, 5], 5).tolist()
    [0, 2]
    """
    ids = [t if isinstance(t, int) else t.id for t in tokens]
    return np.flatnonzero(np.asarray(ids, dtype=np.int64) == token_id)
