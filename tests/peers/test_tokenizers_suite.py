"""Cases from Hugging Face tokenizers' own Python tests (bindings/python/tests/bindings/
test_tokenizer.py: added tokens and their options, the unigram byte fallback, special tokens cut
as text), run through tokviz's `tokenizer.json` backend and compared with the library itself on
the same tokenizer."""

from __future__ import annotations

import pytest
import tokenizers
from tokenizers import AddedToken, decoders, normalizers, pre_tokenizers, trainers
from tokenizers.models import BPE, Unigram

from tests.peers.cli import encode_json
from tokviz.core import catalog
from tokviz.core.backends.hf_backend import HFTokenizer
from tokviz.core.tokens import TokenKind

CORPUS = ["hello world the quick brown fox my name is john", "Hey there dear friend!"] * 20


@pytest.fixture(scope="module")
def byte_level_json() -> str:
    """A small byte-level BPE trained here with the library (GPT-2's pre-tokenizer and decoder)."""
    tk = tokenizers.Tokenizer(BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tk.train_from_iterator(
        CORPUS, trainers.BpeTrainer(vocab_size=320, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    )
    return tk.to_str()


def both(tk: tokenizers.Tokenizer, text: str, **policy) -> tuple[list[int], list[int], HFTokenizer]:
    """tokviz's ids for `text` and the library's (`encode(text, add_special_tokens=False)`)."""
    ours = HFTokenizer.from_str(tk.to_str(), name="t")
    return ours.encode_ids(text, **policy), tk.encode(text, add_special_tokens=False).ids, ours


UNIGRAM_VOCAB = [
    ("<unk>", 0.0), ("A", -0.03), ("sen", -0.02), ("te", -0.03), ("n", -0.04), ("ce", -0.05),
    ("<0xF0>", -0.06), ("<0x9F>", -0.06), ("<0xA4>", -0.06), ("<0x97>", -0.06), (" ", -0.4),
]


def test_unigram_without_byte_fallback_gives_unk_for_the_emoji():
    # test_tokenizer.py, test_unigram_byte_fallback: [1, 10, 2, 3, 4, 5, 10, 0]
    tk = tokenizers.Tokenizer(Unigram(UNIGRAM_VOCAB, 0, byte_fallback=False))
    ours, theirs, tok = both(tk, "A sentence 🤗")
    assert ours == theirs == [1, 10, 2, 3, 4, 5, 10, 0]
    last = tok.encode("A sentence 🤗")[-1]
    assert last.kind is TokenKind.UNKNOWN and last.bytes == "🤗".encode()  # the text it replaced


def test_unigram_with_byte_fallback_gives_the_emojis_four_bytes():
    # test_tokenizer.py, test_unigram_byte_fallback: [1, 10, 2, 3, 4, 5, 10, 6, 7, 8, 9]
    tk = tokenizers.Tokenizer(Unigram(UNIGRAM_VOCAB, 0, byte_fallback=True))
    ours, theirs, tok = both(tk, "A sentence 🤗")
    assert ours == theirs == [1, 10, 2, 3, 4, 5, 10, 6, 7, 8, 9]
    tail = tok.encode("A sentence 🤗")[-4:]
    assert [t.kind for t in tail] == [TokenKind.BYTE_FALLBACK] * 4
    assert b"".join(t.bytes for t in tail) == "🤗".encode()
    assert all((t.start, t.end) == (11, 12) for t in tail)  # each byte covers the emoji


OPTIONS = [{}, {"lstrip": True}, {"rstrip": True}, {"lstrip": True, "rstrip": True}, {"single_word": True},
           {"normalized": False}]
TEXTS = ["hello <mask> world", "hello<mask>world", "hello   <mask>   world", "<mask> <mask>", " <mask>",
         "<mask> ", "hello ell ell", "hellohello", "", "   "]


@pytest.mark.parametrize("special", [False, True], ids=["added", "special"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_added_tokens_with_their_options_cut_as_the_library_cuts(byte_level_json, special, options):
    # AddedToken(lstrip/rstrip/single_word/normalized) as test_tokenizer.py's TestAddedToken builds
    # them; RoBERTa's <mask> is lstrip, Phi-3's <|end|> rstrip. A special token is parsed by the
    # library unless told otherwise: tokviz's `allowed_special="all"`.
    tk = tokenizers.Tokenizer.from_str(byte_level_json)
    tk.add_tokens([AddedToken("<mask>", special=special, **options), AddedToken("ell", special=special, **options)])
    tok = HFTokenizer.from_str(tk.to_str(), name="t")
    for text in TEXTS:
        tokens = tok.encode(text, allowed_special="all")
        assert [t.id for t in tokens] == tk.encode(text, add_special_tokens=False).ids, text
        if tokens:  # spans still cover the text, in order
            assert tokens[0].start == 0 and tokens[-1].end == len(text)
            assert all(a.end <= b.start or a.end == b.start for a, b in zip(tokens, tokens[1:])), text
        for t in tokens:
            if t.kind is TokenKind.SPECIAL:
                assert t.bytes in (b"<mask>", b"ell") and t.bytes.decode() in text[t.start:t.end]


def test_lstrip_token_takes_the_spaces_before_it(byte_level_json):
    tk = tokenizers.Tokenizer.from_str(byte_level_json)
    tk.add_special_tokens([AddedToken("<mask>", lstrip=True)])
    tok = HFTokenizer.from_str(tk.to_str(), name="t")
    mask = tok.encode("hello   <mask>", allowed_special="all")[-1]
    assert (mask.start, mask.end, mask.bytes) == (5, 14, b"<mask>")  # the library's offsets (5, 14)
    assert tk.encode("hello   <mask>").offsets[-1] == (5, 14)
    # as plain text (tokviz's default) it is cut as the library cuts it with encode_special_tokens
    tk.encode_special_tokens = True
    assert tok.encode_ids("hello   <mask>") == tk.encode("hello   <mask>").ids


def test_special_and_added_tokens_when_special_text_is_plain(byte_level_json):
    # test_encode_special_tokens: with encode_special_tokens the special token is cut as text,
    # a plain added token is still matched; tokviz's default policy is that switch
    tk = tokenizers.Tokenizer.from_str(byte_level_json)
    tk.add_tokens(["<eot>"])
    tk.add_special_tokens(["<end_of_text>"])
    text = "Hey there<end_of_text> dear<eot>friend!"
    tok = HFTokenizer.from_str(tk.to_str(), name="t")
    parsed = tk.encode(text, add_special_tokens=False)
    assert tok.encode_ids(text, allowed_special="all") == parsed.ids
    assert "<end_of_text>" in parsed.tokens
    tk.encode_special_tokens = True
    plain = tk.encode(text, add_special_tokens=False)
    assert "<end_of_text>" not in plain.tokens and "<eot>" in plain.tokens
    assert tok.encode_ids(text) == plain.ids
    with pytest.raises(ValueError, match="disallowed special token '<end_of_text>'"):
        tok.encode(text, disallowed_special="all")


def test_added_tokens_with_a_byte_level_normalizer():
    # test_add_tokens_with_normalizer: a non-normalized special token and two normalized ones
    tk = tokenizers.Tokenizer(BPE())
    tk.normalizer = normalizers.ByteLevel()
    tk.decoder = decoders.ByteLevel()
    new = [AddedToken("Začnimo", normalized=False, special=True), AddedToken("kuća"), AddedToken("međa")]
    tk.add_tokens(new)
    text = "Začnimokuća međa"
    tok = HFTokenizer.from_str(tk.to_str(), name="t")
    tokens = tok.encode(text, allowed_special="all")
    assert [t.id for t in tokens] == tk.encode(text).ids
    assert tok.decode([t.id for t in tokens]) == tk.decode(tk.encode(text).ids, False) == "Za\rnimokućameđa"


@pytest.mark.parametrize("text", ["My name is John", "Hey there dear friend!", "안녕 👍🏽 naïve", "a\r\nb\tc  "])
def test_offsets_of_the_library_are_tokvizs_character_spans(vocab, text):
    # the Encoding's offsets (character offsets in the Python binding) on DeepSeek-V3's real file
    tok = vocab("deepseek-v3")
    ref = tokenizers.Tokenizer.from_file(str(catalog.find("deepseek-v3").verified_path()))
    enc = ref.encode(text, add_special_tokens=False)
    tokens = tok.encode(text)
    assert [t.id for t in tokens] == enc.ids
    for t, (start, end) in zip(tokens, enc.offsets):
        assert (t.start, t.end) == (start, end) or t.kind is TokenKind.FRAGMENT, (t, (start, end))


def test_the_cli_cuts_a_tokenizer_json_with_stripping_tokens_as_the_library(capsys, byte_level_json, tmp_path):
    tk = tokenizers.Tokenizer.from_str(byte_level_json)
    tk.add_special_tokens([AddedToken("<mask>", lstrip=True), AddedToken("<|end|>", rstrip=True)])
    path = tmp_path / "tokenizer.json"
    tk.save(str(path))
    text = "hello   <mask> world<|end|>\n  next<|end|>"
    [result] = encode_json(capsys, "-t", str(path), "--special", "all", text)
    assert [t["id"] for t in result["tokens"]] == tk.encode(text, add_special_tokens=False).ids
    mask = next(t for t in result["tokens"] if t["piece"] == "<mask>")
    assert (mask["start"], mask["end"], bytes.fromhex(mask["bytes"])) == (5, 14, b"<mask>")
    end = next(t for t in result["tokens"] if t["piece"] == "<|end|>")
    assert text[end["start"]:end["end"]] == "<|end|>\n  "  # the newline and spaces after it are its own
