"""Cases from sentencepiece's own Python tests (python/test/sentencepiece_test.py: its test_model
and test_ja_model, round trips, user-defined symbols) and the normalizer options a model can carry
(byte fallback, the unknown piece, `▁` for spaces, `add_dummy_prefix`, `remove_extra_whitespaces`),
through tokviz's SentencePiece backend and compared with sentencepiece itself."""

from __future__ import annotations

import io
from importlib import resources

import pytest
import sentencepiece as spm

from tests.peers.cli import encode_json
from tokviz.core import catalog
from tokviz.core.backends.sentencepiece_backend import SentencePieceTokenizer
from tokviz.core.tokens import TokenKind


def native(name: str) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_file=str(catalog.find(name).verified_path()))


def test_load_the_test_model(vocab):
    # test_load: 1000 pieces, <unk> <s> </s> at 0 1 2, every piece its own id
    tok, sp = vocab("botchan-unigram-1k"), native("botchan-unigram-1k")
    assert tok.vocab_size == sp.get_piece_size() == 1000
    assert [tok.piece(i) for i in range(3)] == ["<unk>", "<s>", "</s>"]
    assert [tok.kind(i) for i in range(3)] == [TokenKind.UNKNOWN, TokenKind.SPECIAL, TokenKind.SPECIAL]
    assert all(tok.piece(i) == sp.id_to_piece(i) for i in range(1000))
    assert tok.sentencepiece.unk_id == sp.unk_id() == 0


@pytest.mark.parametrize(("name", "size", "text"), [
    ("botchan-unigram-1k", 1000, "I saw a girl with a telescope."),
    ("kyoto-ja-unigram-8k", 8000, "清水寺は京都にある。"),
    ("botchan-bpe-1k", 1000, "I saw a girl with a telescope."),
])
def test_roundtrip(vocab, name, size, text):
    # test_roundtrip / test_ja_roundtrip: EncodeAsIds, EncodeAsPieces, DecodeIds
    tok, sp = vocab(name), native(name)
    tokens = tok.encode(text)
    assert tok.vocab_size == size
    assert [t.id for t in tokens] == sp.encode(text)
    assert [t.piece for t in tokens] == sp.encode(text, out_type=str)
    assert tok.decode([t.id for t in tokens]) == sp.decode(sp.encode(text)) == text


def test_decode_bytes(vocab):
    # test_decode_bytes: both texts decode as their bytes
    tok, sp = vocab("kyoto-ja-unigram-8k"), native("kyoto-ja-unigram-8k")
    for text in ["Hello world", "清水寺は京都にある。"]:
        ids = sp.encode(text)
        assert tok.encode_ids(text) == ids
        assert tok.decode(ids).encode() == sp.decode(ids, out_type=bytes)


def test_the_unknown_piece_stands_for_the_text_it_replaced(vocab, capsys):
    tok, sp = vocab("botchan-unigram-1k"), native("botchan-unigram-1k")
    text = "a 🤗 b"
    tokens = tok.encode(text)
    assert [t.id for t in tokens] == sp.encode(text) and 0 in sp.encode(text)
    unk = next(t for t in tokens if t.id == 0)
    assert unk.kind is TokenKind.UNKNOWN and unk.bytes == "🤗".encode() and text[unk.start:unk.end] == "🤗"
    assert tok.decode([t.id for t in tokens]) == sp.decode(sp.encode(text))  # ' ⁇ ' as sentencepiece decodes it
    [result] = encode_json(capsys, "-t", "botchan-unigram-1k", text)
    assert [t["kind"] for t in result["tokens"]].count("unknown") == 1


def test_byte_fallback_pieces_are_the_characters_bytes(vocab):
    tok, sp = vocab("mistral-7b-v0.1"), native("mistral-7b-v0.1")
    text = "a 𠜎 b"  # a rare CJK character: no piece, four <0xNN> pieces
    tokens = tok.encode(text)
    assert [t.id for t in tokens] == sp.encode(text)
    fallback = [t for t in tokens if t.kind is TokenKind.BYTE_FALLBACK]
    assert [t.piece for t in fallback] == [f"<0x{b:02X}>" for b in "𠜎".encode()]
    assert b"".join(t.bytes for t in fallback) == "𠜎".encode()
    assert tok.decode([t.id for t in tokens]) == text


def test_spaces_are_the_word_start_mark(vocab):
    tok = vocab("mistral-7b-v0.1")
    tokens = tok.encode("Hello world")
    native_pieces = native("mistral-7b-v0.1").encode("Hello world", out_type=str)
    assert [t.piece for t in tokens] == native_pieces == ["▁Hello", "▁world"]
    assert [t.bytes for t in tokens] == [b" Hello", b" world"]  # the mark is a space, the first a dummy prefix
    assert [(t.start, t.end) for t in tokens] == [(0, 5), (5, 11)]


SAMPLES = resources.files("tokviz.resources").joinpath("samples")
LINES = [line for f in ("english.txt", "chinese.txt") for line in SAMPLES.joinpath(f).read_text("utf-8").splitlines()
         if line.strip()]
TEXTS = ["hello world", "  hello   world  ", "hello\tworld\n", "🤗 emoji 👨‍👩‍👧", "ｈｅｌｌｏ ①",
         "", " ", "   ", "a\x00b", "清水寺は京都にある。", "e\u0301", "\u200bzero\u200b",
         "trailing ", "hello\tworld\r\nthis\tis a \b pen"]
OPTIONS = [
    {"model_type": "bpe", "byte_fallback": True},
    {"model_type": "unigram", "add_dummy_prefix": False},
    {"model_type": "bpe", "remove_extra_whitespaces": False},
    {"model_type": "unigram", "remove_extra_whitespaces": False, "add_dummy_prefix": False, "byte_fallback": True},
    {"model_type": "bpe", "treat_whitespace_as_suffix": True},
    {"model_type": "bpe", "split_by_whitespace": False},
    {"model_type": "bpe", "allow_whitespace_only_pieces": True, "remove_extra_whitespaces": False},
    {"model_type": "char"},
    {"model_type": "word"},
    {"model_type": "unigram", "normalization_rule_name": "nfkc_cf"},
    {"model_type": "bpe", "normalization_rule_name": "identity"},
    # test_train_kwargs: whitespace and control characters as user-defined symbols
    {"model_type": "unigram", "user_defined_symbols": ["foo", "bar", ",", " ", "\t", "\b", "\n", "\r"]},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())[:60])
def test_models_with_each_normalizer_option_cut_as_sentencepiece(options):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES), model_writer=model, vocab_size=900, minloglevel=3,
                                   hard_vocab_limit=False, **options)
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    tok = SentencePieceTokenizer.from_proto(model.getvalue(), name="m")
    for text in TEXTS:
        tokens = tok.encode(text)
        assert [t.id for t in tokens] == sp.encode(text), text
        assert tok.decode([t.id for t in tokens]) == sp.decode(sp.encode(text)), text
        if tokens:
            assert tokens[0].start == 0 and tokens[-1].end == len(text), text
    if "user_defined_symbols" in options:
        s = "hello\tworld\r\nthis\tis a \b pen"
        assert tok.decode(tok.encode_ids(s)) == sp.decode(sp.encode(s)) == s
