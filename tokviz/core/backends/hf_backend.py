"""Hugging Face `tokenizer.json` files (DeepSeek-V3's byte-level BPE, WordPiece, Unigram) through
the `tokenizers` library.

Ids are exactly the library's: every plain segment goes through `Tokenizer.encode(...,
add_special_tokens=False)` with truncation and padding switched off, and with
`encode_special_tokens = True`, so special-token text in a plain segment is cut as ordinary text
(the base class's policy decides which special tokens are parsed). Added tokens that are *not*
marked special (DeepSeek's `<｜User｜>`, `<think>`) are still matched by the library itself, as it
always does; tokviz shows them as SPECIAL, and they are not in `special_tokens`. A special token the
policy parses keeps its `lstrip` / `rstrip` / `single_word` as the library applies them (its span
takes the whitespace it strips; its bytes stay its content).

`Token.bytes` are what the model means by the piece:

* byte-level vocabularies (a `ByteLevel` pre-tokenizer or decoder): the piece mapped back through
  GPT-2's byte alphabet; pieces that are part of a character are FRAGMENTs;
* others: `<0xNN>` byte-fallback pieces are the byte NN (BYTE_FALLBACK), the continuing-subword
  prefix (`##`) is dropped, the Metaspace mark `▁` is a space, otherwise the piece's UTF-8. A
  lower-casing model's `hello` for `Hello` says what the model saw; the span says where it was;
* added tokens: their content; the unknown token: the original text it replaced (UNKNOWN).

Spans: when the tokens' bytes concatenate to the segment's UTF-8 (byte-level BPE always, after an
optional prefix space), byte spans are running offsets and a character cut across tokens is
covered by each of them with its own bytes. Otherwise spans come from the library's character
offsets, made ordered and covering as in the SentencePiece backend: characters no token claims go
to the following token, trailing ones to the last token; byte spans are the covered characters'
bytes.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import regex
import tokenizers

from tokviz.core.backends.panics import library_calls
from tokviz.core.backends.tiktoken_backend import BYTE_LEVEL_INVERSE
from tokviz.core.layout import Laid, fill_gaps
from tokviz.core.tokenizer import AllowedSpecial, DisallowedSpecial, SpecialsAdded, Tokenizer, TokenizerError
from tokviz.core.tokens import OffsetMap, Token, TokenKind, kind_for_bytes, sanitize


def _nodes(config: Any) -> Iterator[dict[str, Any]]:
    """Every component dict in a pre-tokenizer / decoder / normalizer tree (Sequences included)."""
    if isinstance(config, dict):
        yield config
        for value in config.values():
            yield from _nodes(value)
    elif isinstance(config, list):
        for value in config:
            yield from _nodes(value)


class HFTokenizer(Tokenizer):
    family = "huggingface"

    def __init__(
        self, tokenizer: tokenizers.Tokenizer, *, name: str = "tokenizer", config: dict[str, Any] | None = None
    ) -> None:
        self.tk = tokenizer
        self.name = name
        tokenizer.no_truncation()
        tokenizer.no_padding()
        tokenizer.encode_special_tokens = True  # plain segments never parse special tokens
        if config is None:
            config = json.loads(tokenizer.to_str())
        model = config.get("model") or {}
        self.model_type: str = model.get("type", "")
        self.byte_level = any(
            n.get("type") == "ByteLevel" for n in _nodes([config.get("pre_tokenizer"), config.get("decoder")])
        )
        self.byte_fallback = bool(model.get("byte_fallback"))
        prefix = model.get("continuing_subword_prefix")
        if prefix is None and self.model_type == "WordPiece":
            prefix = "##"
        self.subword_prefix: str = prefix or ""
        self.space_mark = self._find_space_mark(config)
        self._added: dict[int, tuple[str, bool]] = {
            int(t["id"]): (t["content"], bool(t.get("special"))) for t in config.get("added_tokens") or []
        }
        #: an added token's `lstrip`, `rstrip`, `single_word`, where any is set (RoBERTa's `<mask>`
        #: takes the spaces before it, Phi-3's `<|end|>` the newline after it)
        self._flags: dict[str, tuple[bool, bool, bool]] = {
            t["content"]: flags for t in config.get("added_tokens") or []
            if any(flags := (bool(t.get("lstrip")), bool(t.get("rstrip")), bool(t.get("single_word"))))
        }
        unk = model.get("unk_token")
        unk_id = tokenizer.token_to_id(unk) if isinstance(unk, str) else model.get("unk_id")
        self._unk_id: int | None = unk_id if isinstance(unk_id, int) else None
        self.special_tokens = {
            content: i for i, (content, special) in self._added.items() if special and i != self._unk_id
        }
        self._size = tokenizer.get_vocab_size(with_added_tokens=True)
        #: from a snapshot's tokenizer_config.json: BOS/EOS ids added around a text (None: the
        #: post-processor decides), and the chat template the chat code renders with
        self._wraps: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        self.chat_template: str | None = None

    @staticmethod
    def _find_space_mark(config: dict[str, Any]) -> str | None:
        """The character the model writes for a space (`▁` for Metaspace / SentencePiece-converted
        vocabularies), or None."""
        for node in _nodes([config.get("pre_tokenizer"), config.get("decoder"), config.get("normalizer")]):
            if node.get("type") == "Metaspace":
                return str(node.get("replacement", "\u2581"))
            if node.get("type") == "Replace" and node.get("content") == " ":
                pattern = node.get("pattern") or {}
                if pattern.get("String") == "\u2581":  # decoder Replace("▁", " ")
                    return "\u2581"
        return None

    # -- loading ----------------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, name: str | None = None) -> HFTokenizer:
        """Load a `tokenizer.json`; a missing file, invalid JSON or JSON that is not a tokenizer is
        a TokenizerError naming the file."""
        path = Path(path)
        try:
            text = path.read_text("utf-8")
        except OSError as e:
            raise TokenizerError(f"cannot read {path}: {e.strerror or e}") from e
        except UnicodeDecodeError as e:
            raise TokenizerError(f"{path}: not a tokenizer.json (not UTF-8 text)") from e
        return cls.from_str(text, name=name or path.stem, source=str(path))

    @classmethod
    def from_str(cls, text: str, *, name: str = "tokenizer", source: str | None = None) -> HFTokenizer:
        where = source or f"tokenizer {name!r}"
        if not text.strip():
            raise TokenizerError(f"{where} is empty: not a tokenizer.json; download it again")
        try:
            config = json.loads(text)
        except ValueError as e:
            raise TokenizerError(
                f"{where}: invalid JSON at line {getattr(e, 'lineno', '?')} ({getattr(e, 'msg', e)}); "
                f"the file is truncated or corrupt: download it again"
            ) from e
        if not isinstance(config, dict) or not isinstance(config.get("model"), dict):
            raise TokenizerError(
                f"{where}: JSON but not a Hugging Face tokenizer.json (no \"model\" section); "
                f"choose the tokenizer.json file"
            )
        try:
            tokenizer = tokenizers.Tokenizer.from_str(text)
        except Exception as e:  # the library raises a bare Exception for a bad tokenizer.json
            message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise TokenizerError(f"{where}: the tokenizers library cannot read it ({message})") from e
        return cls(tokenizer, name=name, config=config)

    @classmethod
    def from_snapshot(cls, folder: str | os.PathLike[str], *, name: str | None = None) -> HFTokenizer:
        """Load a Hugging Face model folder as transformers loads it: `tokenizer.json` through the
        tokenizers library, then `tokenizer_config.json` (when there is one): the tokens its
        `added_tokens_decoder` marks special and the named ones (`bos_token`, `eos_token`,
        `additional_special_tokens`...) become special tokens, `add_bos_token` / `add_eos_token`
        decide what "as the model sees it" puts around a text (DeepSeek-V3's post-processor adds
        nothing; its config adds BOS), and `chat_template` is kept for the chat code.

        >>> HFTokenizer.from_snapshot(  # doctest: +SKIP
        ...     "~/.cache/huggingface/hub/models--deepseek-ai--DeepSeek-V3/snapshots/REV")
        """
        folder = Path(folder).expanduser()
        tokenizer = cls.from_file(folder / "tokenizer.json", name=name or folder.name)
        config_path = folder / "tokenizer_config.json"
        if config_path.is_file():
            try:
                config = json.loads(config_path.read_text("utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise TokenizerError(f"{config_path}: not a readable tokenizer_config.json ({e})") from e
            if not isinstance(config, dict):
                raise TokenizerError(f"{config_path}: not a tokenizer_config.json (not a JSON object)")
            tokenizer._apply_config(config)
        return tokenizer

    def _apply_config(self, config: dict[str, Any]) -> None:
        marked: dict[str, int] = {}
        decoder = config.get("added_tokens_decoder")
        for key, token in (decoder.items() if isinstance(decoder, dict) else ()):
            content = token.get("content") if isinstance(token, dict) else None
            if isinstance(content, str) and token.get("special") and str(key).isdigit():
                marked[content] = int(key)
        named = [config.get(k) for k in _NAMED_SPECIALS]
        extra = config.get("additional_special_tokens")
        named += extra if isinstance(extra, list) else []
        for value in named:
            content = _content(value)
            token_id = self.tk.token_to_id(content) if content is not None else None
            if content is not None and token_id is not None:
                marked.setdefault(content, token_id)
        specials = dict(self.special_tokens)
        for content, token_id in marked.items():
            if self.tk.token_to_id(content) != token_id or token_id == self._unk_id:
                continue  # a config that disagrees with the vocabulary: the vocabulary wins
            self._added[token_id] = (content, True)
            specials[content] = token_id
        self.special_tokens = specials
        add_bos, add_eos = config.get("add_bos_token"), config.get("add_eos_token")
        if isinstance(add_bos, bool) or isinstance(add_eos, bool):
            bos, eos = (self._config_token_id(config.get(k)) for k in ("bos_token", "eos_token"))
            self._wraps = (
                (bos,) if add_bos and bos is not None else (),
                (eos,) if add_eos and eos is not None else (),
            )
        template = config.get("chat_template")
        if isinstance(template, str):
            self.chat_template = template

    def _config_token_id(self, value: object) -> int | None:
        content = _content(value)
        return self.tk.token_to_id(content) if content is not None else None

    @classmethod
    def from_tokenizer(cls, tokenizer: tokenizers.Tokenizer, *, name: str = "tokenizer") -> HFTokenizer:
        return cls(tokenizer, name=name)

    # -- vocabulary -------------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return self._size

    def piece(self, token_id: int) -> str:
        piece = self.tk.id_to_token(token_id) if token_id >= 0 else None
        if piece is None:
            raise KeyError(f"id {token_id} is not in {self.name}'s vocabulary")
        return piece

    def token_bytes(self, token_id: int) -> bytes:
        piece = self.piece(token_id)
        if token_id in self._added:
            return self._added[token_id][0].encode("utf-8")
        if self.byte_fallback and _is_byte_piece(piece):
            return bytes([int(piece[3:5], 16)])
        if self.byte_level:
            inverse = BYTE_LEVEL_INVERSE
            if all(c in inverse for c in piece):
                return bytes(inverse[c] for c in piece)
            return piece.encode("utf-8")
        if self.subword_prefix and piece.startswith(self.subword_prefix) and piece != self.subword_prefix:
            piece = piece[len(self.subword_prefix) :]
        if self.space_mark:
            piece = piece.replace(self.space_mark, " ")
        return piece.encode("utf-8")

    def kind(self, token_id: int) -> TokenKind:
        piece = self.piece(token_id)
        if token_id == self._unk_id:
            return TokenKind.UNKNOWN
        if token_id in self._added:
            return TokenKind.SPECIAL
        if self.byte_fallback and _is_byte_piece(piece):
            return TokenKind.BYTE_FALLBACK
        return kind_for_bytes(self.token_bytes(token_id))

    def encode_ordinary_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """The library's batch encode without offsets (`encode_batch_fast`): the ids `encode`
        gives each text; where the library refuses a text, text by text with `encode`'s errors."""
        try:
            with library_calls(self.name):
                found = self.tk.encode_batch_fast([sanitize(t) for t in texts], add_special_tokens=False)
        except Exception as e:
            if type(e) is not Exception:  # the library's own errors are bare Exceptions
                raise
            return super().encode_ordinary_batch(texts)
        return [e.ids for e in found]

    def decode(self, ids: Sequence[int]) -> str:
        return self.tk.decode(list(ids), skip_special_tokens=False)

    # -- capabilities -----------------------------------------------------------------------------

    def normalize(self, text: str) -> str | None:
        normalizer = self.tk.normalizer
        return normalizer.normalize_str(text) if normalizer is not None else None

    def pre_tokenize(self, text: str) -> list[str] | None:
        pre_tokenizer = self.tk.pre_tokenizer
        if pre_tokenizer is None:
            return None
        return [piece for piece, _ in pre_tokenizer.pre_tokenize_str(text)]

    @property
    def scores_whole_text(self) -> bool:
        return self.model_type == "Unigram"

    def specials_added(self, text: str) -> SpecialsAdded:
        """What the post-processor puts around the text's ids with `add_special_tokens=True`, or
        what a snapshot's `add_bos_token` / `add_eos_token` say (transformers' rule)."""
        if self._wraps is not None:
            return SpecialsAdded(*self._wraps)
        with_special = self._encode(text, add_special_tokens=True).ids
        without = self._encode(text, add_special_tokens=False).ids
        for k in range(len(with_special) - len(without) + 1):
            if with_special[k : k + len(without)] == without:
                return SpecialsAdded(tuple(with_special[:k]), tuple(with_special[k + len(without) :]))
        return SpecialsAdded()

    # -- encoding ---------------------------------------------------------------------------------

    def split_special(
        self, text: str, allowed: AllowedSpecial, disallowed: DisallowedSpecial
    ) -> Iterator[tuple[int, int, int | None]]:
        segments = super().split_special(text, allowed, disallowed)
        return _added_token_flags(text, segments, self._flags) if self._flags else segments

    def split_special_at(
        self, text: str, special_spans: Iterable[tuple[int, int]]
    ) -> Iterator[tuple[int, int, int | None]]:
        segments = super().split_special_at(text, special_spans)
        return _added_token_flags(text, segments, self._flags) if self._flags else segments

    def _special_token(self, text: str, start: int, end: int, special_id: int) -> Token:
        """A special token's bytes are its content; its span also covers the whitespace its
        `lstrip` / `rstrip` took (as the library's offsets do)."""
        token = super()._special_token(text, start, end, special_id)
        content = self.token_bytes(special_id)
        return token if token.bytes == content else token._replace(bytes=content)

    def _encode(self, text: str, *, add_special_tokens: bool) -> tokenizers.Encoding:
        """The library's encode; its bare `Exception` (a Unigram model without an unk piece meeting a
        character it has no piece for) and a Rust panic become a TokenizerError."""
        try:
            with library_calls(self.name):
                return self.tk.encode(text, add_special_tokens=add_special_tokens)
        except TokenizerError:
            raise
        except Exception as e:
            if type(e) is not Exception:  # the library's own errors are bare Exceptions; bugs are not
                raise
            if "unk_id" in str(e):
                raise TokenizerError(
                    f"{self.name}: the text has a character this vocabulary has no piece for, and its model "
                    f"has no unknown-token piece (unk_id is null) to stand for it; tokenizers refuses it too"
                ) from None
            raise TokenizerError(f"{self.name}: tokenizers cannot encode the text: {e}") from None

    def _lay_out_ordinary(self, text: str, start: int, end: int) -> Laid | None:
        if start >= end:
            return None
        segment = text[start:end]
        encoding = self._encode(segment, add_special_tokens=False)
        ids: list[int] = encoding.ids
        if not ids:
            return None
        info = self._info_for(ids)
        data_of = info.data.__getitem__
        omap = OffsetMap(segment)
        data = omap.data
        lengths = np.fromiter(map(len, map(data_of, ids)), dtype=np.int64, count=len(ids))
        joined = b"".join(map(data_of, ids)) if self._unk_id not in ids else None
        if joined is not None and (joined == data or (joined[:1] == b" " and joined[1:] == data)):
            prefix = len(joined) - len(data)
            byte_ends = np.cumsum(lengths) - prefix
            byte_starts = np.maximum(byte_ends - lengths, 0)
            cstarts, cends = omap.char_spans(byte_starts, byte_ends)
            char_starts, char_ends = np.asarray(cstarts, np.int64), np.asarray(cends, np.int64)
            unknown = []
        else:
            flat = itertools.chain.from_iterable(encoding.offsets)
            offsets = np.fromiter(flat, dtype=np.int64, count=2 * len(ids)).reshape(len(ids), 2)
            char_starts = np.clip(offsets[:, 0], 0, len(segment))
            char_ends = np.clip(offsets[:, 1], 0, len(segment))
            to_byte = omap.byte_offsets
            own_starts, own_ends = to_byte[char_starts], to_byte[char_ends]  # before gaps are added
            fill_gaps(char_starts, char_ends, len(segment))
            byte_starts, byte_ends = to_byte[char_starts], to_byte[char_ends]
            unknown = self._unknown_bytes(ids, data, own_starts, own_ends, byte_starts, byte_ends)
        byte_base = self._offset_map(text).byte_offset(start)
        datas = None
        if unknown:  # the unknown token stands for the original text it replaced
            datas = list(map(data_of, ids))
            for k, replaced in unknown:
                datas[k] = replaced
        return Laid(ids, byte_starts + byte_base, byte_ends + byte_base, char_starts + start, char_ends + start, datas)

    def _unknown_bytes(
        self,
        ids: list[int],
        data: bytes,
        own_starts: np.ndarray,
        own_ends: np.ndarray,
        byte_starts: np.ndarray,
        byte_ends: np.ndarray,
    ) -> list[tuple[int, bytes]]:
        """`(index, original bytes)` of each unknown token: the text the library's own offsets give
        it, or its covering span where those are empty."""
        if self._unk_id is None:
            return []
        where = np.flatnonzero(np.asarray(ids, dtype=np.int64) == self._unk_id).tolist()
        found = []
        for k in where:
            a, b = int(own_starts[k]), int(own_ends[k])
            if b <= a:
                a, b = int(byte_starts[k]), int(byte_ends[k])
            found.append((k, data[a:b]))
        return found


_NAMED_SPECIALS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


_WORD_AT_END = regex.compile(r"\w$")
_WORD_AT_START = regex.compile(r"\w")  # used with match(): anchored where it starts
_SPACES_AT_END = regex.compile(r"\s*$")
_SPACES_AT_START = regex.compile(r"\s*")


def _added_token_flags(
    text: str, segments: Iterable[tuple[int, int, int | None]], flags: dict[str, tuple[bool, bool, bool]]
) -> Iterator[tuple[int, int, int | None]]:
    """The special-token split with each token's `single_word`, `lstrip` and `rstrip` applied as
    tokenizers' `AddedVocabulary::find_matches` applies them: a `single_word` match touching a word
    character is plain text; `lstrip` takes the whitespace before the token (not past the previous
    token), `rstrip` the whitespace after it, out of the plain text beside it.

    >>> list(_added_token_flags("a <m> b", [(0, 2, None), (2, 5, 7), (5, 7, None)], {"<m>": (True, True, False)}))
    [(0, 1, None), (1, 6, 7), (6, 7, None)]
    >>> list(_added_token_flags("a<m>b", [(0, 1, None), (1, 4, 7), (4, 5, None)], {"<m>": (False, False, True)}))
    [(0, 5, None)]
    """
    out: list[tuple[int, int, int | None]] = []
    taken = 0  # the end of the last special token, rstrip included: text before it is settled
    for start, end, special_id in segments:
        if special_id is not None and (flag := flags.get(text[start:end])):
            lstrip, rstrip, single_word = flag
            if single_word and (_WORD_AT_END.search(text, 0, start) or _WORD_AT_START.match(text, end)):
                special_id = None  # not a whole word: plain text
            else:
                if lstrip:
                    spaces = _SPACES_AT_END.search(text, 0, start)
                    start = max(spaces.start() if spaces else start, taken)
                if rstrip:
                    spaces = _SPACES_AT_START.match(text, end)
                    end = spaces.end() if spaces else end
        if special_id is None:
            start = max(start, taken)
            if start >= end and text:
                continue
            if out and out[-1][2] is None and out[-1][1] == start:
                out[-1] = (out[-1][0], end, None)  # plain text next to plain text is one segment
                continue
        else:
            if out and out[-1][2] is None:  # the plain text before gives up what lstrip took
                out[-1] = (out[-1][0], min(out[-1][1], start), None)
                if out[-1][0] == out[-1][1]:
                    out.pop()
            taken = end
        out.append((start, end, special_id))
    yield from out


def _content(value: object) -> str | None:
    """A tokenizer_config.json token: `"<s>"` or `{"content": "<s>", ...}`."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _is_byte_piece(piece: str) -> bool:
    """`<0xNN>`, SentencePiece's byte-fallback spelling."""
    return (
        len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">")
        and all(c in "0123456789abcdefABCDEF" for c in piece[3:5])
    )
