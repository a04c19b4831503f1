"""The tiktoken backend against tiktoken itself, on the real vocabularies."""

from __future__ import annotations

import os

import pytest
import tiktoken
import tiktoken.load
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core import catalog
from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer, read_rank_file
from tokviz.core.tokenizer import TokenizerError
from tokviz.core.tokens import TokenKind, sanitize

from .texts import MULTILINGUAL

OPENAI = ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"]


@pytest.fixture(scope="module")
def tiktoken_cache():
    """Point tiktoken's own cache at the provisioned folder: its registry then loads offline."""
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(catalog.vocab_dir())
    yield
    if old is None:
        del os.environ["TIKTOKEN_CACHE_DIR"]
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = old


def test_hello_world_known_answer(vocab):
    assert vocab("cl100k_base").encode_ids("hello world") == [15339, 1917]


@pytest.mark.parametrize("name", OPENAI)
def test_ids_equal_tiktokens_own_registry(name, vocab, tiktoken_cache):
    ours = vocab(name)
    theirs = tiktoken.get_encoding(name)
    assert ours.special_tokens == theirs._special_tokens
    assert ours.pattern == theirs._pat_str
    for label, text in MULTILINGUAL.items():
        assert ours.encode_ids(text) == theirs.encode(text, disallowed_special=()), label


@pytest.mark.parametrize("name", ["qwen", "llama3"])
def test_rank_file_vocabularies_equal_plain_tiktoken(name, vocab):
    ours = vocab(name)
    entry = catalog.find(name)
    theirs = tiktoken.Encoding(
        name, pat_str=entry.pattern, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(entry.path)),
        special_tokens=dict(entry.special_tokens),
    )
    for label, text in MULTILINGUAL.items():
        assert ours.encode_ids(text) == theirs.encode(text, disallowed_special=()), label


def test_qwen_vocabulary_shape(vocab):
    qwen = vocab("qwen")
    assert qwen.special_tokens["<|endoftext|>"] == 151643
    assert qwen.special_tokens["<|extra_204|>"] == 151850
    assert qwen.vocab_size == 151851
    assert qwen.token_bytes(51461) == b" \xe6\xa0"
    assert qwen.kind(51461) is TokenKind.FRAGMENT
    assert qwen.encode_ids("1234") == [16, 17, 18, 19]  # Qwen cuts digits one by one


def test_special_token_policy_matches_the_seed(vocab):
    qwen = vocab("qwen")
    text = 'print("<|endoftext|>")'
    assert qwen.encode_ids(text, allowed_special=set()) == [1350, 9639, 91, 8691, 723, 427, 91, 82598]
    assert qwen.encode_ids(text) == [1350, 9639, 91, 8691, 723, 427, 91, 82598]  # safe default
    tokens = qwen.encode(text, allowed_special="all")
    assert [t.id for t in tokens] == [1350, 445, 151643, 899]
    assert tokens[2].kind is TokenKind.SPECIAL and tokens[2].piece == "<|endoftext|>"
    assert (tokens[2].start, tokens[2].end) == (7, 20)
    with pytest.raises(ValueError, match="disallowed special token"):
        qwen.encode(text, disallowed_special="all")
    ids = qwen.encode_ids('print("<|extra_0|>")<|endoftext|>', allowed_special={"<|endoftext|>"})
    assert ids == [1350, 9639, 91, 15460, 62, 15, 91, 82598, 151643]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_spans_cover_text_in_order_and_round_trip(vocab, text):
    tok = vocab("cl100k_base")
    tokens = tok.encode(text)
    clean = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") if text else text
    data = b"".join(t.bytes for t in tokens)
    assert data.decode("utf-8") == clean.encode("utf-8", "replace").decode()
    pos_byte, pos_char = 0, 0
    for t in tokens:
        assert t.byte_start == pos_byte
        assert t.start <= pos_char <= t.end  # a cut character is shared by both neighbours
        assert t.start == pos_char or t.start == pos_char - 1
        pos_byte, pos_char = t.byte_end, t.end
    assert pos_char == len(text) and pos_byte == len(data)
    assert tok.decode([t.id for t in tokens]) == data.decode()


def test_lone_surrogates_are_replaced_not_fatal(vocab):
    tokens = vocab("cl100k_base").encode("a\ud800b")
    assert b"".join(t.bytes for t in tokens) == "a\ufffdb".encode()
    assert tokens[-1].end == 3


def test_surrogate_pair_is_joined_as_tiktoken_joins_it(vocab):
    tok = vocab("cl100k_base")
    own = tiktoken.Encoding("c", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks, special_tokens={})
    assert own.encode("\ud83d\ude00") == own.encode("\U0001f600")  # tiktoken: the pair is one 😀
    tokens = tok.encode("\ud83d\ude00")
    assert [t.id for t in tokens] == own.encode("\U0001f600")
    assert b"".join(t.bytes for t in tokens) == "\U0001f600".encode()
    assert tokens[-1].end == 1  # spans refer to the sanitized text: one character
    assert tok.encode_ids("\ude00\ud83d") == own.encode("\ufffd\ufffd")  # the wrong order: two lone ones


SURROGATE_HEAVY = st.text(
    st.one_of(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.sampled_from("a 1\n😀é")),
    max_size=30,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(SURROGATE_HEAVY)
def test_surrogates_encode_as_tiktoken_encodes_them(vocab, text):
    tok = vocab("o200k_base")
    own = tiktoken.Encoding("o", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks, special_tokens={})
    tokens = tok.encode(text)
    assert [t.id for t in tokens] == own.encode(text)
    assert list(tok.encode_columns(text).ids) == own.encode(text)
    clean = sanitize(text)
    assert b"".join(t.bytes for t in tokens) == clean.encode()
    assert not tokens or tokens[-1].end == len(clean)


def test_empty_and_large_text(vocab):
    tok = vocab("o200k_base")
    assert tok.encode("") == []
    text = ("Tokens are not characters. 토큰은 글자가 아니다. 🧑‍🤝‍🧑\n" * 20000)[: 1 << 20]
    tokens = tok.encode(text)
    assert tokens[-1].end == len(text)
    assert len(tokens) == len(tiktoken.Encoding(
        "o", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks, special_tokens={}).encode(text))


def test_vocab_iteration_covers_every_id(vocab):
    tok = vocab("r50k_base")
    entries = list(tok.vocab())
    assert len(entries) == tok.vocab_size == 50257
    assert entries[256].piece == "Ġt" and entries[256].bytes == b" t"
    assert entries[-1].kind is TokenKind.SPECIAL


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "no ranks"),
        (b"IQ== 0\nnot-base64!! 1\n", "line 2"),
        (b"IQ== 0\nIg== x\n", "line 2"),
    ],
)
def test_corrupt_rank_files_name_the_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(TokenizerError, match=message) as info:
        read_rank_file(path)
    assert str(path) in str(info.value)


def test_bad_pattern_is_a_clear_error():
    with pytest.raises(TokenizerError, match="cannot build tokenizer"):
        TiktokenTokenizer.from_ranks("x", {bytes([b]): b for b in range(256)}, pattern="(unclosed")


def test_pattern_constants_are_tiktokens(tiktoken_cache):
    from tokviz.core.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN

    assert tiktoken.get_encoding("cl100k_base")._pat_str == CL100K_PATTERN
    assert tiktoken.get_encoding("o200k_base")._pat_str == O200K_PATTERN
    assert tiktoken.get_encoding("r50k_base")._pat_str == GPT2_PATTERN


def test_tiktoken_reads_its_python_ranks_only_to_build_and_pickle():
    """`LeanEncoding` drops tiktoken's Python copy of the ranks: safe only while no other method
    of `tiktoken.Encoding` reads it (a tiktoken upgrade that does fails here, not in a pane)."""
    import inspect

    functions = {name: getattr(member, "fget", getattr(member, "func", member))
                 for name, member in vars(tiktoken.Encoding).items()}
    readers = {name for name, f in functions.items()
               if inspect.isfunction(f) and "_mergeable_ranks" in inspect.getsource(f)}
    assert readers == {"__init__", "__getstate__"}


@pytest.mark.parametrize("name", ["cl100k_base", "qwen"])
def test_ranks_read_back_from_the_core_are_the_files(name):
    tok = catalog.load(name)
    assert "_mergeable_ranks" not in vars(tok.encoding)  # tiktoken's copy is gone
    ranks = tok.mergeable_ranks
    own = read_rank_file(catalog.find(name).path)
    assert ranks == own and list(ranks) == list(own)  # the same pairs, in the file's (rank) order
    assert tok.mergeable_ranks is ranks  # built once


def test_lean_encoding_pickles_and_works_as_tiktokens():
    import pickle

    tok = catalog.load("cl100k_base")
    ranks = read_rank_file(catalog.find("cl100k_base").path)
    plain = tiktoken.Encoding("c", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=tok.special_tokens)
    back = pickle.loads(pickle.dumps(tok.encoding))
    assert "_mergeable_ranks" not in vars(back)
    text = "".join(MULTILINGUAL.values())
    for enc in (tok.encoding, back):
        ids = enc.encode(text + "<|endoftext|>", allowed_special="all")
        assert ids == plain.encode(text + "<|endoftext|>", allowed_special="all")
        assert enc.decode(ids) == plain.decode(ids)
        assert enc.encode_ordinary_batch([text, "x"]) == plain.encode_ordinary_batch([text, "x"])
        assert enc.decode_with_offsets(ids) == plain.decode_with_offsets(ids)
        mine, theirs = enc.encode_with_unstable("hello wor"), plain.encode_with_unstable("hello wor")
        assert mine[0] == theirs[0] and sorted(mine[1]) == sorted(theirs[1])  # completions have no order
        assert enc.token_byte_values() == plain.token_byte_values()
        assert enc.n_vocab == plain.n_vocab and enc.eot_token == plain.eot_token
