"""The ChatGLM-6B profile: a SentencePiece model wrapped in ChatGLM-6B's own preprocessing.

THUDM's `tokenization_chatglm.py` (ChatGLM-6B) does not hand the text to sentencepiece as typed.
`ChatGLMTokenizer` applies the same steps, in the same order, and keeps every token's span on the
*original* text:

1. optional `remove_space` (`" ".join(text.strip().split())`) and lower-casing (`do_lower_case`; the
   published `tokenizer_config.json` sets it, so `Hello World` -> `▁hello` `▁world`);
2. `\\n` -> `<n>`;
3. `\\t` -> `<|tab|>`, and each run of spaces -> `<|blank_80|>` as often as it fits, then
   `<|blank_r|>` for a rest of 2..79 (a rest of one space stays a space, which SentencePiece turns
   into the `▁` that starts the next word): `" " * 81` -> `<|blank_80|>` + `" "`;
4. sentencepiece encodes the result with its dummy prefix: a text starts with `▁`, standalone (id 5
   in `ice_text.model`) when `▁` + the first word is not a piece (`苹果我是昨天买的` -> `▁` `苹果` ...),
   merged when it is (`我是昨天买的苹果` -> `▁我是` ...). With `add_dummy_prefix=False` the original
   prepends `<n>` and drops the first two tokens (`▁` `<n>`); so does this class;
5. `[gMASK]` `<sop>` are appended to an input (`add_special_tokens=True`, the default of
   transformers' `encode`): like every backend's BOS/EOS, they are what `added_around` names, not
   part of `encode`'s tokens; a training example is `prompt + [gMASK] <sop> + target + <eop>`
   (`preprocess_example`).

A `<|blank_3|>` token covers the three original spaces, `<n>` the newline; their `Token.bytes` are
the whitespace they stand for (what ChatGLM's decode gives back) and their kind is NORMAL. The
appended `[gMASK]` `<sop>` stand for no text (`added_tokens`: empty spans at the end). Ids are the model's ids plus
`num_image_tokens` (0 for the current ChatGLM-6B, whose `ice_text.model` has 130,344 pieces; 20000
for the first release).

With the real `ice_text.model` the seed's ids are expected: `"我爱学习"` -> `[5, 76202, 63992,
130001, 130004]`, `"我是  昨天买的苹果"` (no special tokens) -> `[71232, 130009, 67363, 68543, 65319]`
(`▁我是` `<|blank_2|>` `昨天` `买的` `苹果`). `ice_text.model` is on no package registry, so tokviz's
tests train a small SentencePiece BPE model with the same user-defined symbols instead.

`catalog.load` gives this tokenizer for a SentencePiece model with ChatGLM-6B's own pieces
(`is_chatglm6b`: `-t PATH/ice_text.model`) and for a `hf:THUDM/chatglm-6b` snapshot, with the
options of its `tokenizer_config.json` (`glm.load_snapshot`).

This module does not download `ice_text.model`, does not model ChatGLM2/3 or GLM-4 (`glm.py`),
and does not truncate or pad.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer
from tokviz.core.layout import Laid, fill_gaps
from tokviz.core.tokenizer import (
    Preprocessing,
    PreprocessStep,
    SpecialsAdded,
    Tokenizer,
    TokenizerError,
)
from tokviz.core.tokens import OffsetMap, Token, TokenKind

LINEBREAK = "<n>"
TAB = "<|tab|>"
MAX_BLANK = 80
#: ChatGLM-6B's special tokens (SPTokenizer.special_tokens), in ice_text.model from id 130000
SPECIAL_TOKENS = ("[MASK]", "[gMASK]", "[sMASK]", "<unused_0>", "<sop>", "<eop>", "<ENC>", "<dBLOCK>")
GMASK, BOS, EOS = "[gMASK]", "<sop>", "<eop>"


def blank_token(length: int) -> str:
    """Spell the token for a run of `length` spaces.

    >>> blank_token(3)
    '<|blank_3|>'
    """
    if length < 2:
        raise ValueError(f"a blank token stands for 2 or more spaces, not {length}")
    return f"<|blank_{length}|>"


def user_defined_symbols(max_blank_length: int = MAX_BLANK) -> list[str]:
    """The pieces ChatGLM's preprocessing writes and appends, for training a stand-in model."""
    blanks = [blank_token(n) for n in range(2, max_blank_length + 1)]
    return [LINEBREAK, *SPECIAL_TOKENS, TAB, *blanks]


def whitespace_pieces(max_blank_length: int = MAX_BLANK) -> dict[str, str]:
    """Piece -> the whitespace it stands for (`<n>` -> newline, `<|blank_3|>` -> 3 spaces)."""
    pieces = {LINEBREAK: "\n", TAB: "\t"}
    pieces.update({blank_token(n): " " * n for n in range(2, max_blank_length + 1)})
    return pieces


def is_chatglm6b(base: Tokenizer) -> bool:
    """`base` is a SentencePiece model with ChatGLM-6B's own pieces (`[gMASK]`, `<sop>`, `<eop>`,
    `<n>`, `<|tab|>`, `<|blank_2|>`): `ice_text.model`, or one trained with `user_defined_symbols()`."""
    if not isinstance(base, SentencePieceTokenizer):
        return False
    unk = base.sp.unk_id()
    return all(base.sp.piece_to_id(p) != unk for p in (GMASK, BOS, EOS, LINEBREAK, TAB, blank_token(2)))


# -- preprocessing with a map back to the original text -------------------------------------------


@dataclass(frozen=True)
class MappedText:
    """A rewritten text whose character `k` came from original characters `starts[k]:ends[k]`."""

    text: str
    starts: list[int]
    ends: list[int]
    length: int  # of the original text

    @classmethod
    def identity(cls, text: str) -> MappedText:
        return cls(text, list(range(len(text))), list(range(1, len(text) + 1)), len(text))

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original characters that rewritten characters `start:end` came from."""
        if end > start:
            return self.starts[start], self.ends[end - 1]
        at = self.starts[start] if start < len(self.text) else self.length
        return at, at


Replacement = Callable[[re.Match[str]], list[tuple[str, int, int]]]


def substitute(mapped: MappedText, pattern: re.Pattern[str], replace: Replacement) -> MappedText:
    """Rewrite every match of `pattern`; `replace` gives `(text, start, end)` pieces whose text
    stands for current characters `start:end` (an empty text drops them)."""
    text, starts, ends = mapped.text, mapped.starts, mapped.ends
    out: list[str] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    pos = 0
    for match in pattern.finditer(text):
        a, b = match.span()
        out.append(text[pos:a])
        new_starts.extend(starts[pos:a])
        new_ends.extend(ends[pos:a])
        for piece, s, e in replace(match):
            origin = mapped.original_span(s, e)
            out.append(piece)
            new_starts.extend([origin[0]] * len(piece))
            new_ends.extend([origin[1]] * len(piece))
        pos = b
    out.append(text[pos:])
    new_starts.extend(starts[pos:])
    new_ends.extend(ends[pos:])
    return MappedText("".join(out), new_starts, new_ends, mapped.length)


def lower(mapped: MappedText) -> MappedText:
    """`str.lower`, which can lengthen a character (`İ` -> `i̇`): each result character maps to the
    character it came from."""
    lowered = mapped.text.lower()
    if len(lowered) == len(mapped.text):
        return MappedText(lowered, mapped.starts, mapped.ends, mapped.length)
    widths = [len(c.lower()) for c in mapped.text]
    starts = [s for s, w in zip(mapped.starts, widths) for _ in range(w)]
    ends = [e for e, w in zip(mapped.ends, widths) for _ in range(w)]
    return MappedText(lowered, starts, ends, mapped.length)


_SPACES = re.compile(r"\s+")
_EDGE_SPACES = re.compile(r"^\s+|\s+$")
_NEWLINE = re.compile("\n")
_TAB = re.compile("\t")
_BLANKS = re.compile(" {2,}")


def remove_space(mapped: MappedText) -> MappedText:
    """`" ".join(text.strip().split())`: edges dropped, every inner run of whitespace one space."""
    stripped = substitute(mapped, _EDGE_SPACES, lambda m: [])
    return substitute(stripped, _SPACES, lambda m: [(" ", m.start(), m.end())])


def encode_linebreaks(mapped: MappedText) -> MappedText:
    return substitute(mapped, _NEWLINE, lambda m: [(LINEBREAK, m.start(), m.end())])


def encode_whitespaces(mapped: MappedText, max_len: int = MAX_BLANK) -> MappedText:
    """Tabs to `<|tab|>`; runs of spaces as the original's `replace(" " * i, ...)` for i = max_len
    down to 2 leaves them: whole `max_len` blocks, then one blank token for the rest (or a space)."""
    tabbed = substitute(mapped, _TAB, lambda m: [(TAB, m.start(), m.end())])

    def blanks(match: re.Match[str]) -> list[tuple[str, int, int]]:
        pieces, pos, end = [], match.start(), match.end()
        while end - pos >= max_len:
            pieces.append((blank_token(max_len), pos, pos + max_len))
            pos += max_len
        if end - pos >= 2:
            pieces.append((blank_token(end - pos), pos, end))
        elif end - pos == 1:
            pieces.append((" ", pos, end))
        return pieces

    return substitute(tabbed, _BLANKS, blanks)


# -- the tokenizer --------------------------------------------------------------------------------


class ChatGLMTokenizer(Tokenizer):
    """ChatGLM-6B's tokenizer: its preprocessing around a SentencePiece model (`ice_text.model`).

    >>> tok = ChatGLMTokenizer.from_file("ice_text.model")  # doctest: +SKIP
    >>> tok.added_around("我爱学习").around(tok.encode_ids("我爱学习"))  # doctest: +SKIP
    [5, 76202, 63992, 130001, 130004]
    """

    family = "sentencepiece"
    profile = "chatglm-6b"

    def __init__(
        self,
        base: Tokenizer,
        *,
        name: str | None = None,
        do_lower_case: bool = True,
        remove_space: bool = False,
        linebreak: bool = True,
        whitespaces: bool = True,
        add_dummy_prefix: bool = True,
        add_special_tokens: bool = True,
        max_blank_length: int = MAX_BLANK,
        num_image_tokens: int = 0,
    ) -> None:
        if not 2 <= max_blank_length <= MAX_BLANK:
            raise ValueError(f"max_blank_length must be 2..{MAX_BLANK} (the vocabulary has no longer blanks)")
        if not isinstance(base, SentencePieceTokenizer):
            raise TokenizerError(
                f"{base.name} is not a ChatGLM-6B model: the profile wraps a SentencePiece model "
                f"(ice_text.model), not {base.describe()}"
            )
        missing = [p for p in (GMASK, BOS, EOS) if base.sp.piece_to_id(p) == base.sp.unk_id()]
        if missing:
            raise TokenizerError(
                f"{base.name} is not a ChatGLM-6B model: it has no piece {missing[0]!r}; load "
                f"ice_text.model, or a model trained with chatglm.user_defined_symbols()"
            )
        self.base = base
        self.name = name or f"{base.name} (ChatGLM-6B)"
        self.do_lower_case = do_lower_case
        self.remove_space = remove_space
        self.linebreak = linebreak
        self.whitespaces = whitespaces
        self.add_dummy_prefix = add_dummy_prefix
        self.add_special_tokens = add_special_tokens
        self.max_blank_length = max_blank_length
        self.offset = num_image_tokens
        self._whitespace = {
            base.sp.piece_to_id(p): text
            for p, text in whitespace_pieces(max_blank_length).items()
            if base.sp.piece_to_id(p) != base.sp.unk_id()
        }
        self.special_tokens = {
            piece: i + self.offset for piece, i in base.special_tokens.items() if i not in self._whitespace
        }

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **options: Any) -> ChatGLMTokenizer:
        """Load `ice_text.model` (or a stand-in) as ChatGLM-6B; options as the constructor's."""
        return cls(SentencePieceTokenizer.from_file(path, name=Path(path).stem), **options)

    def describe(self) -> str:
        return f"{self.name} (ChatGLM-6B: sentencepiece, {self.vocab_size:,} ids)"

    # -- ids --------------------------------------------------------------------------------------

    def id_of(self, piece: str) -> int:
        """`SPTokenizer.__getitem__`: a piece's id (image tokens `<image_N>` included)."""
        if piece.startswith("<image_") and piece.endswith(">") and piece[7:-1].isdigit():
            return int(piece[7:-1])
        return self.base.sp.piece_to_id(piece) + self.offset

    @property
    def vocab_size(self) -> int:
        return self.base.vocab_size + self.offset

    def _base_id(self, token_id: int) -> int:
        if not 0 <= token_id < self.vocab_size:
            raise KeyError(f"id {token_id} is outside {self.name}'s vocabulary (0..{self.vocab_size - 1})")
        return token_id - self.offset

    def piece(self, token_id: int) -> str:
        base_id = self._base_id(token_id)
        return f"<image_{token_id}>" if base_id < 0 else self.base.piece(base_id)

    def token_bytes(self, token_id: int) -> bytes:
        base_id = self._base_id(token_id)
        if base_id < 0:
            return self.piece(token_id).encode("utf-8")
        if base_id in self._whitespace:
            return self._whitespace[base_id].encode("utf-8")
        return self.base.token_bytes(base_id)

    def kind(self, token_id: int) -> TokenKind:
        base_id = self._base_id(token_id)
        if base_id < 0:
            return TokenKind.SPECIAL
        if base_id in self._whitespace:
            return TokenKind.NORMAL
        return self.base.kind(base_id)

    def decode(self, ids: Sequence[int]) -> str:
        """`SPTokenizer.decode`: drop image ids, sentencepiece's decode, then whitespace back."""
        base_ids = [i - self.offset for i in ids if i - self.offset >= 0]
        text = self.base.decode(base_ids).replace(LINEBREAK, "\n").replace(TAB, "\t")
        for n in range(2, self.max_blank_length + 1):
            text = text.replace(blank_token(n), " " * n)
        return text

    def build_inputs(self, prompt_ids: list[int], target_ids: list[int] | None = None) -> list[int]:
        """`build_inputs_with_special_tokens`: prompt + `[gMASK]` `<sop>` (+ target + `<eop>`)."""
        ids = [*prompt_ids, self.id_of(GMASK), self.id_of(BOS)]
        if target_ids is not None:
            ids += [*target_ids, self.id_of(EOS)]
        return ids

    def preprocess_example(self, context: str, target: str) -> dict[str, list[int] | int]:
        """The seed's training preprocessing: `{"input_ids": prompt + [gMASK] <sop> + target +
        <eop>, "seq_len": len(prompt ids with [gMASK] <sop>)}`."""
        prompt = self.encode_ids(context)
        input_ids = self.build_inputs(prompt, self.encode_ids(target))
        return {"input_ids": input_ids, "seq_len": len(prompt) + 2}

    # -- capabilities -----------------------------------------------------------------------------

    @property
    def preprocessing(self) -> Preprocessing:
        return _Profile(self)

    @property
    def scores_whole_text(self) -> bool:
        return self.base.scores_whole_text

    def normalize(self, text: str) -> str:
        """The preprocessed text after the model's normalizer."""
        return self.base.normalize(self.preprocess(text).text)

    # -- preprocessing ----------------------------------------------------------------------------

    def preprocess(self, text: str) -> MappedText:
        """The text sentencepiece is given, mapped back to `text`."""
        return self._preprocess_steps(text)[-1][1]

    def preprocess_steps(self, text: str) -> list[PreprocessStep]:
        """Each preprocessing step that applies, with the text after it (for the pipeline view)."""
        steps = self._preprocess_steps(text)[1:]
        return [PreprocessStep(name, mapped.text, note) for name, mapped, note in steps]

    def _preprocess_steps(self, text: str) -> list[tuple[str, MappedText, str]]:
        steps: list[tuple[str, MappedText, str]] = [("input", MappedText.identity(text), "")]

        def apply(name: str, rewrite: Callable[[MappedText], MappedText], note: str) -> None:
            steps.append((name, rewrite(steps[-1][1]), note))

        if self.remove_space:
            apply("remove spaces", remove_space, "strip, then every whitespace run -> one space")
        if self.do_lower_case:
            apply("lower-case", lower, "do_lower_case")
        if self.linebreak:
            apply("line breaks", encode_linebreaks, "\\n -> <n>")
        if self.whitespaces:
            apply(
                "tabs and blanks", lambda m: encode_whitespaces(m, self.max_blank_length),
                f"\\t -> <|tab|>; runs of 2..{self.max_blank_length} spaces -> <|blank_n|>",
            )
        if not self.add_dummy_prefix:
            apply("no dummy prefix", _prepend_linebreak, "<n> prepended; its tokens (▁ <n>) are dropped")
        return steps

    # -- encoding ---------------------------------------------------------------------------------

    def specials_added(self, text: str) -> SpecialsAdded | None:
        """`[gMASK]` `<sop>` after the text, when `add_special_tokens` (transformers' default)."""
        return SpecialsAdded(after=(self.id_of(GMASK), self.id_of(BOS))) if self.add_special_tokens else None

    def _lay_out_ordinary(self, text: str, start: int, end: int) -> Laid | None:
        mapped = self.preprocess(text[start:end])
        if not mapped.text:
            return None
        pieces = self.base.encode(mapped.text)
        if not self.add_dummy_prefix:
            pieces = pieces[2:]  # the original's `tokens[2:]`: the `▁` and `<n>` of the prepended <n>
        if not pieces:
            return None
        spans = [mapped.original_span(t.start, t.end) for t in pieces]
        starts = np.fromiter((s for s, _ in spans), dtype=np.int64, count=len(spans))
        ends = np.fromiter((e for _, e in spans), dtype=np.int64, count=len(spans))
        fill_gaps(starts, ends, end - start)
        omap = self._offset_map(text)  # one map per text, shared by its segments
        starts += start
        ends += start
        byte_starts, byte_ends = _byte_spans(pieces, mapped, omap, starts.tolist(), ends.tolist(), start)
        ids = [t.id + self.offset for t in pieces]
        info = self._info_for(ids)
        datas = [
            t.bytes if t.kind == TokenKind.UNKNOWN else info.data[i] for t, i in zip(pieces, ids)
        ]
        byte_start_array, byte_end_array = np.array(byte_starts, dtype=np.int64), np.array(byte_ends, dtype=np.int64)
        return Laid(ids, byte_start_array, byte_end_array, starts, ends, datas)


class _Profile(Preprocessing):
    """ChatGLM-6B's preprocessing as the `Preprocessing` capability."""

    def __init__(self, tokenizer: ChatGLMTokenizer) -> None:
        self._tokenizer = tokenizer
        self.inner = tokenizer.base

    def apply(self, text: str) -> str:
        return self._tokenizer.preprocess(text).text

    def steps(self, text: str) -> list[PreprocessStep]:
        return self._tokenizer.preprocess_steps(text)

    def outer_ids(self, inner_ids: Sequence[int]) -> list[int]:
        """Plus `num_image_tokens`; without the dummy prefix, less the `▁` `<n>` of the prepended
        `<n>` (the original's `tokens[2:]`)."""
        ids = [i + self._tokenizer.offset for i in inner_ids]
        return ids if self._tokenizer.add_dummy_prefix else ids[2:]


def _byte_spans(
    pieces: list[Token], mapped: MappedText, omap: OffsetMap, starts: list[int], ends: list[int], base: int
) -> tuple[list[int], list[int]]:
    """Byte spans on the original text: the covered characters' bytes, narrowed to the bytes a
    token holds where it holds part of a character that preprocessing left as it was (the
    byte-fallback pieces of one character each keep their own byte)."""
    pmap = OffsetMap(mapped.text)
    original = omap.text
    byte_starts, byte_ends = [], []
    for t, cs, ce in zip(pieces, starts, ends):
        bs, be = omap.byte_offset(cs), omap.byte_offset(ce)
        if t.end > t.start:
            first, last = t.start, t.end - 1
            if cs == mapped.starts[first] + base and _same_char(mapped, original, first, base):
                bs += t.byte_start - pmap.byte_offset(first)
            if ce == mapped.ends[last] + base and _same_char(mapped, original, last, base):
                be -= pmap.byte_offset(t.end) - t.byte_end
        byte_starts.append(bs)
        byte_ends.append(max(be, bs))
    return byte_starts, byte_ends


def _same_char(mapped: MappedText, original: str, k: int, base: int) -> bool:
    """Rewritten character k is an original character left unchanged."""
    a = mapped.starts[k]
    return mapped.ends[k] == a + 1 and original[base + a] == mapped.text[k]


def _prepend_linebreak(mapped: MappedText) -> MappedText:
    """`"<n>" + text`, the original's way of encoding without the dummy prefix: the added `<n>`
    stands for no original character."""
    return MappedText(LINEBREAK + mapped.text, [0] * 3 + mapped.starts, [0] * 3 + mapped.ends, mapped.length)
