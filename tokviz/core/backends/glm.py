"""ChatGLM2-6B, ChatGLM3-6B and GLM-4 as THUDM's `tokenization_chatglm.py` builds them, and the
loader that tells a ChatGLM snapshot's generation from its files.

The three differ from ChatGLM-6B (`chatglm.py`) and from each other:

* **ChatGLM2 / ChatGLM3**: a SentencePiece `tokenizer.model`, the text given to it as typed (no
  `<n>` or blank rewrite), and special tokens that are *not* pieces of the model: `SPTokenizer`
  numbers them from the model's size on, `[MASK] [gMASK] [sMASK] sop eop`, then for ChatGLM3 the
  roles `<|system|> <|user|> <|assistant|> <|observation|>`. `encode` puts `[gMASK] sop` before
  the text's ids (`get_prefix_tokens`); the role tokens are text unless asked for.
* **GLM-4** (`glm-4-9b-chat`): `tokenizer.model` is a tiktoken rank file; the split pattern and
  fourteen special tokens, numbered from the number of ranks on, are written in its
  `tokenization_chatglm.py`; `encode` also puts `[gMASK] <sop>` first.

Which one a snapshot holds is read from its files, never by running its code: `ice_text.model` is
ChatGLM-6B, a rank file GLM-4, a SentencePiece model ChatGLM2 or 3, told apart by the role tokens
its `tokenization_chatglm.py` spells (read as text), else by its name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer
from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer, read_rank_file
from tokviz.core.layout import Laid
from tokviz.core.tokenizer import SentencePieceModel, SpecialsAdded, Tokenizer, TokenizerError
from tokviz.core.tokens import TokenKind

#: SPTokenizer's special tokens after the model's pieces (ChatGLM2), in id order
CHATGLM2_SPECIALS = ("[MASK]", "[gMASK]", "[sMASK]", "sop", "eop")
#: the role tokens ChatGLM3 adds after them
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>", "<|observation|>")
#: GLM-4's split pattern (`pat_str` of its `ChatGLM4Tokenizer`)
GLM4_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: GLM-4's special tokens, numbered from the number of ranks on
GLM4_SPECIALS = (
    "<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
    "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>",
    "<|end_of_video|>",
)
CHATGLM_CLASSES = ("ChatGLMTokenizer", "ChatGLM4Tokenizer")


class ChatGLM2Tokenizer(Tokenizer):
    """ChatGLM2/3's `SPTokenizer`: a SentencePiece model plus special tokens numbered after it.

    Ordinary text is the model's own cut (ids below its size are its ids); `added_around` is the
    `[gMASK] sop` transformers' `encode` puts first.
    """

    family = "sentencepiece"

    def __init__(self, base: SentencePieceTokenizer, *, specials: Sequence[str], name: str | None = None) -> None:
        self.base = base
        self.name = name or base.name
        self.profile = "chatglm3" if ROLE_TOKENS[0] in specials else "chatglm2"
        first = base.vocab_size
        self._extra = {token: first + i for i, token in enumerate(specials)}
        self._extra_pieces = {i: token for token, i in self._extra.items()}
        # the model's own control pieces (<unk> <s> </s>) stay special tokens too
        self.special_tokens = {**base.special_tokens, **self._extra}

    @property
    def vocab_size(self) -> int:
        return self.base.vocab_size + len(self._extra)

    def _extra_piece(self, token_id: int) -> str | None:
        if token_id >= self.base.vocab_size and token_id not in self._extra_pieces:
            raise KeyError(f"id {token_id} is outside {self.name}'s vocabulary (0..{self.vocab_size - 1})")
        return self._extra_pieces.get(token_id)

    def piece(self, token_id: int) -> str:
        extra = self._extra_piece(token_id)
        return extra if extra is not None else self.base.piece(token_id)

    def token_bytes(self, token_id: int) -> bytes:
        extra = self._extra_piece(token_id)
        return extra.encode("utf-8") if extra is not None else self.base.token_bytes(token_id)

    def kind(self, token_id: int) -> TokenKind:
        return TokenKind.SPECIAL if self._extra_piece(token_id) is not None else self.base.kind(token_id)

    def decode(self, ids: Sequence[int]) -> str:
        """`ChatGLMTokenizer.decode` with special tokens skipped: the model's decode of its ids."""
        return self.base.decode([i for i in ids if i < self.base.vocab_size])

    def specials_added(self, text: str) -> SpecialsAdded:
        return SpecialsAdded(before=(self._extra["[gMASK]"], self._extra["sop"]))

    def added_around(self, text: str) -> SpecialsAdded:
        return self.specials_added(text)

    @property
    def sentencepiece(self) -> SentencePieceModel | None:
        return self.base.sentencepiece

    def normalize(self, text: str) -> str | None:
        return self.base.normalize(text)

    @property
    def scores_whole_text(self) -> bool:
        return self.base.scores_whole_text

    @property
    def encode_window(self) -> int | None:
        return self.base.encode_window

    def word_continuations(self) -> frozenset[int] | None:
        return self.base.word_continuations()

    def _lay_out_ordinary(self, text: str, start: int, end: int) -> Laid | None:
        return self.base._lay_out_ordinary(text, start, end)  # noqa: SLF001  # the same ids below the model's size

    def describe(self) -> str:
        return f"{self.name} ({self.profile}: sentencepiece, {self.vocab_size:,} ids)"


class GLM4Tokenizer(TiktokenTokenizer):
    """GLM-4's `ChatGLM4Tokenizer`: tiktoken ranks, its pattern and specials, `[gMASK] <sop>` first."""

    profile = "glm-4"

    def describe(self) -> str:
        return f"{self.name} (GLM-4: tiktoken, {self.vocab_size:,} ids)"

    def specials_added(self, text: str) -> SpecialsAdded:
        return SpecialsAdded(before=(self.special_tokens["[gMASK]"], self.special_tokens["<sop>"]))

    def added_around(self, text: str) -> SpecialsAdded:
        return self.specials_added(text)


# -- loading --------------------------------------------------------------------------------------


def tokenizer_config(folder: Path) -> dict[str, Any]:
    """A snapshot's `tokenizer_config.json`, or {} when there is none (a bad one is an error)."""
    path = folder / "tokenizer_config.json"
    if not path.is_file():
        return {}
    try:
        config = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise TokenizerError(f"{path}: not a readable tokenizer_config.json ({e})") from e
    return config if isinstance(config, dict) else {}


def is_chatglm_config(config: dict[str, Any]) -> bool:
    """The config names THUDM's `tokenization_chatglm` tokenizer (class or `auto_map`)."""
    if config.get("tokenizer_class") in CHATGLM_CLASSES:
        return True
    auto = config.get("auto_map", {})
    names = auto.get("AutoTokenizer", []) if isinstance(auto, dict) else []
    names = [names] if isinstance(names, str) else names
    return any(isinstance(n, str) and n.rsplit(".", 1)[-1] in CHATGLM_CLASSES for n in names)


def vocab_file(folder: Path) -> Path | None:
    """The vocabulary file of a ChatGLM snapshot: `ice_text.model` (ChatGLM-6B), else `tokenizer.model`."""
    for name in ("ice_text.model", "tokenizer.model"):
        if (folder / name).is_file():
            return folder / name
    return None


def chatglm3_roles(folder: Path, name: str) -> tuple[str, ...]:
    """The role tokens the snapshot's `tokenization_chatglm.py` spells, read as text (never run);
    without that file, all four for a ChatGLM3 name, none otherwise."""
    source_file = folder / "tokenization_chatglm.py"
    try:
        source = source_file.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ROLE_TOKENS if "chatglm3" in name.lower() else ()
    return tuple(r for r in ROLE_TOKENS if f'"{r}"' in source or f"'{r}'" in source)


def load_snapshot(folder: str | os.PathLike[str], *, name: str | None = None) -> Tokenizer:
    """The ChatGLM tokenizer of a model folder whose `tokenizer_config.json` names ChatGLM's."""
    from tokviz.core.backends.chatglm import ChatGLMTokenizer

    folder = Path(folder)
    name = name or folder.name
    config = tokenizer_config(folder)
    file = vocab_file(folder)
    if file is None:
        raise TokenizerError(f"{folder}: a ChatGLM tokenizer without its ice_text.model or tokenizer.model")
    if file.name == "ice_text.model":
        # the original class's defaults where the config is silent
        return ChatGLMTokenizer.from_file(
            file, name=name, do_lower_case=bool(config.get("do_lower_case", False)),
            remove_space=bool(config.get("remove_space", False)),
            num_image_tokens=int(config.get("num_image_tokens", 20000)),
        )
    from tokviz.core.backends.tiktoken_backend import looks_like_rank_file

    if looks_like_rank_file(file):
        return load_glm4(file, name=name)
    base = SentencePieceTokenizer.from_file(file, name=name)
    return ChatGLM2Tokenizer(base, specials=[*CHATGLM2_SPECIALS, *chatglm3_roles(folder, name)], name=name)


def load_glm4(path: str | os.PathLike[str], *, name: str | None = None) -> GLM4Tokenizer:
    """GLM-4's rank file (its `tokenizer.model`) with its pattern and special tokens."""
    ranks = read_rank_file(path)
    specials = {token: len(ranks) + i for i, token in enumerate(GLM4_SPECIALS)}
    try:
        return GLM4Tokenizer(name or Path(path).stem, ranks, pattern=GLM4_PATTERN, special_tokens=specials)
    except TokenizerError as e:
        raise TokenizerError(f"{path}: {e}") from None
