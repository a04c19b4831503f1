"""The stages a text goes through in a tokenizer, for the pipeline view.

`pipeline(tokenizer, text)` returns a list of `Stage`s, each a whole text (`Stage.text`) or a list of
readable items (`Stage.items`: chunks, pieces) or ids, with a note saying what happened there:

* tiktoken: no normalization; special tokens split off as the policy says; the split regex's chunks;
  the tokens; no special tokens added; ids.
* SentencePiece: the normalizer's output (`Tokenizer.normalize`: NFKC where the model says so, `▁` for
  spaces, the dummy prefix); the words `▁` starts (SentencePiece has no pre-tokenizer: a view);
  the pieces; BOS/EOS as the model defines them, added only when asked (`add_bos`, `add_eos`); ids.
* Hugging Face `tokenizer.json`: the normalizer's output; `pre_tokenize_str` chunks; the pieces;
  what the post-processor adds (`add_special_tokens=True`); ids.
* ChatGLM-6B: its preprocessing steps (lower-casing, `<n>`, `<|tab|>`, `<|blank_n|>`), then the
  SentencePiece stages, then `[gMASK]` `<sop>` appended; ids.

The final ids stage always equals what the tokenizer's `encode` returns (plus BOS/EOS when asked).
Views show the stages as they come and never branch on the backend; this module chooses the stages
from the tokenizer's capabilities (`preprocessing`, `split_pattern`, `sentencepiece`, `normalize`,
`pre_tokenize`, `specials_added`), never from its type.

This module does not encode anything itself beyond asking the libraries for their intermediate
results, and it does not replay merges (`tokviz.analysis.replay` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tokviz.core.tokenizer import (
    AllowedSpecial,
    DisallowedSpecial,
    Preprocessing,
    SentencePieceModel,
    SpecialsAdded,
    Tokenizer,
)
from tokviz.core.tokens import Token, display_text, sanitize

StageName = Literal["preprocess", "normalization", "pre-tokenization", "model", "special tokens", "ids"]
SPACE_MARK = "\u2581"


@dataclass(frozen=True)
class Stage:
    """One stage: `name` is its role, `title` what a view shows as its heading."""

    name: StageName
    title: str
    text: str | None = None
    items: tuple[str, ...] = ()
    ids: tuple[int, ...] = ()
    note: str = ""


def pipeline(
    tokenizer: Tokenizer,
    text: str,
    *,
    allowed_special: AllowedSpecial = frozenset(),
    disallowed_special: DisallowedSpecial = (),
    add_bos: bool = False,
    add_eos: bool = False,
) -> list[Stage]:
    """The stages `text` goes through in `tokenizer`.

    >>> [s.name for s in pipeline(load("cl100k_base"), "hello world")]  # doctest: +SKIP
    ['normalization', 'pre-tokenization', 'model', 'special tokens', 'ids']
    """
    text = sanitize(text)
    policy: dict[str, Any] = {"allowed_special": allowed_special, "disallowed_special": disallowed_special}
    tokens = tokenizer.encode(text, **policy)
    if (prep := tokenizer.preprocessing) is not None:
        return _preprocessed_stages(tokenizer, prep, text, tokens)
    if (pattern := tokenizer.split_pattern) is not None:
        return _split_regex_stages(tokenizer, pattern, text, tokens, policy)
    if (model := tokenizer.sentencepiece) is not None:
        return _sentencepiece_stages(tokenizer, model, text, tokens, policy, add_bos=add_bos, add_eos=add_eos)
    return _library_stages(tokenizer, text, tokens)


def _model_stage(tokens: Sequence[Token], note: str = "") -> Stage:
    pieces, ids = tuple(t.piece for t in tokens), tuple(t.id for t in tokens)
    return Stage("model", "Model pieces", items=pieces, ids=ids, note=note)


def _ids_stage(ids: Sequence[int], note: str = "") -> Stage:
    return Stage("ids", "Final ids", ids=tuple(ids), note=note)


def _segments(tokenizer: Tokenizer, text: str, policy: dict) -> list[tuple[str, bool]]:
    """`(text, is_special)` segments after the special-token split the policy asks for."""
    split = tokenizer.split_special(text, policy["allowed_special"], policy["disallowed_special"])
    return [(text[a:b], special is not None) for a, b, special in split]


# -- tiktoken -------------------------------------------------------------------------------------


def _split_regex_stages(
    tokenizer: Tokenizer, pattern: str, text: str, tokens: list[Token], policy: dict
) -> list[Stage]:
    from tokviz.analysis.replay import split_chunks

    chunks: list[str] = []
    for segment, special in _segments(tokenizer, text, policy):
        if special:
            chunks.append(segment)
        else:
            chunks.extend(display_text(segment[a:b]) for a, b in split_chunks(pattern, segment))
    shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
    return [
        Stage(
            "normalization", "Normalization", text=text,
            note="none: tiktoken works on the text's UTF-8 bytes as typed",
        ),
        Stage(
            "pre-tokenization", "Pre-tokenization (split regex)", items=tuple(chunks),
            note=f"special tokens are matched first as the policy says; the rest is cut by {shown}",
        ),
        _model_stage(tokens, "byte-level BPE merges inside each chunk (see the merge replay)"),
        Stage(
            "special tokens", "Special tokens added",
            note="none: tiktoken adds no BOS/EOS (chat formats add their own)",
        ),
        _ids_stage([t.id for t in tokens]),
    ]


# -- SentencePiece --------------------------------------------------------------------------------


def _normalize(tokenizer: Tokenizer, text: str) -> str:
    normalized = tokenizer.normalize(text)
    return text if normalized is None else normalized


def _normalized(tokenizer: Tokenizer, text: str, policy: dict) -> str:
    return "".join(
        segment if special else _normalize(tokenizer, segment)
        for segment, special in _segments(tokenizer, text, policy)
    )


def words(normalized: str) -> list[str]:
    """Split normalized text before each run of `▁` that follows a non-`▁` (the words a view shows).

    >>> words("▁hello▁▁world")
    ['▁hello', '▁▁world']
    """
    out: list[str] = []
    for k, c in enumerate(normalized):
        if not out or (c == SPACE_MARK and normalized[k - 1] != SPACE_MARK):
            out.append(c)
        else:
            out[-1] += c
    return out


def _normalizer_note(model: SentencePieceModel | None) -> str:
    name = model.normalizer_name if model is not None and model.normalizer_name else "the model's"
    extra = "" if model is None or not model.remove_extra_whitespaces else ", extra spaces removed"
    return f"normalizer {name}{extra}; spaces become ▁ and a ▁ dummy prefix starts the text"


def _sentencepiece_stages(
    tokenizer: Tokenizer,
    model: SentencePieceModel,
    text: str,
    tokens: list[Token],
    policy: dict,
    *,
    add_bos: bool,
    add_eos: bool,
) -> list[Stage]:
    normalized = _normalized(tokenizer, text, policy)
    ids = [t.id for t in tokens]
    added: list[str] = []
    added_ids: list[int] = []
    defined = []
    bos_eos = tokenizer.specials_added(text) or SpecialsAdded()
    for flag, piece_ids, where in ((add_bos, bos_eos.before, "BOS"), (add_eos, bos_eos.after, "EOS")):
        for piece_id in piece_ids:
            defined.append(f"{where} {tokenizer.piece(piece_id)} (id {piece_id})")
            if flag:
                added.append(tokenizer.piece(piece_id))
                added_ids.append(piece_id)
                ids = [piece_id, *ids] if where == "BOS" else [*ids, piece_id]
    note = (
        f"the model defines {', '.join(defined)}; sentencepiece adds them only when asked "
        f"(transformers' Llama/Mistral tokenizers add the BOS)" if defined else "the model defines no BOS/EOS"
    )
    return [
        Stage("normalization", "Normalization", text=normalized, note=_normalizer_note(model)),
        Stage(
            "pre-tokenization", "Words (▁ marks)", items=tuple(words(normalized)),
            note="SentencePiece has no pre-tokenizer: this is where ▁ starts a word; the model cuts the "
            "whole normalized text, user-defined symbols whole",
        ),
        _model_stage(tokens, "pieces as the vocabulary spells them (<0xNN>: byte fallback)"),
        Stage("special tokens", "Special tokens added", items=tuple(added), ids=tuple(added_ids), note=note),
        _ids_stage(ids),
    ]


# -- a library's own stages (Hugging Face tokenizer.json) ----------------------------------------


def _library_stages(tokenizer: Tokenizer, text: str, tokens: list[Token]) -> list[Stage]:
    normalized = tokenizer.normalize(text)
    shown = text if normalized is None else normalized
    chunks: tuple[str, ...] = (shown,)
    pre_note = "no pre-tokenizer: the model sees the whole text"
    pieces = tokenizer.pre_tokenize(shown)
    if pieces is not None:
        if tokenizer.byte_level:
            pieces = [display_text(_from_byte_level(p)) for p in pieces]
        chunks = tuple(pieces)
        pre_note = "the pre-tokenizer's chunks" + (" (byte-level pieces shown as text)" if tokenizer.byte_level else "")
    specials = tokenizer.specials_added(text)
    added = [*specials.before, *specials.after] if specials is not None else []
    return [
        Stage("normalization", "Normalization", text=shown,
              note="the normalizer's output" if normalized is not None else "none"),
        Stage("pre-tokenization", "Pre-tokenization", items=chunks, note=pre_note),
        _model_stage(tokens),
        Stage(
            "special tokens", "Special tokens added",
            items=tuple(tokenizer.piece(i) for i in added), ids=tuple(added),
            note="what the library adds when asked to (a tokenizer.json's post-processor with add_special_tokens=True, "
            "a GGUF's add_bos_token / add_eos_token); tokviz's panes show the text's own tokens"
            if specials is not None else "none: the tokenizer adds no special tokens",
        ),
        _ids_stage([t.id for t in tokens]),
    ]


def _from_byte_level(piece: str) -> bytes:
    from tokviz.core.backends.tiktoken_backend import BYTE_LEVEL_INVERSE

    if all(c in BYTE_LEVEL_INVERSE for c in piece):
        return bytes(BYTE_LEVEL_INVERSE[c] for c in piece)
    return piece.encode("utf-8")


# -- a tokenizer that rewrites the text first (the ChatGLM-6B profile) -----------------------------


def _preprocessed_stages(tokenizer: Tokenizer, prep: Preprocessing, text: str, tokens: list[Token]) -> list[Stage]:
    steps = [
        Stage("preprocess", step.name.capitalize(), text=step.text, note=step.note)
        for step in prep.steps(text)
    ]
    normalized = _normalize(prep.inner, prep.apply(text))
    appended = tokenizer.added_tokens(text)[1]
    return [
        *steps,
        Stage("normalization", "Normalization", text=normalized, note=_normalizer_note(prep.inner.sentencepiece)),
        Stage("pre-tokenization", "Words (▁ marks)", items=tuple(words(normalized)),
              note="SentencePiece has no pre-tokenizer: <n>, <|tab|>, <|blank_n|> are cut whole"),
        _model_stage(tokens, "sentencepiece's pieces of the preprocessed text"),
        Stage(
            "special tokens", "Special tokens added", items=tuple(t.piece for t in appended),
            ids=tuple(t.id for t in appended),
            note="[gMASK] <sop> end an input; a training target is followed by <eop> (preprocess_example)",
        ),
        _ids_stage([t.id for t in (*tokens, *appended)]),
    ]
