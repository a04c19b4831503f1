"""SentencePiece backend against the real sentencepiece library and real `.model` files.

Known answers compare our ids with sentencepiece's own `encode`; properties check that spans cover
the original text in order for any Unicode (NFKC models included), and that decode is the library's.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core import catalog
from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer
from tokviz.core.tokenizer import TokenizerError
from tokviz.core.tokens import Token, TokenKind, sanitize

from .texts import MULTILINGUAL

SP_MODELS = ["mistral-7b-v0.1", "mistral-instruct-v3", "botchan-bpe-1k", "botchan-unigram-1k", "kyoto-ja-unigram-8k"]
KNOWN_ANSWER_MODELS = ["mistral-7b-v0.1", "kyoto-ja-unigram-8k", "botchan-unigram-1k", "botchan-bpe-1k"]

SAMPLES = [
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    "안녕하세요, 세계! 한국어 토큰화",
    "我们今天去北京的根据地看看。",
    "日本語の文章をトークンに分割します。カタカナもひらがなも。",
    "emoji 👩‍💻 and 🧑‍🤝‍🧑 and 👍🏽 and 🇰🇷",
    '{\n    "name": "tokviz",\n    "tags": ["a", "b"],\n    "n": 12345\n}',
    "def f(x):\n    if x > 1:\n        return x ** 2  # square\n    return None\n",
    "a     b          c",
    "\tindented\t\twith\ttabs",
    "line one\n\nline three\n\n\n",
    "ｈｅｌｌｏ ｗｏｒｌｄ ①②③ ﬁne ﬂow ㍻ ｶﾀｶﾅ",
    "  leading and trailing spaces  ",
    "",
    "\n",
    " ",
    *MULTILINGUAL.values(),
]

# things worth mixing into arbitrary text: NFKC cases, whitespace runs, special-token text, ZWJ
FRAGMENTS = [
    "ｈｉ", "①", "ﬁ", "㍻", "ｶﾞ", "Å", "e\u0301", "  ", "\n\n", "\t", "\u3000", "<s>", "</s>", "<unk>",
    "👩‍💻", "🧑‍🤝‍🧑", "\ud800", "\udfff", "根", "\x00", "\r\n", "\u200b",
]
ANY_CHAR = st.characters(exclude_categories=[])  # every code point, lone surrogates included
ARBITRARY_TEXT = st.lists(
    st.one_of(st.text(ANY_CHAR, max_size=8), st.sampled_from(FRAGMENTS)), max_size=12
).map("".join)


def native(name: str) -> spm.SentencePieceProcessor:
    """sentencepiece's own processor for a catalog vocabulary: the reference we compare with."""
    return spm.SentencePieceProcessor(model_file=str(catalog.find(name).verified_path()))


_NATIVE: dict[str, spm.SentencePieceProcessor] = {}


def reference(name: str) -> spm.SentencePieceProcessor:
    """`native(name)`, loaded once per session."""
    if name not in _NATIVE:
        _NATIVE[name] = native(name)
    return _NATIVE[name]


def assert_covering(text: str, tokens: list[Token]) -> None:
    """Spans are in order, within bounds and cover every character and byte of `text`; each token's
    byte span lies inside its character span."""
    data = text.encode("utf-8")
    if not tokens:
        return
    byte_of = [len(text[:i].encode("utf-8")) for i in range(len(text) + 1)] if len(text) < 5000 else None
    prev_start = prev_end = prev_bstart = prev_bend = 0
    for t in tokens:
        assert 0 <= t.start <= t.end <= len(text), t
        assert 0 <= t.byte_start <= t.byte_end <= len(data), t
        assert t.start >= prev_start and t.end >= prev_end, (t, "out of order")
        assert t.byte_start >= prev_bstart and t.byte_end >= prev_bend, (t, "bytes out of order")
        assert t.start <= prev_end, (t, f"gap before it: characters {prev_end}..{t.start} uncovered")
        assert t.byte_start <= prev_bend, (t, "byte gap before it")
        if byte_of is not None:
            assert byte_of[t.start] <= t.byte_start and t.byte_end <= byte_of[t.end], t
        prev_start, prev_end, prev_bstart, prev_bend = t.start, t.end, t.byte_start, t.byte_end
    assert tokens[0].start == 0 and tokens[0].byte_start == 0
    assert prev_end == len(text) and prev_bend == len(data)


# -- known answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", KNOWN_ANSWER_MODELS)
@pytest.mark.parametrize("text", SAMPLES, ids=range(len(SAMPLES)))
def test_ids_and_pieces_equal_sentencepiece(vocab, name, text):
    tok = vocab(name)
    sp = reference(name)
    tokens = tok.encode(text)
    assert [t.id for t in tokens] == sp.encode(text)
    assert [t.piece for t in tokens] == [sp.id_to_piece(i) for i in sp.encode(text)]
    assert_covering(text, tokens)
    assert tok.decode([t.id for t in tokens]) == sp.decode(sp.encode(text))


def test_mistral_hello_world(vocab):
    tokens = vocab("mistral-7b-v0.1").encode("hello world")
    assert [(t.id, t.piece, t.bytes, t.start, t.end, t.byte_start, t.byte_end, t.kind) for t in tokens] == [
        (6312, "▁hell", b" hell", 0, 4, 0, 4, TokenKind.NORMAL),
        (28709, "o", b"o", 4, 5, 4, 5, TokenKind.NORMAL),
        (1526, "▁world", b" world", 5, 11, 5, 11, TokenKind.NORMAL),
    ]


@pytest.mark.parametrize("char", ["👩", "💻", "ｈ", "①"])
def test_mistral_byte_fallback_tokens_hold_one_byte_each(vocab, char):
    text = f"x {char} y"
    tokens = vocab("mistral-7b-v0.1").encode(text)
    fallback = [t for t in tokens if t.kind is TokenKind.BYTE_FALLBACK]
    data = char.encode("utf-8")
    assert [t.bytes for t in fallback] == [bytes([b]) for b in data]
    assert [t.piece for t in fallback] == [f"<0x{b:02X}>" for b in data]
    first = len(b"x ")
    assert [(t.byte_start, t.byte_end) for t in fallback] == [(first + k, first + k + 1) for k in range(len(data))]
    assert all((t.start, t.end) == (2, 3) for t in fallback)  # each covers the character it is part of
    assert_covering(text, tokens)


def test_mistral_zwj_emoji_mixes_pieces_and_byte_fallback(vocab):
    text = "👩‍💻 🧑‍🤝‍🧑"
    tokens = vocab("mistral-7b-v0.1").encode(text)
    assert [t.id for t in tokens] == reference("mistral-7b-v0.1").encode(text)
    assert any(t.kind is TokenKind.BYTE_FALLBACK for t in tokens)
    assert b"".join(t.bytes for t in tokens) == b" " + text.encode()  # the dummy prefix, then the text


def test_rare_cjk_falls_back_to_bytes(vocab):
    tokens = vocab("mistral-7b-v0.1").encode("𠮷野家")  # U+20BB7, outside the 32k vocabulary
    fallback = [t for t in tokens if t.kind is TokenKind.BYTE_FALLBACK]
    assert b"".join(t.bytes for t in fallback) == "𠮷".encode()
    assert all(t.start == 0 and t.end == 1 for t in fallback)


def test_vocabulary_kinds_and_bytes(vocab):
    tok = vocab("mistral-7b-v0.1")
    assert tok.family == "sentencepiece" and tok.vocab_size == 32000
    assert tok.kind(0) is TokenKind.UNKNOWN and tok.piece(0) == "<unk>"
    assert tok.kind(1) is TokenKind.SPECIAL and tok.kind(2) is TokenKind.SPECIAL
    assert tok.kind(13) is TokenKind.BYTE_FALLBACK and tok.token_bytes(13) == b"\n"
    assert tok.token_bytes(6312) == b" hell" and tok.kind(6312) is TokenKind.NORMAL
    entries = list(tok.vocab())
    assert len(entries) == 32000
    assert sum(e.kind is TokenKind.BYTE_FALLBACK for e in entries) == 256
    assert tok.special_tokens == {"<s>": 1, "</s>": 2}
    with pytest.raises(KeyError):
        tok.piece(32000)


# -- normalization: spans refer to the original text ------------------------------------------


def test_nfkc_spans_point_at_the_original_characters(vocab):
    text = "ｈｉ there"
    tokens = vocab("kyoto-ja-unigram-8k").encode(text)
    assert [t.id for t in tokens] == reference("kyoto-ja-unigram-8k").encode(text)
    h = next(t for t in tokens if t.piece == "h")
    assert h.bytes == b"h"  # what the model saw
    assert text[h.start : h.end] == "ｈ"  # where it was
    assert (h.byte_start, h.byte_end) == (0, 3)
    assert_covering(text, tokens)


def test_ligature_cut_into_two_pieces_is_covered_by_both(vocab):
    tokens = vocab("kyoto-ja-unigram-8k").encode("ﬁne")  # NFKC: f + in + e
    f, fin = (t for t in tokens if t.piece in ("f", "in"))
    assert f.start == fin.start == 0 and "ﬁ" in "ﬁne"[f.start : f.end]
    assert_covering("ﬁne", tokens)


def test_circled_digits_become_one_piece_spanning_both(vocab):
    tokens = vocab("kyoto-ja-unigram-8k").encode("①②")
    assert [(t.piece, t.start, t.end, t.bytes) for t in tokens] == [("▁12", 0, 2, b" 12")]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("botchan-bpe-1k", "a  b\n"),  # second space and the newline are dropped
        ("botchan-bpe-1k", "\t\tx"),
        ("botchan-unigram-1k", "  lead  "),
        ("kyoto-ja-unigram-8k", "  lead  "),
        ("botchan-unigram-1k", "one   two\u3000three"),
    ],
)
def test_characters_the_normalizer_drops_are_attributed(vocab, name, text):
    tokens = vocab(name).encode(text)
    assert [t.id for t in tokens] == reference(name).encode(text)
    assert_covering(text, tokens)


def test_dropped_leading_and_trailing_runs_go_to_first_and_last_token(vocab):
    tokens = vocab("botchan-unigram-1k").encode("  lead  ")
    assert tokens[0].start == 0 and tokens[-1].end == len("  lead  ")
    tokens = vocab("botchan-bpe-1k").encode("a  b\n")
    assert tokens[-1].piece == "▁b" and (tokens[-1].start, tokens[-1].end) == (1, 5)


@pytest.mark.parametrize("text", [" ", "\u3000", "   \t  "])
def test_text_that_normalizes_to_nothing_gives_no_tokens(vocab, text):
    assert reference("botchan-bpe-1k").encode(text) == []
    assert vocab("botchan-bpe-1k").encode(text) == []


def test_unknown_pieces_carry_the_original_text(vocab):
    text = "x 根 😀"
    tokens = vocab("botchan-unigram-1k").encode(text)
    unknown = [t for t in tokens if t.kind is TokenKind.UNKNOWN]
    assert [t.id for t in unknown] == [0, 0]
    assert [t.bytes for t in unknown] == ["根".encode(), "😀".encode()]
    assert [text[t.start : t.end] for t in unknown] == ["根", "😀"]
    assert all(t.piece == "<unk>" for t in unknown)


def test_mapped_and_fast_layouts_agree_on_identity_models(vocab):
    """Mistral (identity normalizer) takes the running-offset path; the offset-mapping path must
    give the same tokens."""
    fast = vocab("mistral-7b-v0.1")
    assert fast._identity_normalizer
    mapped = SentencePieceTokenizer(reference("mistral-7b-v0.1"), name="mapped")
    mapped.model_info = None  # forces sentencepiece's offset mapping
    for text in SAMPLES + ["x\n", "  ", "𠮷", "a\ud800b"]:
        assert fast.encode(text) == mapped.encode(text), text


# -- properties on arbitrary Unicode ----------------------------------------------------------


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "kyoto-ja-unigram-8k", "botchan-unigram-1k", "botchan-bpe-1k"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ARBITRARY_TEXT)
def test_any_text_covers_and_decodes_like_sentencepiece(vocab, name, text):
    tok = vocab(name)
    sp = reference(name)
    tokens = tok.encode(text)  # lone surrogates: replaced with U+FFFD, never a crash
    clean = sanitize(text)
    assert [t.id for t in tokens] == sp.encode(clean)
    assert_covering(clean, tokens)
    assert tok.decode([t.id for t in tokens]) == sp.decode(sp.encode(clean))
    for t in tokens:
        if t.kind is TokenKind.BYTE_FALLBACK:
            assert len(t.bytes) == 1
        elif t.kind is TokenKind.UNKNOWN:  # the text it replaced, without dropped runs given to it
            assert t.bytes and t.bytes in clean.encode()[t.byte_start : t.byte_end]


def test_lone_surrogates_are_replaced(vocab):
    tokens = vocab("mistral-7b-v0.1").encode("a\ud800b")
    assert b"".join(t.bytes for t in tokens) == " a\ufffdb".encode()


def test_empty_text(vocab):
    for name in SP_MODELS:
        assert vocab(name).encode("") == []
        assert vocab(name).decode([]) == ""


def mixed_megabyte() -> str:
    block = "".join(SAMPLES) + "ｈｉ ﬁne ① 𠮷 "
    text = block * (1_000_000 // len(block.encode()) + 1)
    return text[: len(text) * 1_000_000 // len(text.encode())]


@pytest.mark.parametrize("name", ["mistral-7b-v0.1", "kyoto-ja-unigram-8k"])
def test_a_megabyte(vocab, name):
    text = mixed_megabyte()
    tok = vocab(name)
    tokens = tok.encode(text)
    assert [t.id for t in tokens] == reference(name).encode(text)
    assert tokens[0].start == 0 and tokens[-1].end == len(text)
    assert tokens[-1].byte_end == len(text.encode())
    starts = np.fromiter((t.start for t in tokens), dtype=np.int64, count=len(tokens))
    ends = np.fromiter((t.end for t in tokens), dtype=np.int64, count=len(tokens))
    assert (np.diff(starts) >= 0).all() and (np.diff(ends) >= 0).all()
    assert (starts[1:] <= ends[:-1]).all()  # no gaps


# -- special-token policy ---------------------------------------------------------------------


def test_control_token_text_is_plain_by_default(vocab):
    tok = vocab("mistral-7b-v0.1")
    text = "<s>hello</s>"
    tokens = tok.encode(text)
    assert 1 not in [t.id for t in tokens] and 2 not in [t.id for t in tokens]
    assert [t.id for t in tokens] == reference("mistral-7b-v0.1").encode(text)
    assert_covering(text, tokens)


def test_control_token_text_is_parsed_when_allowed(vocab):
    tok = vocab("mistral-7b-v0.1")
    tokens = tok.encode("<s>hello</s>", allowed_special="all")
    assert tokens[0].id == 1 and tokens[-1].id == 2
    assert tokens[0].kind is TokenKind.SPECIAL and (tokens[0].start, tokens[0].end) == (0, 3)
    assert [t.id for t in tokens[1:-1]] == reference("mistral-7b-v0.1").encode("hello")
    assert_covering("<s>hello</s>", tokens)
    only_bos = tok.encode("<s>hello</s>", allowed_special={"<s>"})
    assert only_bos[0].id == 1 and 2 not in [t.id for t in only_bos]


def test_disallowed_control_token_raises_tiktokens_error(vocab):
    with pytest.raises(ValueError, match=r"disallowed special token '<s>'"):
        vocab("mistral-7b-v0.1").encode("hi <s>", disallowed_special="all")
    assert vocab("mistral-7b-v0.1").encode("hi", disallowed_special="all")


def test_instruct_control_pieces_are_special_tokens(vocab):
    tok = vocab("mistral-instruct-v3")
    assert tok.special_tokens["[INST]"] == 3 and "<unk>" not in tok.special_tokens
    tokens = tok.encode("[INST] hi [/INST]", allowed_special="all")
    assert [tokens[0].id, tokens[-1].id] == [3, 4]
    assert 3 not in [t.id for t in tok.encode("[INST] hi [/INST]")]


# -- loading and corrupt files ----------------------------------------------------------------


def test_from_proto_and_from_processor(vocab):
    path = catalog.find("botchan-bpe-1k").verified_path()
    a = SentencePieceTokenizer.from_proto(path.read_bytes(), name="botchan")
    b = SentencePieceTokenizer.from_processor(spm.SentencePieceProcessor(model_file=str(path)), name="b")
    text = "It was a fine day in Botchan's town."
    assert a.encode_ids(text) == b.encode_ids(text) == vocab("botchan-bpe-1k").encode_ids(text)
    assert a.name == "botchan" and a.describe().startswith("botchan (sentencepiece")


def test_user_defined_symbols_are_special(tmp_path):
    """A model trained here with a user-defined symbol: sentencepiece always extracts it."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the cat sat on the mat number {i} <|user|> said hi" for i in range(300)))
    prefix = tmp_path / "m"
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(prefix), vocab_size=40, user_defined_symbols=["<|user|>"],
        minloglevel=2,
    )
    tok = SentencePieceTokenizer.from_file(f"{prefix}.model")
    uid = tok.special_tokens["<|user|>"]
    assert tok.kind(uid) is TokenKind.SPECIAL
    tokens = tok.encode("hi <|user|> there")
    assert uid in [t.id for t in tokens]
    assert_covering("hi <|user|> there", tokens)
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode("hi <|user|>", disallowed_special="all")


@pytest.fixture
def model_bytes() -> bytes:
    return catalog.find("mistral-7b-v0.1").verified_path().read_bytes()


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="truncated-half"),
        pytest.param(lambda data: data[:1000], id="truncated-head"),
        pytest.param(lambda data: os.urandom(4096), id="random-bytes"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: b'{"model": {}}', id="json"),
        pytest.param(lambda data: b"hello world\n" * 20, id="text"),
    ],
)
def test_corrupt_model_is_a_clear_error_naming_the_file(tmp_path, model_bytes, make):
    path = tmp_path / "broken.model"
    path.write_bytes(make(model_bytes))
    with pytest.raises(TokenizerError) as info:
        SentencePieceTokenizer.from_file(path)
    message = str(info.value)
    assert str(path) in message
    assert "download it again" in message
    assert "\n" not in message


def test_truncated_model_through_the_catalog_loader(tmp_path, model_bytes):
    path = tmp_path / "tokenizer.model"
    path.write_bytes(model_bytes[:-5000])
    with pytest.raises(TokenizerError, match=str(path)):
        catalog.load_path(path)


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_unreadable_path_is_a_clear_error(tmp_path, kind):
    path = tmp_path / "nope.model"
    if kind == "folder":
        path.mkdir()
    with pytest.raises(TokenizerError, match="cannot read") as info:
        SentencePieceTokenizer.from_file(path)
    assert str(path) in str(info.value)


def test_from_file_default_name_is_the_stem():
    path = catalog.find("botchan-unigram-1k").verified_path()
    assert SentencePieceTokenizer.from_file(path).name == Path(path).stem
