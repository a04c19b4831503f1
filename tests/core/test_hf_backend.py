"""Hugging Face `tokenizer.json` backend against the real `tokenizers` library.

DeepSeek-V3's real tokenizer.json (byte-level BPE, 128k + added tokens) for known answers and
properties; small WordPiece and Unigram tokenizers trained here with the real library for the
non-byte-level paths.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from tokviz.core import catalog
from tokviz.core.backends.hf_backend import HFTokenizer
from tokviz.core.tokenizer import TokenizerError
from tokviz.core.tokens import Token, TokenKind, sanitize

from .texts import MULTILINGUAL

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"

SAMPLES = [
    "hello world",
    "안녕하세요, 세계! 한국어 토큰화",
    "我们今天去北京的根据地看看。",
    "日本語の文章をトークンに分割します。",
    "emoji 👩‍💻 and 🧑‍🤝‍🧑 and 👍🏽",
    '{\n    "name": "tokviz",\n    "n": 12345\n}',
    "def f(x):\n    return x ** 2  # square\n",
    "a     b          c",
    "\tindented\t\twith\ttabs",
    "line one\n\nline three\n\n\n",
    "ｈｅｌｌｏ ①②③ ﬁne",
    "<think>reasoning</think> <｜User｜>hi<｜Assistant｜>",  # non-special added tokens
    "",
    " ",
    *MULTILINGUAL.values(),
]

FRAGMENTS = [
    BOS, EOS, "<｜User｜>", "<think>", "<|EOT|>", "<s>", "  ", "\n\n", "\t", "\r\n", "ｈｉ", "ﬁ",
    "👩‍💻", "🧑‍🤝‍🧑", "\ud800", "\udfff", "根", "\x00", "\u200b", "123456",
]
ANY_CHAR = st.characters(exclude_categories=[])  # lone surrogates included
ARBITRARY_TEXT = st.lists(
    st.one_of(st.text(ANY_CHAR, max_size=8), st.sampled_from(FRAGMENTS)), max_size=12
).map("".join)


_REFERENCE: dict[str, tokenizers.Tokenizer] = {}


def reference(encode_special_tokens: bool = False) -> tokenizers.Tokenizer:
    """The library's own DeepSeek-V3 tokenizer, loaded independently of the backend."""
    key = f"deepseek-{encode_special_tokens}"
    if key not in _REFERENCE:
        tk = tokenizers.Tokenizer.from_file(str(catalog.find("deepseek-v3").verified_path()))
        tk.encode_special_tokens = encode_special_tokens
        _REFERENCE[key] = tk
    return _REFERENCE[key]


def assert_covering(text: str, tokens: list[Token]) -> None:
    """Spans are in order, within bounds and cover every character and byte of `text`; each token's
    byte span lies inside its character span."""
    data = text.encode("utf-8")
    if not tokens:
        return
    byte_of = [len(text[:i].encode("utf-8")) for i in range(len(text) + 1)]
    prev_start = prev_end = prev_bstart = prev_bend = 0
    for t in tokens:
        assert 0 <= t.start <= t.end <= len(text), t
        assert 0 <= t.byte_start <= t.byte_end <= len(data), t
        assert t.start >= prev_start and t.end >= prev_end, (t, "out of order")
        assert t.byte_start >= prev_bstart and t.byte_end >= prev_bend, (t, "bytes out of order")
        assert t.start <= prev_end, (t, f"gap before it: characters {prev_end}..{t.start} uncovered")
        assert t.byte_start <= prev_bend, (t, "byte gap before it")
        assert byte_of[t.start] <= t.byte_start and t.byte_end <= byte_of[t.end], t
        prev_start, prev_end, prev_bstart, prev_bend = t.start, t.end, t.byte_start, t.byte_end
    assert tokens[0].start == 0 and tokens[0].byte_start == 0
    assert prev_end == len(text) and prev_bend == len(data)


# -- DeepSeek-V3: known answers ---------------------------------------------------------------


@pytest.mark.parametrize("text", SAMPLES, ids=range(len(SAMPLES)))
def test_ids_equal_the_librarys_own(vocab, text):
    tok = vocab("deepseek-v3")
    tokens = tok.encode(text)
    expected = reference().encode(text, add_special_tokens=False)
    assert [t.id for t in tokens] == expected.ids
    assert [t.piece for t in tokens] == expected.tokens
    assert_covering(text, tokens)
    assert b"".join(t.bytes for t in tokens) == text.encode()  # byte-level: bytes are the text
    assert tok.decode([t.id for t in tokens]) == text


def test_deepseek_vocabulary(vocab):
    tok = vocab("deepseek-v3")
    assert tok.family == "huggingface" and tok.byte_level
    assert tok.vocab_size == 129280
    assert tok.special_tokens[BOS] == 0 and tok.special_tokens[EOS] == 1
    assert "<think>" not in tok.special_tokens  # added but not marked special
    assert tok.kind(0) is TokenKind.SPECIAL and tok.token_bytes(0) == BOS.encode()
    assert tok.kind(128821) is TokenKind.SPECIAL and tok.piece(128821) == "<think>"
    world = tok.encode_ids(" world")[0]
    assert tok.piece(world) == "Ġworld" and tok.token_bytes(world) == b" world"
    with pytest.raises(KeyError):
        tok.piece(10**7)


def test_characters_cut_across_byte_level_tokens(vocab):
    """😀 is cut into ` \\xf0\\x9f\\x98` + `\\x80`: both cover the emoji, each with its own bytes."""
    text = "根 😀"
    tokens = vocab("deepseek-v3").encode(text)
    assert [(t.bytes, t.start, t.end, t.byte_start, t.byte_end, t.kind) for t in tokens] == [
        ("根".encode(), 0, 1, 0, 3, TokenKind.NORMAL),
        (b" \xf0\x9f\x98", 1, 3, 3, 7, TokenKind.FRAGMENT),
        (b"\x80", 2, 3, 7, 8, TokenKind.FRAGMENT),
    ]
    assert [t.id for t in tokens] == reference().encode(text, add_special_tokens=False).ids


def test_zwj_emoji_fragments(vocab):
    text = "👩‍💻 🧑‍🤝‍🧑"
    tokens = vocab("deepseek-v3").encode(text)
    assert any(t.kind is TokenKind.FRAGMENT for t in tokens)
    assert b"".join(t.bytes for t in tokens) == text.encode()
    assert_covering(text, tokens)


# -- properties on arbitrary Unicode ----------------------------------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ARBITRARY_TEXT)
def test_any_text_matches_the_library_and_covers(vocab, text):
    tok = vocab("deepseek-v3")
    tokens = tok.encode(text)  # lone surrogates: replaced with U+FFFD, never a crash
    clean = sanitize(text)
    expected = reference(encode_special_tokens=True).encode(clean, add_special_tokens=False)
    assert [t.id for t in tokens] == expected.ids
    assert_covering(clean, tokens)
    ids = [t.id for t in tokens]
    if reference().decode(expected.ids, skip_special_tokens=False) == clean:
        assert tok.decode(ids) == clean  # round trip wherever the library itself round-trips
    if not any(t.kind is TokenKind.SPECIAL for t in tokens):
        assert b"".join(t.bytes for t in tokens) == clean.encode()


def test_empty_text(vocab):
    assert vocab("deepseek-v3").encode("") == []
    assert vocab("deepseek-v3").decode([]) == ""


def test_a_megabyte(vocab):
    block = "".join(SAMPLES)
    text = block * (1_000_000 // len(block.encode()) + 1)
    text = text[: len(text) * 1_000_000 // len(text.encode())]
    tokens = vocab("deepseek-v3").encode(text)
    assert tokens[0].start == 0 and tokens[-1].end == len(text)
    assert tokens[-1].byte_end == len(text.encode())
    lengths = np.fromiter((len(t.bytes) for t in tokens), dtype=np.int64, count=len(tokens))
    assert int(lengths.sum()) == len(text.encode())
    ends = np.fromiter((t.byte_end for t in tokens), dtype=np.int64, count=len(tokens))
    assert (ends == np.cumsum(lengths)).all()


# -- special-token policy ---------------------------------------------------------------------


def test_special_token_text_is_plain_by_default(vocab):
    tok = vocab("deepseek-v3")
    text = f"{BOS}hello{EOS}"
    tokens = tok.encode(text)
    assert 0 not in [t.id for t in tokens] and 1 not in [t.id for t in tokens]
    assert [t.id for t in tokens] == reference(True).encode(text, add_special_tokens=False).ids
    assert b"".join(t.bytes for t in tokens) == text.encode()
    assert_covering(text, tokens)


def test_special_token_text_is_parsed_when_allowed(vocab):
    tok = vocab("deepseek-v3")
    text = f"{BOS}hello{EOS}"
    tokens = tok.encode(text, allowed_special="all")
    assert [t.id for t in tokens] == reference().encode(text, add_special_tokens=False).ids
    assert tokens[0].id == 0 and tokens[0].kind is TokenKind.SPECIAL and tokens[-1].id == 1
    assert (tokens[0].start, tokens[0].end) == (0, len(BOS))
    assert_covering(text, tokens)
    only_bos = tok.encode(text, allowed_special={BOS})
    assert only_bos[0].id == 0 and 1 not in [t.id for t in only_bos]


def test_disallowed_special_token_raises_tiktokens_error(vocab):
    with pytest.raises(ValueError, match="disallowed special token '<｜begin▁of▁sentence｜>'"):
        vocab("deepseek-v3").encode(f"hi {BOS}", disallowed_special="all")


def test_non_special_added_tokens_are_matched_as_the_library_does(vocab):
    tokens = vocab("deepseek-v3").encode("<think>x</think>")
    assert tokens[0].piece == "<think>" and tokens[0].kind is TokenKind.SPECIAL
    assert tokens[0].bytes == b"<think>"


# -- non-byte-level tokenizers trained here with the real library ------------------------------

CORPUS = [
    "The quick brown fox jumps over the lazy dog",
    "Playing players played plays",
    "tokenization is fun and tokenizers are useful",
] * 50


@pytest.fixture(scope="module")
def wordpiece() -> HFTokenizer:
    tk = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.decoder = decoders.WordPiece()
    tk.train_from_iterator(
        CORPUS, trainers.WordPieceTrainer(vocab_size=120, special_tokens=["[UNK]", "[CLS]", "[SEP]"])
    )
    return HFTokenizer.from_str(tk.to_str(), name="wordpiece")


@pytest.fixture(scope="module")
def unigram() -> HFTokenizer:
    tk = tokenizers.Tokenizer(models.Unigram())
    tk.normalizer = normalizers.NFKC()
    tk.pre_tokenizer = pre_tokenizers.Metaspace()
    tk.decoder = decoders.Metaspace()
    tk.train_from_iterator(
        CORPUS, trainers.UnigramTrainer(vocab_size=80, special_tokens=["<unk>", "<s>"], unk_token="<unk>")
    )
    return HFTokenizer.from_str(tk.to_str(), name="unigram")


def test_wordpiece_bytes_drop_the_continuation_prefix(wordpiece):
    text = "Playing Tokenizers"
    tokens = wordpiece.encode(text)
    assert [t.id for t in tokens] == wordpiece.tk.encode(text, add_special_tokens=False).ids
    assert not wordpiece.byte_level
    for t in tokens:
        assert t.bytes == t.piece.removeprefix("##").encode()
    assert tokens[0].bytes.startswith(b"p") and text[tokens[0].start] == "P"  # lower-cased by the model
    assert_covering(text, tokens)


def test_wordpiece_unknown_and_dropped_spaces(wordpiece):
    text = "fox  根 !"
    tokens = wordpiece.encode(text)
    unknown = [t for t in tokens if t.kind is TokenKind.UNKNOWN]
    assert [t.bytes for t in unknown] == ["根".encode(), b"!"]  # the text each one replaced
    assert all(t.piece == "[UNK]" for t in unknown)
    assert_covering(text, tokens)  # the spaces the pre-tokenizer drops go to the following token


def test_wordpiece_special_text_is_plain_unless_allowed(wordpiece):
    assert 1 not in wordpiece.encode_ids("[CLS] hi")
    assert wordpiece.encode_ids("[CLS] hi", allowed_special="all")[0] == 1
    assert "[UNK]" not in wordpiece.special_tokens


def test_unigram_metaspace_bytes_and_nfkc_spans(unigram):
    text = "the fox ﬁ ｔｈｅ"
    tokens = unigram.encode(text)
    assert [t.id for t in tokens] == unigram.tk.encode(text, add_special_tokens=False).ids
    assert unigram.space_mark == "▁"
    assert tokens[0].piece.startswith("▁") and tokens[0].bytes.startswith(b" ")
    assert_covering(text, tokens)
    last = tokens[-1]
    assert last.bytes == b"e" and text[last.start : last.end] == "ｅ"


@pytest.mark.parametrize("which", ["wordpiece", "unigram"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ARBITRARY_TEXT)
def test_non_byte_level_any_text_covers(request, which, text):
    tok: HFTokenizer = request.getfixturevalue(which)
    tokens = tok.encode(text)
    clean = sanitize(text)
    assert [t.id for t in tokens] == tok.tk.encode(clean, add_special_tokens=False).ids
    assert_covering(clean, tokens)


# -- loading and corrupt files ----------------------------------------------------------------


@pytest.fixture(scope="module")
def deepseek_json() -> bytes:
    return catalog.find("deepseek-v3").verified_path().read_bytes()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(lambda data: data[: len(data) // 2], "invalid JSON", id="truncated"),
        pytest.param(lambda data: b"{not json", "invalid JSON", id="invalid-json"),
        pytest.param(lambda data: b"", "empty", id="empty"),
        pytest.param(lambda data: os.urandom(4096), "", id="random-bytes"),
        pytest.param(lambda data: b"[1, 2, 3]", "not a Hugging Face tokenizer.json", id="json-list"),
        pytest.param(lambda data: b'{"version": "1.0"}', "not a Hugging Face tokenizer.json", id="no-model"),
        pytest.param(
            lambda data: json.dumps({"model": {"type": "Nonsense"}}).encode(), "cannot read it", id="bad-model"
        ),
    ],
)
def test_corrupt_tokenizer_json_is_a_clear_error_naming_the_file(tmp_path, deepseek_json, make, says):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(make(deepseek_json))
    with pytest.raises(TokenizerError) as info:
        HFTokenizer.from_file(path)
    message = str(info.value)
    assert str(path) in message and says in message
    assert "\n" not in message


def test_missing_file_is_a_clear_error(tmp_path):
    path = tmp_path / "absent" / "tokenizer.json"
    with pytest.raises(TokenizerError, match="cannot read") as info:
        HFTokenizer.from_file(path)
    assert str(path) in str(info.value)


def test_truncated_file_through_the_catalog_loader(tmp_path, deepseek_json):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(deepseek_json[:-100])
    with pytest.raises(TokenizerError, match="invalid JSON"):
        catalog.load_path(path)


def test_a_unigram_without_an_unk_piece_is_a_clear_error_as_in_tokenizers(tmp_path):
    """tokenizers loads such a model and raises a bare Exception on a character it has no piece
    for; tokviz loads it too, cuts what it can, and says why it cannot cut the rest."""
    Tokenizer = tokenizers.Tokenizer  # noqa: N806
    path = tmp_path / "tokenizer.json"
    path.write_text(Tokenizer(models.Unigram([("a", -1.0), ("b", -2.0), ("ab", -0.5)], unk_id=None)).to_str())
    tok = HFTokenizer.from_file(path, name="nounk")
    assert tok.encode_ids("ab") == Tokenizer.from_file(str(path)).encode("ab").ids == [2]
    with pytest.raises(Exception, match="unk_id"):
        Tokenizer.from_file(str(path)).encode("abc")
    with pytest.raises(TokenizerError, match=r"nounk: the text has a character this vocabulary has no piece for, "
                                             r"and its model has no unknown-token piece \(unk_id is null\)"):
        tok.encode_ids("abc")
