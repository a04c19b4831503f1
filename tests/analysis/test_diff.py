"""The boundary diff on real vocabularies: facts taken from tiktoken itself, and properties."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.analysis.diff import agreement, cuts_of, diff_cuttings, diff_texts
from tokviz.core import catalog
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import Token, TokenKind


@pytest.fixture(scope="module")
def lib():
    """tiktoken's own registry, loading offline from the provisioned folder: `lib("cl100k_base")`."""
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(catalog.vocab_dir())
    yield tiktoken.get_encoding
    if old is None:
        del os.environ["TIKTOKEN_CACHE_DIR"]
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = old


KOREAN = "대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다. 수도는 서울특별시이다."


def char_cuts(enc: tiktoken.Encoding, text: str) -> set[int]:
    """Character boundaries where tiktoken's tokens cut, from the library's own token bytes: a
    boundary is cut where the bytes decoded so far are whole characters."""
    cuts, data = set(), b""
    for token_id in enc.encode(text):
        data += enc.decode_single_token_bytes(token_id)
        try:
            cuts.add(len(data.decode("utf-8")))
        except UnicodeDecodeError:
            pass
    return {c for c in cuts if 0 < c < len(text)}


def test_cl100k_and_o200k_differ_on_korean(vocab, lib):
    cl, o2 = vocab("cl100k_base"), vocab("o200k_base")
    d = diff_texts(KOREAN, [cl, o2])
    lib_cl, lib_o2 = char_cuts(lib("cl100k_base"), KOREAN), char_cuts(
        lib("o200k_base"), KOREAN)
    assert set(d.cuts[0].tolist()) == lib_cl and set(d.cuts[1].tolist()) == lib_o2
    assert lib_cl != lib_o2 and not d.identical()
    assert d.agreement[0] == 100.0
    assert d.agreement[1] == pytest.approx(100 * len(lib_cl & lib_o2) / len(lib_cl | lib_o2))
    first = next(d.stretches())
    # tiktoken: cl100k cuts 대한 in two, o200k has it as one token
    assert (first.start, first.end) == (0, 2)
    assert [t.id for t in first.left] == lib("cl100k_base").encode("대한")
    assert [t.id for t in first.right] == lib("o200k_base").encode("대한")
    assert [t.text for t in first.left] == ["대", "한"]
    # every differing stretch lies between shared cuts, and its tokens cover it exactly
    shared = set(d.cuts[0].tolist()) & set(d.cuts[1].tolist()) | {0, len(KOREAN)}
    for s in d.stretches():
        assert s.start in shared and s.end in shared
        assert not any(s.start < c < s.end for c in shared)
        for side in (s.left, s.right):
            assert side[0].start == s.start and max(t.end for t in side) == s.end
            assert b"".join(t.bytes for t in side) == KOREAN[s.start:s.end].encode()


def test_tokenizer_with_itself_is_identical(vocab):
    cl = vocab("cl100k_base")
    d = diff_texts(KOREAN + " hello world\n\n", [cl, cl])
    assert d.identical() and d.agreement == [100.0, 100.0] and list(d.stretches()) == []


def test_same_cuts_other_ids_is_not_identical(vocab, lib):
    # r50k and cl100k cut "hi there" alike (tiktoken: two tokens each) with other ids
    text = "hi there"
    r50k, cl = lib("r50k_base"), lib("cl100k_base")
    assert len(r50k.encode(text)) == len(cl.encode(text)) == 2 and r50k.encode(text) != cl.encode(text)
    d = diff_texts(text, [vocab("cl100k_base"), vocab("r50k_base")])
    assert d.agreement[1] == 100.0 and d.count_stretches() == 0 and not d.identical()


def test_gguf_llama_bpe_is_identical_to_llama3_on_llama_cpp_cases(vocab, vocab_path):
    cases = vocab_path("ggml-vocab-llama-bpe", ".inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    assert len(cases) > 20
    llama3, gguf = vocab("llama3"), vocab("ggml-vocab-llama-bpe")
    for case in cases:
        d = diff_texts(case, [llama3, gguf])
        assert d.identical(), repr(case)


def test_special_policy_reaches_the_encoders(vocab):
    qwen = vocab("qwen")
    text = 'print("<|endoftext|>")'
    plain = diff_texts(text, [qwen, qwen])
    parsed = diff_texts(text, [qwen, qwen], SpecialPolicy.parse("all"))
    assert len(plain.tokens[0]) == 8 and len(parsed.tokens[0]) == 4
    with pytest.raises(ValueError, match="disallowed special token"):
        diff_texts(text, [qwen, qwen], SpecialPolicy.parse("raise"))


def test_three_tokenizers_against_a_chosen_reference(vocab):
    toks = [vocab("cl100k_base"), vocab("o200k_base"), vocab("cl100k_base")]
    d = diff_texts(KOREAN, toks, reference=1)
    assert d.agreement[1] == 100.0 and d.agreement[0] == d.agreement[2] < 100.0
    with pytest.raises(ValueError):
        diff_texts(KOREAN, toks, reference=3)


def test_fragments_of_one_character_make_no_cut():
    # one character in two byte tokens, then a whole one: only the boundary after the character
    frag = [Token(1, b"\xe6", 0, 1, 0, 1, TokenKind.FRAGMENT, ""), Token(2, b"\xa0\xb9", 1, 3, 0, 1,
            TokenKind.FRAGMENT, ""), Token(3, b"a", 3, 4, 1, 2, TokenKind.NORMAL, "a")]
    assert cuts_of(frag, 2).tolist() == [1]
    assert cuts_of([], 0).tolist() == [] and agreement(np.array([]), np.array([])) == 100.0


SAMPLES = st.text(alphabet=st.sampled_from(list("ab c\n대한민국🦙é.,")), max_size=60)


@settings(max_examples=60, deadline=None)
@given(text=SAMPLES)
def test_diff_with_itself_is_empty(vocab, text):
    for name in ("cl100k_base", "o200k_base"):
        tok = vocab(name)
        d = diff_texts(text, [tok, tok])
        assert d.identical() and d.count_stretches() == 0 and d.agreement[1] == 100.0


@settings(max_examples=60, deadline=None)
@given(text=SAMPLES)
def test_agreement_and_stretches_are_symmetric(vocab, text):
    a, b = vocab("cl100k_base"), vocab("o200k_base")
    ab, ba = diff_texts(text, [a, b]), diff_texts(text, [b, a])
    assert ab.agreement[1] == ba.agreement[1]
    assert ab.stretch_ranges().tolist() == ba.stretch_ranges().tolist()
    assert [(s.left, s.right) for s in ab.stretches()] == [(s.right, s.left) for s in ba.stretches()]
    assert ab.identical() == ba.identical()


@given(st.lists(st.integers(1, 50), unique=True), st.lists(st.integers(1, 50), unique=True))
def test_agreement_is_the_shared_fraction_of_the_union(a, b):
    xa, xb = np.array(sorted(a), dtype=np.int64), np.array(sorted(b), dtype=np.int64)
    union = set(a) | set(b)
    expected = 100.0 * len(set(a) & set(b)) / len(union) if union else 100.0
    assert agreement(xa, xb) == pytest.approx(expected) == pytest.approx(agreement(xb, xa))


def test_stretches_between_made_up_cuttings():
    def cut(*spans):
        return [Token(n, b"", 0, 0, s, e, TokenKind.NORMAL, "") for n, (s, e) in enumerate(spans)]

    d = diff_cuttings([cut((0, 1), (1, 2), (2, 4), (4, 6)), cut((0, 2), (2, 3), (3, 4), (4, 6))], 6)
    assert d.stretch_ranges().tolist() == [[0, 2], [2, 4]]
    assert [[t.id for t in s.right] for s in d.stretches()] == [[0], [1, 2]]


def test_columns_and_token_lists_give_the_same_diff(vocab):
    text = KOREAN + " naïve 🦙 emoji\n\tcode()"
    a, b = vocab("cl100k_base"), vocab("mistral-7b-v0.1")
    from_columns = diff_texts(text, [a, b])
    from_lists = diff_cuttings([a.encode(text), b.encode(text)], len(text))
    assert [c.tolist() for c in from_columns.cuts] == [c.tolist() for c in from_lists.cuts]
    assert list(from_columns.stretches()) == list(from_lists.stretches()) != []
