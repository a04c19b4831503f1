"""Cases from tiktoken's public tests (tests/test_encoding.py, tests/test_offsets.py,
tests/test_simple_public.py, tests/test_misc.py), run through tokviz's Tokenizer interface on the real vocabularies
and compared with tiktoken itself on the same text.

Mapping: tiktoken's `encode(text)` (special-token text is an error) is tokviz's
`encode(text, disallowed_special="all")`; tiktoken's `encode_ordinary` / `disallowed_special=()`
is tokviz's default; `decode_with_offsets`' offsets are the tokens' character starts.
"""

from __future__ import annotations

import os

import hypothesis
import hypothesis.strategies as st
import pytest
import tiktoken
import tiktoken.load
import tiktoken.model

from tests.peers.cli import encode_json, run
from tokviz.core import catalog

#: tiktoken's ENCODINGS and SOME_ENCODINGS, plus the other rank files tokviz ships a catalog entry for
ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base", "p50k_base", "qwen", "llama3"]
MAX_EXAMPLES = 60

_REF: dict[str, tiktoken.Encoding] = {}


def reference(name: str) -> tiktoken.Encoding:
    """tiktoken's own Encoding for a catalog vocabulary, loaded from the provisioned files."""
    if name not in _REF:
        entry = catalog.find(name)
        if name in ("r50k_base", "cl100k_base", "o200k_base", "p50k_base"):
            old = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(catalog.vocab_dir())
            try:
                _REF[name] = tiktoken.get_encoding(name)
            finally:
                if old is None:
                    del os.environ["TIKTOKEN_CACHE_DIR"]
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = old
        else:
            _REF[name] = tiktoken.Encoding(
                name, pat_str=entry.pattern,
                mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(entry.verified_path())),
                special_tokens=dict(entry.special_tokens),
            )
    return _REF[name]


def test_simple(vocab):
    enc = vocab("r50k_base")  # tiktoken's "gpt2"
    assert enc.encode_ids("hello world") == [31373, 995]
    assert enc.decode([31373, 995]) == "hello world"
    assert enc.encode_ids("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]
    enc = vocab("cl100k_base")
    assert enc.encode_ids("hello world") == [15339, 1917]
    assert enc.decode([15339, 1917]) == "hello world"
    assert enc.encode_ids("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_token_is_its_own_bytes(vocab, name):
    # test_simple / test_single_token_roundtrip: each id's bytes, and the bytes encode to the id
    tok, ref = vocab(name), reference(name)
    ranks = tok.mergeable_ranks
    for token in range(ref.n_vocab):
        try:
            want = ref.decode_single_token_bytes(token)
        except KeyError:
            continue
        assert tok.token_bytes(token) == want, token
        if token in ref._special_tokens.values():
            assert tok.special_tokens[want.decode()] == token
        else:
            assert ranks[want] == token


def test_simple_repeated(vocab):
    enc = vocab("r50k_base")
    expected = [[15], [405], [830], [2388], [20483], [10535], [24598], [8269], [10535, 830], [8269, 405],
                [8269, 830], [8269, 2388], [8269, 20483], [8269, 10535], [8269, 24598], [25645],
                [8269, 10535, 830]]
    assert [enc.encode_ids("0" * n) for n in range(1, 18)] == expected


def test_large_repeated(vocab):
    text = "x" * 1_000_000
    ids = vocab("o200k_base").encode_ids(text)
    assert ids and ids == reference("o200k_base").encode_ordinary(text)


def test_simple_regex(vocab):
    enc = vocab("cl100k_base")
    assert enc.encode_ids("rer") == [38149]
    assert enc.encode_ids("'rer") == [2351, 81]
    assert enc.encode_ids("today\n ") == [31213, 198, 220]
    assert enc.encode_ids("today\n \n") == [31213, 27907]
    assert enc.encode_ids("today\n  \n") == [31213, 14211]


def test_basic_encode(vocab):
    assert vocab("r50k_base").encode_ids("hello world") == [31373, 995]
    assert vocab("p50k_base").encode_ids("hello world") == [31373, 995]
    assert vocab("cl100k_base").encode_ids("hello world") == [15339, 1917]
    assert vocab("cl100k_base").encode_ids(" \x850") == [220, 126, 227, 15]


def test_encode_empty(vocab):
    assert vocab("r50k_base").encode("") == []
    assert vocab("r50k_base").decode([]) == ""


def test_encode_surrogate_pairs(vocab):
    enc = vocab("cl100k_base")
    assert enc.encode_ids("👍") == [9468, 239, 235]
    assert enc.encode_ids("\ud83d\udc4d") == [9468, 239, 235]  # a surrogate pair is its code point
    assert enc.encode_ids("\ud83d") == enc.encode_ids("�")  # a lone surrogate is U+FFFD
    # the fragments of 👍 decode to U+FFFD alone and to the emoji together
    tokens = enc.encode("👍")
    assert [t.kind.value for t in tokens] == ["fragment"] * 3 and enc.decode([t.id for t in tokens]) == "👍"


@pytest.mark.parametrize("name", ENCODINGS)
def test_catastrophically_repetitive(vocab, name):
    enc, ref = vocab(name), reference(name)
    for c in ["^", "0", "a", "'s", " ", "\n"]:
        big = c * 10_000
        for value in (big, " " + big, " " + big + "\n"):
            ids = enc.encode_ids(value)
            assert ids == ref.encode_ordinary(value), (c, len(value))
            assert enc.decode(ids) == value


@pytest.mark.parametrize("name", ENCODINGS)
def test_basic_roundtrip(vocab, name):
    enc = vocab(name)
    for value in (
        "hello", "hello ", "hello  ", " hello", " hello ", " hello  ", "hello world", "请考试我的软件！12345",
    ):
        ids = enc.encode_ids(value)
        assert ids == reference(name).encode(value)
        assert enc.decode(ids) == value
        assert enc.decode(enc.encode_ids(value, allowed_special="all")) == value


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
@hypothesis.given(text=st.text())
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_roundtrip(vocab, name, text):
    enc = vocab(name)
    ids = enc.encode_ids(text)
    assert ids == reference(name).encode_ordinary(text)  # tiktoken joins pairs and replaces lone surrogates too
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert enc.decode(ids) == clean


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
@hypothesis.given(text=st.text())
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_special_ordinary(vocab, name, text):
    enc = vocab(name)
    assert enc.encode_ids(text) == reference(name).encode_ordinary(text) == enc.encode_ids(text, disallowed_special=())


def test_special_token(vocab):
    enc = vocab("cl100k_base")
    eot, fip, fim = (enc.special_tokens[t] for t in ("<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>"))
    assert eot == reference("cl100k_base").eot_token

    text = "<|endoftext|> hello <|fim_prefix|>"
    assert eot not in enc.encode_ids(text, disallowed_special=())
    for disallowed in ("all", {"<|endoftext|>"}, {"<|fim_prefix|>"}):
        with pytest.raises(ValueError):
            enc.encode(text, disallowed_special=disallowed)

    text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>"
    tokens = enc.encode_ids(text, disallowed_special=())
    assert eot not in tokens and fip not in tokens and fim not in tokens
    for disallowed in ((), "all"):
        tokens = enc.encode_ids(text, allowed_special="all", disallowed_special=disallowed)
        assert eot in tokens and fip in tokens and fim in tokens
    for allowed, present in (("<|fim_prefix|>", fip), ("<|endoftext|>", eot), ("<|fim_middle|>", fim)):
        tokens = enc.encode_ids(text, allowed_special={allowed}, disallowed_special=())
        assert [t for t in (eot, fip, fim) if t in tokens] == [present]
        assert tokens == reference("cl100k_base").encode(text, allowed_special={allowed}, disallowed_special=())


def test_disallowed_special_message_is_tiktokens(vocab):
    text = "<|endoftext|> hello"
    with pytest.raises(ValueError) as theirs:
        reference("cl100k_base").encode(text)
    with pytest.raises(ValueError) as ours:
        vocab("cl100k_base").encode(text, disallowed_special="all")
    assert str(ours.value) == str(theirs.value)


# -- tests/test_offsets.py ---------------------------------------------------------------------


@pytest.mark.parametrize(("prompt", "offsets"), [
    ("hello world", [0, 5]),
    ("hello world<|endoftext|> green cow", [0, 5, 11, 24, 30]),
    ("我非常渴望与人工智能一起工作", [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13]),
    # the tokens b'\xe0\xae\xbf\xe0\xae' and b'\xe0\xaf\x8d\xe0\xae': \xe0 starts a 3-byte character
    ("நடிகர் சூர்யா", [0, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12, 12]),
    # the token b'\xa0\xe9\x99\xa4': \xe9 starts a 3-byte character, \xa0 continues one
    (" Ġ除", [0, 1]),
])
def test_basic_offsets(vocab, prompt, offsets):
    enc = vocab("cl100k_base")
    tokens = enc.encode(prompt, allowed_special="all")
    assert [t.start for t in tokens] == offsets
    ids = [t.id for t in tokens]
    assert reference("cl100k_base").decode_with_offsets(ids) == (prompt, offsets)
    assert enc.decode(ids) == prompt


@hypothesis.given(data=st.data())
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_offsets(vocab, data):
    enc, ref = vocab("cl100k_base"), reference("cl100k_base")
    ids = data.draw(st.lists(st.integers(0, ref.max_token_value).filter(
        lambda x: x in ref._special_tokens.values() or x in ref._mergeable_ranks.values()), min_size=1, max_size=20))
    text = ref.decode(ids, errors="ignore")  # as tiktoken's test: tokens of a valid UTF-8 string
    tokens = enc.encode(text, allowed_special="all")
    ids = [t.id for t in tokens]
    assert ids == ref.encode(text, allowed_special="all")
    assert [t.start for t in tokens] == ref.decode_with_offsets(ids)[1]


# -- tests/test_misc.py ------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "encoding"), [
    ("gpt2", "r50k_base"), ("text-davinci-003", "p50k_base"), ("gpt-3.5-turbo-0301", "cl100k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-4o", "o200k_base"), ("gpt-4o-2024-08-06", "o200k_base"), ("gpt-4.1", "o200k_base"),
])
def test_encoding_for_model(capsys, model, encoding):
    # tiktoken.encoding_for_model's names work wherever -t takes a vocabulary
    assert catalog.find(model).name == encoding
    assert tiktoken.model.encoding_name_for_model(model) in (encoding, "gpt2")
    [result] = encode_json(capsys, "-t", model, "hello world")
    assert result["tokenizer"] == encoding
    assert [t["id"] for t in result["tokens"]] == reference(encoding).encode("hello world")


def test_a_model_whose_encoding_is_not_in_the_catalog_is_still_unknown(capsys):
    # p50k_edit and o200k_harmony have no catalog entry: the name is not silently another vocabulary
    assert catalog.find("text-davinci-edit-001") is None and catalog.find("gpt-oss-120b") is None
    code, _, err = run(capsys, "encode", "-t", "gpt-oss-120b", "hi")
    assert code == 1 and "unknown tokenizer 'gpt-oss-120b'" in err
