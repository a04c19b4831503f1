"""SentencePiece `.model` files (Mistral, Llama 2, T5, trained models) through `sentencepiece`.

Ids and pieces are exactly sentencepiece's own: encoding goes through
`SentencePieceProcessor.encode`, with its offset mapping for the spans. This module adds what the
library does not say directly:

* `Token.bytes` are what the piece stands for: `▁` is a space, a byte-fallback piece `<0xNN>` is the
  single byte NN (kind BYTE_FALLBACK), the unknown piece is the original text it replaced (kind
  UNKNOWN), control pieces (`<s>`) and user-defined symbols are SPECIAL.
* Spans refer to the *original* text, even where the model normalizes it (NFKC `ｈｉ` -> `hi`).
  sentencepiece's offsets leave holes where the normalizer drops characters (extra spaces, a trailing
  newline); tokviz gives each dropped run to the **following** token, and a trailing run to the
  **last** token, so the spans cover the text in order and a view colors every character.
* Tokens that stand for no original text (the dummy-prefix `▁` the model inserts before the first
  word) get an empty span at their position, unless a dropped run before them is theirs.
* Several tokens that sentencepiece maps to the same original characters (the byte-fallback bytes of
  one character, `f` + `in` from the ligature `ﬁn`) all cover those characters. When their bytes are
  exactly the original bytes, each token's byte span says which of them it holds; otherwise (the
  model saw normalized text) each covers the whole run.
* Special-token policy (base class): text is split around special-token literals first and every
  plain segment is encoded on its own, so each segment gets the model's dummy prefix, as
  transformers' slow Llama tokenizer does. sentencepiece itself always extracts user-defined
  symbols, so for those the "none" policy cannot make them plain text: they show as SPECIAL.
  A segment the normalizer drops whole (the spaces in `<s>  </s>`) goes to the following token,
  or to the last one at the end, as a dropped run inside a segment does.
"""

from __future__ import annotations

import functools
import itertools
import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sentencepiece as spm

from tokviz.core.encoding import distinct_ids
from tokviz.core.layout import Laid, TokenInfo, fill_gaps
from tokviz.core.tokenizer import (
    PieceType,
    SentencePieceModel,
    SpecialsAdded,
    Tokenizer,
    TokenizerError,
)
from tokviz.core.tokens import TokenKind, kind_for_bytes

SPACE_MARK = "\u2581"  # `▁`

# sentencepiece_model.proto: ModelProto.SentencePiece.Type
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
_PIECE_TYPES = {int(t): t for t in PieceType}
# TrainerSpec.ModelType
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


# -- a minimal reader for the parts of ModelProto we need (no protobuf dependency) ------------------


@dataclass
class ModelInfo:
    """What tokviz reads from a serialized ModelProto: piece types, model type, the normalizer."""

    piece_types: list[int] = field(default_factory=list)
    model_type: str = "unigram"  # TrainerSpec.model_type: unigram (the default), bpe, word, char
    normalizer_name: str = ""
    remove_extra_whitespaces: bool = True


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def proto_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield `(field number, wire type, value)`; value is an int or a bytes slice."""
    pos, n = 0, len(data)
    while pos < n:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value


def read_model_info(proto: bytes) -> ModelInfo:
    """Piece types (in id order) and normalizer settings from a serialized ModelProto."""
    info = ModelInfo()
    for number, wire, value in proto_fields(proto):
        if number == 1 and wire == 2 and isinstance(value, bytes):  # repeated SentencePiece pieces
            kind = _NORMAL
            for n2, w2, v2 in proto_fields(value):
                if n2 == 3 and w2 == 0 and isinstance(v2, int):
                    kind = v2
            info.piece_types.append(kind)
        elif number == 2 and wire == 2 and isinstance(value, bytes):  # TrainerSpec
            for n2, w2, v2 in proto_fields(value):
                if n2 == 3 and w2 == 0 and isinstance(v2, int):
                    info.model_type = MODEL_TYPES.get(v2, "")
        elif number == 3 and wire == 2 and isinstance(value, bytes):  # NormalizerSpec
            for n2, w2, v2 in proto_fields(value):
                if n2 == 1 and w2 == 2 and isinstance(v2, bytes):
                    info.normalizer_name = v2.decode("utf-8", "replace")
                elif n2 == 4 and w2 == 0:
                    info.remove_extra_whitespaces = bool(v2)
    return info


def _model_type(processor: spm.SentencePieceProcessor) -> str:
    """The model type from the serialized proto, '' when it cannot be read."""
    try:
        return read_model_info(processor.serialized_model_proto()).model_type
    except (ValueError, IndexError, struct.error):
        return ""


def _short(error: Exception) -> str:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text.removeprefix("INTERNAL: ")


#: token ids, byte starts, byte ends (in the segment) and `(index, bytes)` of unknown tokens
Layout = tuple[list[int], np.ndarray, np.ndarray, list[tuple[int, bytes]]]


# -- the backend ----------------------------------------------------------------------------------


class SentencePieceTokenizer(Tokenizer):
    family = "sentencepiece"

    def __init__(self, processor: spm.SentencePieceProcessor, *, name: str = "sentencepiece") -> None:
        self.sp = processor
        self.name = name
        self._size = processor.get_piece_size()
        self._unk_id = processor.unk_id()
        try:
            self.model_info: ModelInfo | None = read_model_info(processor.serialized_model_proto())
            if len(self.model_info.piece_types) != self._size:
                self.model_info = None
        except (ValueError, IndexError, struct.error):
            self.model_info = None
        self.special_tokens = {
            processor.id_to_piece(i): i
            for i in range(self._size)
            if self._is_special(i) and i != self._unk_id
        }

    # -- loading ----------------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, name: str | None = None) -> SentencePieceTokenizer:
        """Load a `.model` file; a missing, empty, truncated or foreign file is a TokenizerError
        naming it."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise TokenizerError(f"cannot read {path}: {e.strerror or e}") from e
        return cls.from_proto(data, name=name or path.stem, source=str(path))

    @classmethod
    def from_proto(
        cls, proto: bytes, *, name: str = "sentencepiece", source: str | None = None
    ) -> SentencePieceTokenizer:
        """Load a serialized ModelProto (what `spm.SentencePieceTrainer.train(model_writer=...)`
        writes, or a `.model` file's bytes)."""
        where = source or f"SentencePiece model {name!r}"
        if not proto:
            raise TokenizerError(f"{where} is empty: not a SentencePiece model; download it again")
        processor = spm.SentencePieceProcessor()
        try:
            processor.LoadFromSerializedProto(proto)
        except (RuntimeError, OSError, ValueError) as e:
            raise TokenizerError(
                f"{where}: not a valid SentencePiece model ({_short(e)}); the file is truncated, "
                f"corrupt or of another format: download it again or choose the .model file"
            ) from e
        if processor.get_piece_size() == 0:
            raise TokenizerError(f"{where}: the SentencePiece model has no pieces; download it again")
        return cls(processor, name=name)

    @classmethod
    def from_processor(
        cls, processor: spm.SentencePieceProcessor, *, name: str = "sentencepiece"
    ) -> SentencePieceTokenizer:
        return cls(processor, name=name)

    # -- vocabulary -------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return self._size

    def _check(self, token_id: int) -> None:
        if not 0 <= token_id < self._size:
            raise KeyError(f"id {token_id} is outside {self.name}'s vocabulary (0..{self._size - 1})")

    def piece_type(self, token_id: int) -> int:
        """The piece's ModelProto type (normal, unknown, control, user-defined, unused, byte)."""
        if self.model_info is not None:
            return self.model_info.piece_types[token_id]
        sp = self.sp
        if sp.is_control(token_id):
            return _CONTROL
        if sp.is_unknown(token_id):
            return _UNKNOWN
        if sp.is_byte(token_id):
            return _BYTE
        if sp.is_unused(token_id):
            return _UNUSED
        return _NORMAL

    def _is_special(self, token_id: int) -> bool:
        return self.piece_type(token_id) in (_CONTROL, _USER_DEFINED)

    def piece(self, token_id: int) -> str:
        self._check(token_id)
        return self.sp.id_to_piece(token_id)

    def token_bytes(self, token_id: int) -> bytes:
        """`▁` -> space, `<0xNN>` -> byte NN; control, user-defined and unknown pieces -> their
        spelling (in an encoded text an unknown token's bytes are the text it replaced)."""
        piece = self.piece(token_id)
        kind = self.piece_type(token_id)
        if kind == _BYTE:
            return bytes([int(piece[3:5], 16)])
        if kind in (_CONTROL, _USER_DEFINED, _UNKNOWN):
            return piece.encode("utf-8")
        return piece.replace(SPACE_MARK, " ").encode("utf-8")

    def kind(self, token_id: int) -> TokenKind:
        self._check(token_id)
        kind = self.piece_type(token_id)
        if kind in (_CONTROL, _USER_DEFINED):
            return TokenKind.SPECIAL
        if kind == _UNKNOWN:
            return TokenKind.UNKNOWN
        if kind == _BYTE:
            return TokenKind.BYTE_FALLBACK
        return kind_for_bytes(self.token_bytes(token_id))

    def decode(self, ids: Sequence[int]) -> str:
        """sentencepiece's own decode (control pieces vanish, unknown shows as ` ⁇ `)."""
        for token_id in ids:
            self._check(token_id)
        return str(self.sp.decode(list(ids)))

    # -- capabilities -----------------------------------------------------------------------------

    @functools.cached_property
    def model_type(self) -> str:
        """The model type from the model's header (the whole `sentencepiece` model, every piece
        and score as Python objects, is megabytes for a large vocabulary: not built for this)."""
        info = self.model_info
        return info.model_type if info is not None else _model_type(self.sp)

    @functools.cached_property
    def sentencepiece(self) -> SentencePieceModel:
        info = self.model_info
        model_type = self.model_type
        sp, ids = self.sp, list(range(self._size))
        types = info.piece_types if info is not None else list(map(self.piece_type, ids))
        return SentencePieceModel(
            pieces=tuple(sp.id_to_piece(ids)),
            types=tuple(_PIECE_TYPES.get(t, PieceType.NORMAL) for t in types),
            scores=tuple(sp.get_score(ids)),
            model_type=model_type,
            normalizer_name=info.normalizer_name if info is not None else "",
            remove_extra_whitespaces=info.remove_extra_whitespaces if info is not None else False,
            unk_id=self._unk_id,
        )

    def normalize(self, text: str) -> str:
        return str(self.sp.normalize(text))

    @property
    def scores_whole_text(self) -> bool:
        return self.model_type == "unigram"

    @property
    def encode_window(self) -> int | None:
        """sentencepiece's BPE encode takes more than linear time in the text's length, so a long
        text is encoded in windows of 128k characters, which is faster than one call
        (`bench/bench_encode.py` and `bench/bench_gui.py` time both). A unigram model is encoded in
        one call (`scores_whole_text`)."""
        return None if self.scores_whole_text else 1 << 17

    def specials_added(self, text: str) -> SpecialsAdded:
        """The model's BOS and EOS, which sentencepiece adds only when asked (`add_bos`, `add_eos`)."""
        bos, eos = self.sp.bos_id(), self.sp.eos_id()
        return SpecialsAdded(before=(bos,) if bos >= 0 else (), after=(eos,) if eos >= 0 else ())

    def added_around(self, text: str) -> SpecialsAdded | None:
        """The BOS alone: what Llama's and Mistral's tokenizers add by default (`add_bos_token`
        true, `add_eos_token` false), i.e. sentencepiece's `encode(..., add_bos=True)`; a bare
        `.model` file does not say more. None for a model without a BOS piece."""
        bos = self.sp.bos_id()
        return SpecialsAdded(before=(bos,)) if bos >= 0 else None

    # -- encoding ---------------------------------------------------------------------------------

    @property
    def _identity_normalizer(self) -> bool:
        info = self.model_info
        return info is not None and info.normalizer_name == "identity" and not info.remove_extra_whitespaces

    def _lay_out_ordinary(self, text: str, start: int, end: int) -> Laid | None:
        if start >= end:
            return None
        omap = self._offset_map(text)
        base = omap.byte_offset(start)
        data = omap.data[base : omap.byte_offset(end)]
        segment = text[start:end]
        laid = self._fast_layout(segment, data) if self._identity_normalizer else None
        if laid is None:
            laid = self._mapped_layout(segment, data)
        ids, starts, ends, unknown = laid
        if not ids:
            return None
        starts += base
        ends += base
        cstarts, cends = omap.char_span_arrays(starts, ends)
        datas = None
        if unknown:  # the unknown piece stands for the original text it replaced
            info = self._info_for(ids)
            datas = list(map(info.data.__getitem__, ids))
            for k, replaced in unknown:
                datas[k] = replaced
        return Laid(ids, starts, ends, cstarts, cends, datas)

    def _fast_layout(self, segment: str, data: bytes) -> Layout | None:
        """For a model that does not normalize: the pieces' bytes are the text's bytes (after the
        dummy-prefix space), so spans are running byte offsets. None when that does not hold."""
        ids = self.sp.encode(segment)
        if not ids:
            return None
        id_array = np.array(ids, dtype=np.int64)
        if (id_array == self._unk_id).any():
            return None
        # every pass over the tokens in numpy, Python once per distinct id (not joining every
        # piece's bytes to compare them with the text)
        distinct, inverse = distinct_ids(id_array)
        present = distinct.tolist()
        info = self._info_for(present)
        pieces = [info.data[i] for i in present]
        piece_lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        lengths = piece_lengths[inverse]
        ends = np.cumsum(lengths)
        prefix = int(ends[-1]) - len(data)
        if prefix not in (0, 1) or not _joined_equals(pieces, piece_lengths, inverse, lengths, ends, data, prefix):
            return None
        ends -= prefix
        starts = np.maximum(ends - lengths, 0)
        return ids, starts, ends, []

    def _mapped_layout(self, segment: str, data: bytes) -> Layout:
        """Spans from sentencepiece's offset mapping (byte offsets into the original segment)."""
        result = self.sp.encode(segment, return_type="offset_mapping", return_bytes=True)
        ids: list[int] = result["ids"]
        if not ids:
            return ids, np.zeros(0, np.int64), np.zeros(0, np.int64), []
        flat = itertools.chain.from_iterable(result["offsets"])
        offsets = np.fromiter(flat, dtype=np.int64, count=2 * len(ids)).reshape(len(ids), 2)
        starts = np.clip(offsets[:, 0], 0, len(data))
        ends = np.clip(offsets[:, 1], 0, len(data))
        info = self._info_for(ids)
        zero = np.flatnonzero(starts == ends)
        if len(zero):
            _share_runs(ids, info, data, starts, ends, zero.tolist())
        id_array = np.fromiter(ids, dtype=np.int64, count=len(ids))
        where = np.flatnonzero(id_array == self._unk_id).tolist()
        own = [(int(starts[k]), int(ends[k])) for k in where]  # before dropped runs are added
        fill_gaps(starts, ends, len(data))
        unknown = [
            (k, data[a:b] if b > a else data[starts[k] : ends[k]]) for k, (a, b) in zip(where, own)
        ]
        return ids, starts, ends, unknown


def _joined_equals(pieces: list[bytes], piece_lengths: np.ndarray, inverse: np.ndarray, lengths: np.ndarray,
                   ends: np.ndarray, data: bytes, prefix: int) -> bool:
    """True when the tokens' bytes put together are `data`, after a dummy-prefix space when
    `prefix` is 1: `b"".join(pieces[k] for k in inverse) == b" " * prefix + data`, in numpy
    (each byte of the joined text is gathered from the distinct pieces' bytes)."""
    blob = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    piece_starts = np.cumsum(piece_lengths) - piece_lengths
    # byte j of the joined text, of token t: blob[piece_starts[inverse[t]] + j - (ends[t] - lengths[t])]
    shift = np.repeat(piece_starts[inverse] - (ends - lengths), lengths)
    shift += np.arange(len(shift), dtype=np.int64)
    joined = blob[shift]
    if prefix and joined[0] != 0x20:
        return False
    return bool(np.array_equal(joined[prefix:], np.frombuffer(data, dtype=np.uint8)))


def _share_runs(
    ids: list[int],
    info: TokenInfo,
    data: bytes,
    starts: np.ndarray,
    ends: np.ndarray,
    zero: list[int],
) -> None:
    """Give empty-span tokens the characters of the token they were cut from.

    sentencepiece reports a run of tokens from the same original characters as empty spans followed
    by one token that holds the whole run (`<0xF0>` `<0x9F>` `<0x91>` `<0xA9>` -> (9,9) (9,9) (9,9)
    (9,13)). Leading whitespace-only pieces of a run (the dummy prefix) keep their empty span.
    """
    n = len(ids)
    k = 0
    while k < len(zero):
        first = zero[k]
        last = first  # extend over consecutive empty spans at the same position
        while k + 1 < len(zero) and zero[k + 1] == last + 1 and starts[zero[k + 1]] == starts[first]:
            k += 1
            last = zero[k]
        k += 1
        holder = last + 1
        if holder >= n or starts[holder] != starts[first]:
            continue
        while first < holder and not info.data[ids[first]].strip(b" "):
            first += 1  # a `▁` that stands for no original character
        if first == holder:
            continue
        a, b = int(starts[holder]), int(ends[holder])
        run = range(first, holder + 1)
        pieces = [info.data[ids[j]] for j in run]
        if b"".join(pieces) == data[a:b]:
            pos = a
            for j, piece in zip(run, pieces):
                starts[j], ends[j] = pos, pos + len(piece)
                pos += len(piece)
        else:
            starts[first:holder] = a
            ends[first:holder] = b
