"""The one tokenizer interface every backend implements.

Views, the CLI and the analyses only talk to `Tokenizer`; none of them asks which backend it holds.
Special-token handling follows tiktoken's `encode` exactly (`allowed_special`, `disallowed_special`),
but the default here is the injection-safe one: special-token text in pasted input is plain text.

Beyond cutting text, the tools need a few facts only some vocabularies have: the BPE ranks (merge
replay, merge parents, extension), the split regex, the normalizer, the SentencePiece model's piece
types and scores, a text rewrite before the model (ChatGLM-6B), what a library adds around a text
(BOS/EOS). Each is a *capability* of `Tokenizer`, typed, and None (or False) where a backend does
not have it; a caller asks the capability, never the backend's type or private attributes.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import regex

from tokviz.core.encoding import Encoding
from tokviz.core.layout import Laid, TokenInfo
from tokviz.core.tokens import OffsetMap, Token, TokenKind, sanitize

AllowedSpecial = Literal["all"] | AbstractSet[str]
DisallowedSpecial = Literal["all"] | Collection[str]


class TokenizerError(Exception):
    """A tokenizer could not be loaded or could not encode: the message says why and what to do."""


@dataclass(frozen=True)
class SpecialPolicy:
    """How special-token text in the input is treated, in tiktoken's terms.

    >>> SpecialPolicy.parse("none")
    SpecialPolicy(allowed_special=frozenset(), disallowed_special=())
    >>> SpecialPolicy.parse("<|endoftext|>,<|fim_prefix|>").allowed_special == {"<|endoftext|>", "<|fim_prefix|>"}
    True
    """

    allowed_special: AllowedSpecial = frozenset()
    disallowed_special: DisallowedSpecial = ()

    @classmethod
    def parse(cls, spec: str | None) -> SpecialPolicy:
        """`all` (parse every special token), `none` (plain text, the default), `raise` (tiktoken's
        default: error on any special-token text) or a comma-separated set of tokens to parse."""
        if spec is None or spec == "none":
            return cls(frozenset(), ())
        if spec == "all":
            return cls("all", ())
        if spec == "raise":
            return cls(frozenset(), "all")
        return cls(frozenset(t.strip() for t in spec.split(",") if t.strip()), ())

    def unknown_to(self, special_tokens: Mapping[str, int]) -> list[str]:
        """The tokens this policy names that a vocabulary does not have (sorted; none for `all`,
        `none` and `raise`): such text can only ever be plain text there.

        >>> SpecialPolicy.parse("<|endoftext|>,<|bogus|>").unknown_to({"<|endoftext|>": 100257})
        ['<|bogus|>']
        """
        if self.allowed_special == "all":
            return []
        return sorted(set(self.allowed_special) - set(special_tokens))

    @property
    def label(self) -> str:
        if self.allowed_special == "all":
            return "all"
        if self.disallowed_special == "all":
            return "raise"
        if not self.allowed_special:
            return "none"
        return ",".join(sorted(self.allowed_special))


@dataclass(frozen=True)
class VocabEntry:
    id: int
    piece: str  # as the vocabulary spells it
    bytes: bytes
    kind: TokenKind


# -- capabilities: what some vocabularies can say about themselves --------------------------------


class PieceType(enum.IntEnum):
    """A piece's type in a SentencePiece model (`ModelProto.SentencePiece.Type`; llama.cpp's token
    types use the same numbers).

    >>> PieceType(6).name
    'BYTE'
    """

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


@dataclass(frozen=True)
class SentencePieceModel:
    """A SentencePiece model's own facts: what replaying its merges and naming its normalizer need.

    Indexed by the model's piece ids. A backend builds it once, when first asked.

    >>> model = SentencePieceModel(
    ...     pieces=("<unk>", "▁", "a", "▁a"), types=(PieceType.UNKNOWN, *[PieceType.NORMAL] * 3),
    ...     scores=(0.0, -1.0, -2.0, -3.0), model_type="bpe", normalizer_name="identity",
    ...     remove_extra_whitespaces=False, unk_id=0,
    ... )
    >>> model.pieces[3], model.types[3].name, model.scores[3]
    ('▁a', 'NORMAL', -3.0)
    """

    pieces: tuple[str, ...]
    types: tuple[PieceType, ...]
    scores: tuple[float, ...]
    #: `unigram`, `bpe`, `word` or `char` (the TrainerSpec's model_type); '' when the model does not say
    model_type: str
    #: the normalizer rule (`nmt_nfkc`, `identity`); '' when unknown
    normalizer_name: str
    #: whether the normalizer drops leading, trailing and repeated spaces
    remove_extra_whitespaces: bool
    unk_id: int


class PreprocessStep(NamedTuple):
    """One rewrite of a `Preprocessing`: its name, the text after it, what it did."""

    name: str
    text: str
    note: str


class Preprocessing(abc.ABC):
    """A text rewrite a tokenizer does before an inner model cuts the text (ChatGLM-6B's
    `<n>`, `<|blank_n|>`, lower-casing around a SentencePiece model).

    The outer tokenizer cuts each plain segment by rewriting it (`apply`), cutting the result with
    `inner`, and mapping the inner ids (`outer_ids`). What it adds around an input is
    `Tokenizer.added_around`, as for every tokenizer.
    """

    #: the model tokenizer that cuts the rewritten text
    inner: Tokenizer

    @abc.abstractmethod
    def apply(self, text: str) -> str:
        """The text the inner model is given for `text`."""

    @abc.abstractmethod
    def steps(self, text: str) -> list[PreprocessStep]:
        """Each rewrite that applies to `text`, in order, with the text after it."""

    @abc.abstractmethod
    def outer_ids(self, inner_ids: Sequence[int]) -> list[int]:
        """The outer tokenizer's ids for the inner model's ids of one rewritten segment: one outer
        id per inner id, in order, except leading ones the outer tokenizer drops (what the merge
        replay relies on to give each inner chunk its outer ids)."""


@dataclass(frozen=True)
class SpecialsAdded:
    """Special tokens a library puts around a text's own ids when asked to (a SentencePiece
    model's BOS/EOS, a `tokenizer.json` post-processor's template). `encode` never includes them.

    >>> SpecialsAdded(before=(1,)).around([5, 6])
    [1, 5, 6]
    """

    before: tuple[int, ...] = ()
    after: tuple[int, ...] = ()

    def around(self, ids: Sequence[int]) -> list[int]:
        return [*self.before, *ids, *self.after]


class Tokenizer(abc.ABC):
    """A loaded vocabulary that cuts text into `Token`s."""

    #: a short name for this vocabulary (`cl100k_base`, `qwen`, the file's stem)
    name: str
    #: which kind of vocabulary: `tiktoken`, `sentencepiece`, `huggingface`, `trained`
    family: str
    #: special / control token text -> id
    special_tokens: Mapping[str, int]

    @property
    @abc.abstractmethod
    def vocab_size(self) -> int:
        """Number of ids, special tokens included."""

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = (),
    ) -> list[Token]:
        """Cut `text` into tokens with spans, bytes and kinds.

        Raises `ValueError` (tiktoken's message) when the text holds a disallowed special token.

        >>> from tokviz.core.catalog import load  # doctest: +SKIP
        >>> [t.id for t in load("cl100k_base").encode("hello world")]  # doctest: +SKIP
        [15339, 1917]
        """
        text = sanitize(text)
        return self._cut(text, self.split_special(text, allowed_special, disallowed_special))

    def encode_trusted(self, text: str, special_spans: Iterable[tuple[int, int]]) -> list[Token]:
        """Cut `text` parsing special tokens only at `special_spans`, character ranges that each
        spell one special token exactly; special-token text anywhere else stays plain text.

        What a chat prompt needs: the control tokens a template wrote are parsed, a message's
        content that merely spells one is not. The text is still encoded once, exactly as `encode`
        with those tokens allowed would cut it, so the tokens are the ones the model gets.
        Raises `ValueError` for a span that is out of order or is not a special token's text.
        """
        text = sanitize(text)
        return self._cut(text, self.split_special_at(text, special_spans))

    def _cut(self, text: str, segments: Iterable[tuple[int, int, int | None]]) -> list[Token]:
        """Tokens of every segment in order. A segment the model drops whole (the spaces before,
        between or after special tokens in a normalizing SentencePiece model) is a gap: no token
        stands for it, as in the library, and a special token's span is its own text."""
        try:
            tokens: list[Token] = []
            for start, end, special_id in segments:
                if special_id is None:
                    tokens.extend(self._encode_ordinary(text, start, end))
                else:
                    tokens.append(self._special_token(text, start, end, special_id))
            return tokens
        finally:
            self._forget_offset_map(text)

    def encode_columns(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = (),
    ) -> Encoding:
        """`encode` as an `Encoding` (columns), without building Token objects."""
        text = sanitize(text)
        try:
            return self._columns(text, allowed_special, disallowed_special)
        finally:
            self._forget_offset_map(text)

    def _columns(self, text: str, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
                 ) -> Encoding:
        omap = self._offset_map(text)
        parts: list[Laid] = []
        for start, end, special_id in self.split_special(text, allowed_special, disallowed_special):  # as `_cut`
            if special_id is None:
                laid = self._lay_out_ordinary(text, start, end)
            else:
                laid = Laid.of_tokens([self._special_token(text, start, end, special_id)])
            if laid is not None and laid.ids:
                parts.append(laid)
        return Encoding.of_laid(parts, self._info_for, len(omap.data))

    def encode_ids(self, text: str, **policy: Any) -> list[int]:
        return [t.id for t in self.encode(text, **policy)]

    def encode_with(self, text: str, policy: SpecialPolicy) -> list[Token]:
        return self.encode(
            text, allowed_special=policy.allowed_special, disallowed_special=policy.disallowed_special
        )

    @abc.abstractmethod
    def decode(self, ids: Sequence[int]) -> str:
        """Decode ids to text as the library itself does (`errors="replace"` where that applies)."""

    @abc.abstractmethod
    def token_bytes(self, token_id: int) -> bytes:
        """The bytes one id stands for (a special token's text, a byte-fallback piece's byte)."""

    @abc.abstractmethod
    def piece(self, token_id: int) -> str:
        """The id as the vocabulary spells it (`▁the`, `Ġthe`, `<0x0A>`)."""

    @abc.abstractmethod
    def kind(self, token_id: int) -> TokenKind:
        """What kind of token the id is, independent of any text."""

    def vocab(self) -> Iterator[VocabEntry]:
        """Every id in order, with its piece, bytes and kind."""
        for i in range(self.vocab_size):
            try:
                yield VocabEntry(i, self.piece(i), self.token_bytes(i), self.kind(i))
            except KeyError:  # holes in a rank file's id space
                continue

    def describe(self) -> str:
        return f"{self.name} ({self.family}, {self.vocab_size:,} ids)"

    # -- capabilities (None or False where the backend has none; backends override) --------------

    #: pieces spell bytes in GPT-2's printable alphabet (`Ġ` for a space), in `piece` and in
    #: `pre_tokenize`'s chunks
    byte_level: bool = False

    @property
    def mergeable_ranks(self) -> Mapping[bytes, int] | None:
        """Byte-level BPE ranks, token bytes -> rank, where each rank is also the token's id and
        the merges follow from the ranks (tiktoken's `mergeable_ranks`); None for other models.

        >>> from tokviz.core.catalog import load  # doctest: +SKIP
        >>> load("cl100k_base").mergeable_ranks[b"hello"]  # doctest: +SKIP
        15339
        """
        return None

    @property
    def split_pattern(self) -> str | None:
        """The regex (`regex` module syntax) that cuts plain text into chunks before the model
        sees it, when that regex is the whole pre-tokenization (tiktoken); None otherwise."""
        return None

    def normalize(self, text: str) -> str | None:
        """`text` after the backend's normalizer (SentencePiece: NFKC where the model says so,
        `▁` for spaces, the dummy prefix); None when the backend does not normalize."""
        return None

    def pre_tokenize(self, text: str) -> list[str] | None:
        """The chunks the library's own pre-tokenizer cuts (normalized) text into, spelled as it
        spells them (byte-level: `Ġworld`); None when there is none beyond `split_pattern`."""
        return None

    @property
    def sentencepiece(self) -> SentencePieceModel | None:
        """The SentencePiece model's piece types, scores and normalizer, when the token ids are
        that model's piece ids; None otherwise."""
        return None

    @property
    def preprocessing(self) -> Preprocessing | None:
        """The text rewrite done before an inner model cuts the text (ChatGLM-6B); None when the
        model is given the text as it is."""
        return None

    def specials_added(self, text: str) -> SpecialsAdded | None:
        """What the library adds around `text`'s ids when asked to add special tokens; None when
        it adds none."""
        return None

    def added_around(self, text: str) -> SpecialsAdded | None:
        """What the model's own tokenizer adds around `text`'s ids by default, so that a count
        with them equals the model's: transformers' `encode` (the `tokenizer.json` post-processor
        or `add_bos_token`), sentencepiece's `add_bos` as Llama and Mistral use it, a GGUF file's
        `add_bos_token` / `add_eos_token`. None when it adds nothing (tiktoken adds nothing).

        `specials_added` is everything a library *can* add; this is what it does add unasked.
        The default is `specials_added`, which is the same for most backends."""
        added = self.specials_added(text)
        return added if added is not None and (added.before or added.after) else None

    def added_tokens(self, text: str) -> tuple[list[Token], list[Token]]:
        """`added_around(text)` as tokens: special tokens with empty spans at the start and at the
        end of `text` (they cover no character), to put before and after `encode`'s tokens."""
        added = self.added_around(text)
        if added is None:
            return [], []
        n_bytes = len(text.encode("utf-8", "surrogatepass"))

        def token(token_id: int, byte_at: int, char_at: int) -> Token:
            return Token(token_id, self.token_bytes(token_id), byte_at, byte_at, char_at, char_at,
                         TokenKind.SPECIAL, self.piece(token_id))

        return ([token(i, 0, 0) for i in added.before],
                [token(i, n_bytes, len(text)) for i in added.after])

    def encode_ordinary_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of each text encoded alone with no special-token parsing (`encode(text)`'s ids
        under the default policy), for many short texts at once: the odd-token scan encodes the
        text of every token. Backends override it with their library's batch encode; this default
        encodes the texts joined by one of the vocabulary's special tokens, parsed only at the
        joins (`encode_trusted`), so each text is cut as a segment of its own, in one call."""
        if not self.special_tokens:
            return [[t.id for t in self.encode(text)] for text in texts]
        joiner = min(self.special_tokens, key=len)
        parts: list[str] = []
        bounds = [0] * (len(texts) + 1)  # where each text starts in the joined one
        spans = []
        pos = 0
        for k, text in enumerate(texts):
            text = sanitize(text)
            bounds[k] = pos
            parts.append(text)
            pos += len(text)
            spans.append((pos, pos + len(joiner)))
            parts.append(joiner)
            pos += len(joiner)
        bounds[len(texts)] = pos
        per_text: list[list[int]] = [[] for _ in texts]
        k = 0
        for token in self.encode_trusted("".join(parts), spans):
            while token.start >= bounds[k + 1]:
                k += 1
            if not (token.kind == TokenKind.SPECIAL and token.end == spans[k][1]):  # not the joiner
                per_text[k].append(token.id)
        return per_text

    def word_continuations(self) -> frozenset[int] | None:
        """The ids of a WordPiece vocabulary that only ever continue a word (`##ing` in BERT's
        `vocab.txt`; `ing` beside `▁ing` in llama.cpp's GGUF spelling): no text alone gives them.
        None for other models."""
        return None

    @property
    def scores_whole_text(self) -> bool:
        """True where the model picks the best-scoring cut of the whole text (unigram Viterbi) and
        an exact tie between two cuts is broken by the rounding of the score summed from the
        text's start: a token can then depend on text arbitrarily far before it, so a long text
        cannot be encoded window by window with the same result (`tokviz.core.stream`)."""
        return False

    @property
    def encode_window(self) -> int | None:
        """The number of characters above which a text is encoded faster window by window
        (`tokviz.core.stream.encode_whole`, the same tokens as one encode), where the library's
        own encode takes more than linear time; None where one call is fastest."""
        return None

    # -- for backends -------------------------------------------------------------------------

    @abc.abstractmethod
    def _lay_out_ordinary(self, text: str, start: int, end: int) -> Laid | None:
        """The tokens of `text[start:end]` with no special-token parsing, as arrays with spans on
        all of `text` (no Token objects); None for no tokens. What every backend cuts with."""

    def _encode_ordinary(self, text: str, start: int, end: int) -> list[Token]:
        """`_lay_out_ordinary` as tokens."""
        laid = self._lay_out_ordinary(text, start, end)
        return laid.to_tokens(self._info_for(laid.ids)) if laid is not None else []

    def _special_token(self, text: str, start: int, end: int, special_id: int) -> Token:
        omap = self._offset_map(text)
        byte_start, byte_end = omap.byte_offset(start), omap.byte_offset(end)
        return Token(
            special_id, omap.data[byte_start:byte_end], byte_start, byte_end, start, end,
            TokenKind.SPECIAL, text[start:end],
        )

    def _offset_map(self, text: str) -> OffsetMap:
        """One OffsetMap per text, shared by the segments the special-token split makes.

        A one-entry cache checked by identity: a worker thread encoding another text replaces the
        tuple atomically, so a reader sees either entry whole.
        """
        cached = self.__dict__.get("_text_map")
        if cached is not None and cached[0] is text:
            return cached[1]  # type: ignore[no-any-return]  # (text, OffsetMap) in __dict__
        omap = OffsetMap(text)
        self._text_map = (text, omap)
        return omap

    def _forget_offset_map(self, text: str) -> None:
        """Drop the cached OffsetMap of `text` once its encode is done: the text and several bytes
        of offsets per byte of it, which every tokenizer kept until its next encode (in the
        tokenizer process, one per pane's vocabulary). Another thread's entry, put there
        meanwhile, may go with it: it is built again, nothing else."""
        cached = self.__dict__.get("_text_map")
        if cached is not None and cached[0] is text:
            self.__dict__.pop("_text_map", None)

    def _info_for(self, ids: Sequence[int]) -> TokenInfo:
        """Bytes, kind and piece per id, computed once per id for the life of the tokenizer."""
        info = self.__dict__.get("_token_info")
        if info is None:
            info = self._token_info = TokenInfo()
        for token_id in set(ids).difference(info.data):
            info.add(token_id, self.token_bytes(token_id), self.kind(token_id), self.piece(token_id))
        return info

    def split_special(
        self, text: str, allowed: AllowedSpecial, disallowed: DisallowedSpecial
    ) -> Iterator[tuple[int, int, int | None]]:
        """Yield `(start, end, special_id or None)` segments, checking the policy as tiktoken does."""
        specials = set(self.special_tokens)
        if allowed == "all":
            allowed = specials
        if disallowed == "all":
            disallowed = specials - set(allowed)
        if disallowed:
            pattern = _special_regex(frozenset(disallowed))
            if match := pattern.search(text):
                raise ValueError(disallowed_special_message(match.group()))
        if not allowed:
            yield 0, len(text), None
            return
        pos = 0
        for match in _special_regex(frozenset(allowed)).finditer(text):
            if match.group() not in self.special_tokens:
                continue
            if match.start() > pos:
                yield pos, match.start(), None
            yield match.start(), match.end(), self.special_tokens[match.group()]
            pos = match.end()
        if pos < len(text) or not text:
            yield pos, len(text), None


    def split_special_at(
        self, text: str, special_spans: Iterable[tuple[int, int]]
    ) -> Iterator[tuple[int, int, int | None]]:
        """`split_special` with the special tokens given by position instead of found by search."""
        pos = 0
        for start, end in special_spans:
            token_id = self.special_tokens.get(text[start:end])
            if start < pos or end > len(text) or token_id is None:
                raise ValueError(
                    f"no special token of {self.name} at characters {start}:{end} "
                    f"({text[start:end]!r}); spans must be in order and each spell one special token"
                )
            if start > pos:
                yield pos, start, None
            yield start, end, token_id
            pos = end
        if pos < len(text) or not text:
            yield pos, len(text), None


def _special_regex(tokens: frozenset[str]) -> regex.Pattern[str]:
    return _special_regex_cached(tokens)


_REGEX_CACHE: dict[frozenset[str], regex.Pattern[str]] = {}


def _special_regex_cached(tokens: frozenset[str]) -> regex.Pattern[str]:
    pattern = _REGEX_CACHE.get(tokens)
    if pattern is None:
        # longest first, so `<|extra_10|>` wins over a hypothetical `<|extra_1`
        alternatives = sorted(tokens, key=len, reverse=True)
        pattern = regex.compile("|".join(regex.escape(t) for t in alternatives))
        _REGEX_CACHE[tokens] = pattern
    return pattern


def disallowed_special_message(token: str) -> str:
    """tiktoken's own wording, so users of every backend get the same three ways out."""
    return (
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        f"If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        f"To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
