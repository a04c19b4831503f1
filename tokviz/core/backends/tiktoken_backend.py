"""tiktoken byte-level BPE: named encodings and `.tiktoken` rank files.

Encoding goes through tiktoken's own `Encoding.encode`, so ids and special-token errors are exactly
tiktoken's. This module only adds what tiktoken does not keep: spans, kinds and readable pieces.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import tiktoken

from tokviz.core.backends.panics import is_panic, library_calls
from tokviz.core.encoding import Encoding, TokenTable, distinct_ids
from tokviz.core.layout import Laid, tokens_from_bytes
from tokviz.core.tokenizer import (
    AllowedSpecial,
    DisallowedSpecial,
    Tokenizer,
    TokenizerError,
    VocabEntry,
)
from tokviz.core.tokens import OffsetMap, Token, TokenKind, kind_for_bytes, sanitize


def byte_level_alphabet() -> dict[int, str]:
    """GPT-2's printable stand-ins for bytes (`Ġ` for space), as vocab files and HF spell pieces."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + n)
            n += 1
    return mapping


BYTE_LEVEL = byte_level_alphabet()
BYTE_LEVEL_INVERSE = {c: b for b, c in BYTE_LEVEL.items()}


def byte_level_piece(data: bytes) -> str:
    return "".join(BYTE_LEVEL[b] for b in data)


def read_rank_file(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a `.tiktoken` file (`base64 rank` per line), naming the line when one is bad; a
    leading UTF-8 byte order mark is skipped, as tiktoken's own loader does.

    Unlike `tiktoken.load.load_tiktoken_bpe` this never serves a cached copy of an edited file.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TokenizerError(f"cannot read {path}: {e.strerror or e}") from e
    ranks: dict[bytes, int] = {}
    lines: dict[bytes, int] = {}
    for lineno, line in enumerate(data.removeprefix(codecs.BOM_UTF8).splitlines(), 1):
        if not line.strip():
            continue
        try:
            token_text, rank_text = line.split()
            token = base64.b64decode(token_text, validate=True)
            rank = int(rank_text)
        except (ValueError, binascii.Error) as e:
            shown = line[:60].decode("utf-8", errors="replace")
            raise TokenizerError(
                f"{path}: line {lineno} is not '<base64 token> <rank>': {shown!r}"
            ) from e
        if token in lines:
            raise TokenizerError(f"{path}: line {lineno} repeats the token {token!r} of line {lines[token]}")
        lines[token] = lineno
        ranks[token] = rank
    if not ranks:
        raise TokenizerError(f"{path}: no ranks found (empty or not a .tiktoken file)")
    return ranks


#: tiktoken keeps ranks and ids as Rust u32 and uses the largest as "no rank"
MAX_ID = 2**32 - 2


def check_ranks(ranks: Mapping[bytes, int], special_tokens: Mapping[str, int]) -> None:
    """Refuse ranks tiktoken would panic on at load: a rank given twice, an id out of its range.

    >>> check_ranks({b"a": 0, b"b": 1, b"ab": 1}, {})
    Traceback (most recent call last):
    ...
    tokviz.core.tokenizer.TokenizerError: rank 1 is given to two tokens (b'b' and b'ab')
    """
    for token, rank in ranks.items():
        if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank <= MAX_ID:
            raise TokenizerError(f"rank {rank!r} of {token!r} is not a whole number from 0 to {MAX_ID:,}")
    for special, rank in special_tokens.items():
        if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank <= MAX_ID:
            raise TokenizerError(f"special token {special!r} has id {rank!r}, not a whole number from 0 to {MAX_ID:,}")
    if len(set(ranks.values())) != len(ranks):
        owner: dict[int, bytes] = {}
        for token, rank in ranks.items():
            if rank in owner:
                raise TokenizerError(f"rank {rank} is given to two tokens ({owner[rank]!r} and {token!r})")
            owner[rank] = token


def check_every_byte(ranks: Mapping[bytes, int]) -> None:
    """Refuse a byte-level BPE file that lacks single-byte tokens: tiktoken loads it and panics on
    the first text with such a byte. (Tiny in-memory vocabularies whose pattern only ever yields
    their own bytes may lack them; a panic there is still caught, by `library_calls`.)

    >>> check_every_byte({b"a": 0, b"b": 1})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tokviz.core.tokenizer.TokenizerError: 254 of the 256 single-byte tokens are missing (b'\\x00', ...
    """
    missing = [bytes([b]) for b in range(256) if bytes([b]) not in ranks]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise TokenizerError(
            f"{len(missing)} of the 256 single-byte tokens are missing ({shown}): a byte-level BPE needs "
            f"every byte as a token, or text with those bytes cannot be encoded"
        )


def looks_like_rank_file(path: str | os.PathLike[str]) -> bool:
    """True when the file starts like a tiktoken rank file (Llama 3 ships one as `tokenizer.model`)."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return False
    first = head.removeprefix(codecs.BOM_UTF8).split(b"\n", 1)[0].split()
    if len(first) != 2 or not first[1].isdigit():
        return False
    try:
        base64.b64decode(first[0], validate=True)
    except binascii.Error:
        return False
    return True


# a batch is split over threads only when each gets at least this much to do
_TEXTS_PER_THREAD = 16
_CHARS_PER_THREAD = 1 << 14


class LeanEncoding(tiktoken.Encoding):
    """tiktoken's `Encoding` without the Python dict of ranks it was built from.

    tiktoken keeps `mergeable_ranks` beside its Rust core, which has its own copy, and reads it
    only to pickle itself (tiktoken 0.14: `Encoding.__getstate__`); encodes and decodes use the
    core. That dict (bytes keys, int values) is the largest part of a loaded vocabulary, held
    twice for nothing in the tokenizer process, once per pane's vocabulary: it is freed. `ranks()`
    rebuilds it from the core, in rank order, for whoever asks (the tools).

    >>> enc = LeanEncoding("tiny", pat_str="[ab]+", mergeable_ranks={b"a": 0, b"b": 1, b"ab": 2}, special_tokens={})
    >>> enc.encode("abab"), enc.ranks()
    ([2, 2], {b'a': 0, b'b': 1, b'ab': 2})
    """

    def __init__(self, name: str, *, pat_str: str, mergeable_ranks: dict[bytes, int],
                 special_tokens: dict[str, int], explicit_n_vocab: int | None = None) -> None:
        super().__init__(name, pat_str=pat_str, mergeable_ranks=mergeable_ranks,
                         special_tokens=special_tokens, explicit_n_vocab=explicit_n_vocab)
        del self._mergeable_ranks  # a tiktoken method that still read it would fail, not misread

    def ranks(self) -> dict[bytes, int]:
        """The ranks the encoding was built from, read back from its Rust core (every ordinary
        token's bytes and id; special tokens are not ranks), ordered by rank."""
        tokens = self.token_byte_values()
        ranks = dict(zip(tokens, map(self.encode_single_token, tokens)))
        return {data: ranks[data] for data in sorted(ranks, key=ranks.__getitem__)}

    def __getstate__(self) -> object:
        """tiktoken's own state, with the ranks it pickles read back for the occasion."""
        self._mergeable_ranks = self.ranks()
        try:
            return super().__getstate__()
        finally:
            del self._mergeable_ranks


class TiktokenTokenizer(Tokenizer):
    """A byte-level BPE from its ranks, split pattern and special tokens, encoded by tiktoken.

    It keeps the pattern it was built from (tiktoken keeps it only in a private field) and reads
    the ranks back from tiktoken's core when asked (`LeanEncoding`), so the capabilities
    `mergeable_ranks` and `split_pattern` are exactly what it was built from.

    >>> tok = TiktokenTokenizer("tiny", {b"a": 0, b"b": 1, b" ": 2, b"ab": 3}, pattern="[ab]+| ")
    >>> tok.encode_ids("abab ba"), tok.split_pattern, tok.mergeable_ranks[b"ab"]
    ([3, 3, 2, 1, 0], '[ab]+| ', 3)
    """

    family = "tiktoken"
    byte_level = True

    def __init__(
        self,
        name: str,
        ranks: dict[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        family: str | None = None,
    ) -> None:
        self.name = name
        if family:
            self.family = family
        self.pattern = pattern
        self._ranks: dict[bytes, int] | None = None  # read back from the encoding when asked
        self.special_tokens = dict(special_tokens or {})
        try:
            check_ranks(ranks, self.special_tokens)
        except TokenizerError as e:
            raise TokenizerError(f"cannot build tokenizer {name!r}: {e}") from None
        try:
            self.encoding = LeanEncoding(
                name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=self.special_tokens
            )
        except BaseException as e:  # ValueError for a bad pattern; a Rust panic for what the checks missed
            if not (isinstance(e, Exception) or is_panic(e)):
                raise
            raise TokenizerError(f"cannot build tokenizer {name!r}: {str(e).strip().splitlines()[0]}") from None
        self._special_ids = {i: s for s, i in self.special_tokens.items()}
        self._pieces: dict[int, str] = {}

    @classmethod
    def from_ranks(
        cls,
        name: str,
        ranks: dict[bytes, int],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        family: str | None = None,
    ) -> TiktokenTokenizer:
        return cls(name, ranks, pattern=pattern, special_tokens=special_tokens, family=family)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        family: str | None = None,
        extra_ranks: dict[bytes, int] | None = None,
    ) -> TiktokenTokenizer:
        ranks = read_rank_file(path)
        try:
            check_every_byte(ranks)
        except TokenizerError as e:
            raise TokenizerError(f"{path}: {e}") from None
        if extra_ranks:
            ranks = {**ranks, **extra_ranks}
        try:
            return cls.from_ranks(
                name or Path(path).stem, ranks, pattern=pattern, special_tokens=special_tokens, family=family
            )
        except TokenizerError as e:
            raise TokenizerError(f"{path}: {e}") from None

    @property
    def vocab_size(self) -> int:
        return self.encoding.n_vocab

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """The ranks, rebuilt from the encoding on first use (a tool asks; the tokenizer process
        never does) and kept: its time and the dict's memory are paid only where it is needed."""
        ranks = self._ranks
        if ranks is None:
            ranks = self._ranks = self.encoding.ranks()
        return ranks

    @property
    def split_pattern(self) -> str:
        return self.pattern

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = (),
    ) -> list[Token]:
        text = sanitize(text)
        # tiktoken's own policy checks and error messages; ValueError passes through to the caller
        with library_calls(self.name):
            ids = self.encoding.encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
        return self._lay_out(text, ids)

    def encode_trusted(self, text: str, special_spans: Iterable[tuple[int, int]]) -> list[Token]:
        """tiktoken's `encode` splits at each allowed special and encodes the text between with
        `encode_ordinary`; doing the same split at the given positions gives its exact ids."""
        text = sanitize(text)
        ids: list[int] = []
        for start, end, special_id in self.split_special_at(text, special_spans):
            if special_id is None:
                with library_calls(self.name):
                    ids.extend(self.encoding.encode_ordinary(text[start:end]))
            else:
                ids.append(special_id)
        return self._lay_out(text, ids)

    def encode_columns(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = (),
    ) -> Encoding:
        """Columns straight from tiktoken's ids: no Token objects, every pass in numpy (so most
        of the time is tiktoken's own encode). The ids come as an array (`encode_to_numpy`, the
        same ids as `encode`): no list of ints built and converted."""
        text = sanitize(text)
        with library_calls(self.name):
            id_array = self.encoding.encode_to_numpy(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            ).astype(np.int64)
        omap = OffsetMap(text)
        distinct, key_index = distinct_ids(id_array)
        present = distinct.tolist()
        info = self._info_for(present)
        lengths = np.fromiter((len(info.data[i]) for i in present), dtype=np.int64, count=len(present))
        byte_ends = np.cumsum(lengths[key_index])
        byte_starts = byte_ends - lengths[key_index]
        starts, ends = omap.char_span_arrays(byte_starts, byte_ends)
        table = TokenTable.of_rows((i, info.data[i], info.kind[i], info.piece[i]) for i in present)
        return Encoding(byte_starts, byte_ends, starts, ends, key_index, table, len(omap.data))

    def _lay_out_ordinary(self, text: str, start: int, end: int) -> Laid | None:
        """tiktoken's `encode_ordinary` of the segment over its bytes (what the interface's own
        paths use; `encode` and `encode_columns` go to tiktoken in one call)."""
        with library_calls(self.name):
            ids = self.encoding.encode_ordinary(text[start:end])
        if not ids:
            return None
        omap = self._offset_map(text)
        info = self._info_for(ids)
        lengths = np.fromiter(map(len, map(info.data.__getitem__, ids)), dtype=np.int64, count=len(ids))
        byte_ends = np.cumsum(lengths) + omap.byte_offset(start)
        byte_starts = byte_ends - lengths
        starts, ends = omap.char_span_arrays(byte_starts, byte_ends)
        return Laid(ids, byte_starts, byte_ends, starts, ends)

    def _lay_out(self, text: str, ids: Sequence[int]) -> list[Token]:
        return tokens_from_bytes(OffsetMap(text), ids, self._info_for(ids))

    def encode_ordinary_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids `encode` gives each text, by tiktoken's `encode_ordinary` on a few threads.

        tiktoken's own `encode_ordinary_batch` hands each text to a thread pool as a task of its
        own, which costs more than encoding a short text; here each thread takes a run of texts
        (tiktoken releases the GIL while it encodes), and a small batch stays on this thread.
        """
        encode = self.encoding.encode_ordinary
        clean = [sanitize(t) for t in texts]
        threads = min(os.cpu_count() or 1, 8, len(clean) // _TEXTS_PER_THREAD)
        with library_calls(self.name):
            if threads < 2 or sum(map(len, clean)) < _CHARS_PER_THREAD * 2:
                return [encode(t) for t in clean]
            from concurrent.futures import ThreadPoolExecutor

            step = -(-len(clean) // threads)
            runs = [clean[i : i + step] for i in range(0, len(clean), step)]
            with ThreadPoolExecutor(threads) as pool:
                return [ids for run in pool.map(lambda run: [encode(t) for t in run], runs) for ids in run]

    def decode(self, ids: Sequence[int]) -> str:
        return self.encoding.decode(list(ids), errors="replace")

    def token_bytes(self, token_id: int) -> bytes:
        return self.encoding.decode_single_token_bytes(token_id)

    def vocab(self) -> Iterator[VocabEntry]:
        """Every id there is, in order: the ranks and the special tokens. A rank file may leave
        holes in its ids, or put one far past the others (2**31 - 1): the walk follows the
        tokens, not the largest id."""
        for i in sorted({*self.mergeable_ranks.values(), *self._special_ids}):
            yield VocabEntry(i, self.piece(i), self.token_bytes(i), self.kind(i))

    def piece(self, token_id: int) -> str:
        piece = self._pieces.get(token_id)
        if piece is None:
            if token_id in self._special_ids:
                piece = self._special_ids[token_id]
            else:
                piece = byte_level_piece(self.encoding.decode_single_token_bytes(token_id))
            self._pieces[token_id] = piece
        return piece

    def kind(self, token_id: int) -> TokenKind:
        if token_id in self._special_ids:
            return TokenKind.SPECIAL
        return kind_for_bytes(self.token_bytes(token_id))
