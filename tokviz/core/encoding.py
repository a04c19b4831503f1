"""`Encoding`: one text's tokens as columns, the one result type of an encode.

As Hugging Face's `Encoding`: frozen numpy columns (byte and character spans, one key per token
into `TokenTable`, the distinct tokens' ids, bytes, kinds and pieces) with the lookups the views
need. It reads as a sequence of `Token`s, each built only when asked for and equal to
`Tokenizer.encode`'s. This module cuts nothing: backends lay tokens out (`tokviz.core.layout`)
and `Encoding.of_laid` puts them together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, overload

import numpy as np

from tokviz.core.layout import Laid, TokenInfo, gc_paused
from tokviz.core.tokens import Token, TokenKind, display_text

#: a kind's code in `TokenTable.kinds` is its index here
KINDS: tuple[TokenKind, ...] = tuple(TokenKind)
_CODE = {kind: code for code, kind in enumerate(KINDS)}

#: what one id stands for, in the order `Token` holds them: (id, bytes, kind, piece)
Row = tuple[int, bytes, TokenKind, str]


@dataclass(frozen=True, eq=False)
class TokenTable:
    """The distinct tokens of an encoding, row by row: id, bytes, kind (a code into `KINDS`) and
    piece. Two rows may share an id where a token stands for other bytes than its id's (an
    unknown token stands for the text it replaced); (id, bytes) is always distinct.

    >>> table = TokenTable.of_rows([(15339, b"hello", TokenKind.NORMAL, "hello")])
    >>> table.row(0), table.kinds.dtype
    ((15339, b'hello', <TokenKind.NORMAL: 'normal'>, 'hello'), dtype('uint8'))
    """

    ids: np.ndarray
    datas: list[bytes]
    kinds: np.ndarray
    pieces: list[str]

    @classmethod
    def of_rows(cls, rows: Iterable[Row]) -> TokenTable:
        """The table of `rows`, in their order."""
        ids: list[int] = []
        datas: list[bytes] = []
        kinds: list[int] = []
        pieces: list[str] = []
        for token_id, data, kind, piece in rows:
            ids.append(token_id)
            datas.append(data)
            kinds.append(_CODE[kind])
            pieces.append(piece)
        return cls(np.array(ids, dtype=np.int64), datas, np.array(kinds, dtype=np.uint8), pieces)

    def __len__(self) -> int:
        return len(self.datas)

    def row(self, k: int) -> Row:
        """Row `k` as (id, bytes, kind, piece)."""
        return int(self.ids[k]), self.datas[k], KINDS[self.kinds[k]], self.pieces[k]

    def rows(self) -> list[Row]:
        """Every row, as `row` gives it."""
        kinds = [KINDS[code] for code in self.kinds.tolist()]
        return list(zip(self.ids.tolist(), self.datas, kinds, self.pieces))

    def joined(self, rows: Iterable[Row]) -> tuple[TokenTable, list[int]]:
        """This table with the rows it lacks appended, and the index of each given row in it."""
        index_of = {key: k for k, key in enumerate(zip(self.ids.tolist(), self.datas))}
        extra: list[Row] = []
        where = []
        for row in rows:
            key = (row[0], row[1])
            if key not in index_of:
                index_of[key] = len(self) + len(extra)
                extra.append(row)
            where.append(index_of[key])
        if not extra:
            return self, where
        return TokenTable.of_rows([*self.rows(), *extra]), where


@dataclass(frozen=True, eq=False)
class Encoding(Sequence[Token]):
    """One encode, column by column: token i is row `key_index[i]` of `table`, spanning bytes
    `byte_starts[i]` to `byte_ends[i]` and characters `starts[i]` to `ends[i]` of the text, in text
    order. `n_bytes` is the text's UTF-8 length; `seconds` and `extra` say how it was made.

    >>> from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer
    >>> tiny = TiktokenTokenizer("tiny", {b"a": 0, b"b": 1, b" ": 2, b"ab": 3}, pattern="[ab]+| ")
    >>> enc = tiny.encode_columns("ab ba")
    >>> enc.ids.tolist(), enc.token_at_char(3), enc.tokens_in_chars(1, 4), enc.token_text(1)
    ([3, 2, 1, 0], 2, range(0, 3), '·')
    >>> enc[0]
    Token(id=3, bytes=b'ab', byte_start=0, byte_end=2, start=0, end=2, kind=<TokenKind.NORMAL: 'normal'>, piece='ab')
    """

    byte_starts: np.ndarray
    byte_ends: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    key_index: np.ndarray
    table: TokenTable
    n_bytes: int
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    # -- made from ---------------------------------------------------------------------------
    @classmethod
    def of_tokens(cls, tokens: Sequence[Token], n_bytes: int) -> Encoding:
        """The columns of `tokens` (every pass over them is C-level: transpose, dict, map)."""
        n = len(tokens)
        if n == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty, empty, np.zeros(0, dtype=np.int32), TokenTable.of_rows([]), n_bytes)
        with gc_paused():  # the transposed tuples hold no cycles; collections would only rescan them
            ids, datas, byte_starts, byte_ends, starts, ends, _kinds, _pieces = zip(*tokens)
            keys = list(zip(ids, datas))
            index_of = {key: i for i, key in enumerate(dict.fromkeys(keys))}
            where = dict(zip(keys, range(n)))  # one token per distinct key, for its kind and piece
            firsts = map(tokens.__getitem__, where.values())
            table = TokenTable.of_rows((t.id, t.bytes, t.kind, t.piece) for t in firsts)
            key_index = np.fromiter(map(index_of.__getitem__, keys), dtype=np.int32, count=n)

        def column(values: tuple[int, ...]) -> np.ndarray:
            return np.array(values, dtype=np.int64)

        return cls(column(byte_starts), column(byte_ends), column(starts), column(ends), key_index, table, n_bytes)

    @classmethod
    def of_laid(cls, parts: Sequence[Laid], info_for: Callable[[list[int]], TokenInfo], n_bytes: int) -> Encoding:
        """The columns of the arrays backends lay out; `info_for(ids)` gives the bytes, kind and
        piece of the distinct ids. The id alone is a token's key, but where its bytes are not its
        id's (an unknown token) (id, bytes) is. Python code runs once per distinct id, and once
        per token only in a part that carries its own bytes (`Laid.datas`)."""
        if not parts:
            return cls.of_tokens([], n_bytes)
        ids = np.concatenate([np.asarray(p.ids, dtype=np.int64) for p in parts])
        distinct, key_index = distinct_ids(ids)
        ids_present = distinct.tolist()
        info = info_for(ids_present)
        rows: list[Row] = [(i, info.data[i], info.kind[i], info.piece[i]) for i in ids_present]
        offset = 0
        own: dict[tuple[int, bytes], int] = {}  # (id, bytes) of tokens whose bytes are not their id's
        for part in parts:
            if part.datas is not None:
                data_of = info.data.__getitem__
                for k, (i, d) in enumerate(zip(part.ids, part.datas)):
                    if d != data_of(i):
                        key = (i, d)
                        if key not in own:
                            own[key] = len(rows)
                            rows.append((i, d, info.kind[i], info.piece[i]))
                        key_index[offset + k] = own[key]
            offset += len(part.ids)
        return cls(
            np.concatenate([p.byte_starts for p in parts]), np.concatenate([p.byte_ends for p in parts]),
            np.concatenate([p.starts for p in parts]), np.concatenate([p.ends for p in parts]), key_index,
            TokenTable.of_rows(rows), n_bytes,
        )

    @classmethod
    def joined(cls, parts: Sequence[Encoding], n_bytes: int) -> Encoding:
        """Consecutive parts of one text (spans on the whole text, keys into their own tables) as
        one encoding of `n_bytes` bytes, its table in the order the tokens first occur."""
        if len(parts) == 1:
            return replace(parts[0], n_bytes=n_bytes)
        rows: list[Row] = []
        index: dict[tuple[int, bytes], int] = {}
        keys = []
        for part in parts:
            local = np.zeros(len(part.table), dtype=np.int64)
            for k in np.unique(part.key_index).tolist():
                row = part.table.row(k)
                at = index.get((row[0], row[1]))
                if at is None:
                    at = index[(row[0], row[1])] = len(rows)
                    rows.append(row)
                local[k] = at
            keys.append(local[part.key_index])
        return cls(
            np.concatenate([p.byte_starts for p in parts]), np.concatenate([p.byte_ends for p in parts]),
            np.concatenate([p.starts for p in parts]), np.concatenate([p.ends for p in parts]),
            np.concatenate(keys), TokenTable.of_rows(rows), n_bytes,
        )

    # -- derived encodings --------------------------------------------------------------------
    def around(self, before: Sequence[Token], after: Sequence[Token]) -> Encoding:
        """This encoding with `before` put in front and `after` behind (the BOS/EOS a model adds,
        from `Tokenizer.added_tokens`)."""
        if not before and not after:
            return self
        around = (*before, *after)
        table, keys = self.table.joined((t.id, t.bytes, t.kind, t.piece) for t in around)

        def joined(column: np.ndarray, values: Iterable[int]) -> np.ndarray:
            given = np.array(list(values), dtype=column.dtype)
            return np.concatenate([given[:len(before)], column, given[len(before):]])

        return Encoding(
            joined(self.byte_starts, (t.byte_start for t in around)),
            joined(self.byte_ends, (t.byte_end for t in around)),
            joined(self.starts, (t.start for t in around)), joined(self.ends, (t.end for t in around)),
            joined(self.key_index.astype(np.int32), keys), table, self.n_bytes, self.seconds, dict(self.extra),
        )

    def part(self, i: int, j: int) -> Encoding:
        """Tokens `i` to `j - 1` (spans unchanged), whose `n_bytes` is where the last one ends."""
        n_bytes = int(self.byte_ends[j - 1]) if j > i else 0
        return Encoding(self.byte_starts[i:j], self.byte_ends[i:j], self.starts[i:j], self.ends[i:j],
                        self.key_index[i:j], self.table, n_bytes)

    def shifted(self, chars: int, n_bytes: int) -> Encoding:
        """The same tokens with every span moved by `chars` characters and `n_bytes` bytes."""
        return Encoding(self.byte_starts + n_bytes, self.byte_ends + n_bytes, self.starts + chars,
                        self.ends + chars, self.key_index, self.table, self.n_bytes + n_bytes)

    def compact(self) -> Encoding:
        """The same encoding in fewer bytes: offsets int32 where they fit, keys uint16 where the
        table has at most 65536 rows, and each pair of span columns whose spans meet (each token
        ends where the next starts) two views of one array of bounds.

        >>> a, b = (Token(i, c, i, i + 1, i, i + 1, TokenKind.NORMAL, c.decode()) for i, c in enumerate((b"a", b"b")))
        >>> small = Encoding.of_tokens([a, b], 2).compact()
        >>> small.byte_starts.base is small.byte_ends.base is not None, small.byte_ends.tolist(), small.ends.dtype
        (True, [1, 2], dtype('int32'))
        """
        key_index = self.key_index.astype(np.uint16) if len(self.table) <= 1 << 16 else self.key_index
        small = self.n_bytes < np.iinfo(np.int32).max
        byte_starts, byte_ends = _shared(self.byte_starts, self.byte_ends, small)
        starts, ends = _shared(self.starts, self.ends, small)
        return Encoding(byte_starts, byte_ends, starts, ends, key_index, self.table, self.n_bytes, self.seconds,
                        self.extra)

    @property
    def ids(self) -> np.ndarray:
        """Every token's id, read from the table through the key column (int32 where ids fit)."""
        ids = self.table.ids
        if len(ids) and int(ids.max()) < np.iinfo(np.int32).max:
            ids = ids.astype(np.int32)
        taken: np.ndarray = np.take(ids, self.key_index)
        return taken

    # -- reading ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.key_index)

    @overload
    def __getitem__(self, index: int) -> Token: ...
    @overload
    def __getitem__(self, index: slice) -> list[Token]: ...

    def __getitem__(self, index: int | slice) -> Token | list[Token]:
        n = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step == 1:
                return self.tokens(start, stop)
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("token index out of range")
        k = int(self.key_index[index])
        table = self.table
        return Token(int(table.ids[k]), table.datas[k], int(self.byte_starts[index]), int(self.byte_ends[index]),
                     int(self.starts[index]), int(self.ends[index]), KINDS[table.kinds[k]], table.pieces[k])

    def __iter__(self) -> Iterator[Token]:
        for start in range(0, len(self), 1 << 12):
            yield from self.tokens(start, min(start + (1 << 12), len(self)))

    def tokens(self, start: int, stop: int) -> list[Token]:
        """Tokens `start` to `stop - 1`, each column read once as a list."""
        if stop <= start:
            return []
        keys = self.key_index[start:stop].tolist()
        table = self.table
        # a few tokens (a fragment run, a tooltip): the rows they use, not every row of the table
        rows: Sequence[Row] | dict[int, Row] = (
            {k: table.row(k) for k in dict.fromkeys(keys)} if 4 * len(keys) < len(table) else table.rows()
        )
        return [
            Token(rows[k][0], rows[k][1], bs, be, s, e, rows[k][2], rows[k][3])
            for k, bs, be, s, e in zip(
                keys, self.byte_starts[start:stop].tolist(),
                self.byte_ends[start:stop].tolist(), self.starts[start:stop].tolist(), self.ends[start:stop].tolist(),
            )
        ]

    def __eq__(self, other: object) -> bool:
        """Equal to another encoding or a list of the same tokens."""
        if isinstance(other, Encoding):
            other = list(other)
        return isinstance(other, list) and len(other) == len(self) and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    # -- lookups ------------------------------------------------------------------------------
    def tokens_in_chars(self, a: int, b: int) -> range:
        """The tokens whose character spans overlap `[a, b)` (a caret, `a == b`, means
        `[a, a + 1)`)."""
        if b <= a:
            b = a + 1
        first = int(np.searchsorted(self.ends, a, side="right"))
        last = int(np.searchsorted(self.starts, b, side="left"))
        return range(first, max(first, last))

    def token_at_char(self, pos: int) -> int | None:
        """The first token whose span holds character `pos`; None where no token does."""
        found = self.tokens_in_chars(pos, pos)
        return found.start if found else None

    def token_text(self, i: int, *, visible_whitespace: bool = True) -> str:
        """Token `i`'s bytes as the views show them (`display_text`)."""
        return display_text(self.table.datas[int(self.key_index[i])], visible_whitespace=visible_whitespace)


def _shared(starts: np.ndarray, ends: np.ndarray, small: bool) -> tuple[np.ndarray, np.ndarray]:
    """`starts` and `ends` (int32 when `small`), as two views of one array of bounds where every
    span ends where the next one starts; as they are (a new array each) where not."""
    dtype = np.int32 if small else starts.dtype
    if starts.base is not None and starts.base is ends.base and starts.dtype == dtype:
        return starts, ends  # shared already
    if len(starts) and np.array_equal(ends[:-1], starts[1:]):
        bounds = np.empty(len(starts) + 1, dtype=dtype)
        bounds[:-1] = starts
        bounds[-1] = ends[-1]
        return bounds[:-1], bounds[1:]
    return starts.astype(dtype), ends.astype(dtype)


def distinct_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(ids, return_inverse=True)` for non-negative token ids, the inverse int32. In
    linear time (a table as long as the largest id marks the ids present) unless the largest id
    is far beyond the number of ids: then by a sort, so memory never follows the largest id.

    >>> distinct, inverse = distinct_ids(np.array([7, 3, 7, 0]))
    >>> distinct.tolist(), inverse.tolist()
    ([0, 3, 7], [2, 1, 2, 0])
    >>> distinct_ids(np.array([2**31 - 1, 5]))[0].tolist()
    [5, 2147483647]
    """
    if not len(ids):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    largest = int(ids.max())
    if largest > 8 * len(ids) + (1 << 20):
        distinct, inverse = np.unique(ids, return_inverse=True)
        return distinct.astype(np.int64), inverse.reshape(-1).astype(np.int32)
    present = np.zeros(largest + 1, dtype=bool)
    present[ids] = True
    rank = np.cumsum(present, dtype=np.int32)
    rank -= 1
    return np.flatnonzero(present), rank[ids]


def span_columns(tokens: Sequence[Token]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`(byte_starts, byte_ends, starts)` of `tokens` as arrays (an `Encoding`'s own columns)."""
    if isinstance(tokens, Encoding):
        return tokens.byte_starts, tokens.byte_ends, tokens.starts
    n = len(tokens)
    return (
        np.fromiter((t.byte_start for t in tokens), dtype=np.int64, count=n),
        np.fromiter((t.byte_end for t in tokens), dtype=np.int64, count=n),
        np.fromiter((t.start for t in tokens), dtype=np.int64, count=n),
    )


def token_ids(tokens: Sequence[Token]) -> np.ndarray:
    """The id of every token of `tokens` as an array (an `Encoding`'s own column)."""
    if isinstance(tokens, Encoding):
        return tokens.ids
    return np.fromiter((t.id for t in tokens), dtype=np.int64, count=len(tokens))
