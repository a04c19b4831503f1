"""Merge replay ends in exactly the ids the tokenizers themselves return."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.texts import MULTILINGUAL
from tokviz.analysis.replay import (
    ReplayNotApplicable,
    algorithm_of,
    byte_pair_merges,
    replay,
    split_chunks,
)

BYTE_LEVEL = ["cl100k_base", "qwen", "o200k_base", "llama3"]
SP_BPE = ["mistral-7b-v0.1", "botchan-bpe-1k"]

# text a user selects: scripts, emoji, whitespace runs, digits, special-token look-alikes. Code
# points this Python's Unicode tables call unassigned (Cn) are left out: the `regex` module may
# know them from a newer Unicode than tiktoken's Rust regex and split them otherwise (see replay.py)
TEXT = st.lists(
    st.one_of(
        st.characters(codec="utf-8", exclude_categories=["Cn"]),
        st.sampled_from(list(" \t\n\r한国ひカaZ0é😀👍🏽ｈﬁ")),
        st.sampled_from(["<s>", "</s>", "<|endoftext|>", "  ", "\n\n", "'s", "...", "▁", "hello", " world"]),
    ),
    max_size=30,
).map("".join)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_hello_world_known_answer(vocab):
    r = replay(vocab("cl100k_base"), "hello world")
    assert r.algorithm == "byte-bpe" and r.matches_backend
    assert [(c.text, c.ids) for c in r.chunks] == [("hello", (15339,)), (" world", (1917,))]
    world = r.chunks[1]
    assert [(s.index, s.merged, s.rank) for s in world.steps] == [
        (2, b"or", 269), (0, b" w", 289), (2, b"ld", 509), (1, b"orld", 1410), (0, b" world", 1917),
    ]
    states = [world.labels(parts) for parts in world.states()]
    assert states[0] == ["·", "w", "o", "r", "l", "d"] and states[-1] == ["·world"]


def test_merges_follow_tiktokens_educational_order():
    ranks = {bytes([b]): b for b in range(256)}
    for data in (b"aa", b"aaa", b"ab", b"aab"):
        ranks[data] = len(ranks)
    initial, steps, final = byte_pair_merges(ranks, b"aaab")
    assert initial == (b"a", b"a", b"a", b"b")
    # "aa" wins at the leftmost position on a tie, then "aaa" (lower rank than "ab")
    assert [(s.index, s.merged) for s in steps] == [(0, b"aa"), (0, b"aaa")]
    assert final == (b"aaa", b"b")


@pytest.mark.parametrize("name", BYTE_LEVEL + SP_BPE)
@pytest.mark.parametrize("sample", sorted(MULTILINGUAL))
def test_replay_ends_in_the_backends_ids_on_sample_texts(name, sample, vocab):
    r = replay(vocab(name), MULTILINGUAL[sample])
    assert r.ids == vocab(name).encode_ids(MULTILINGUAL[sample])
    assert r.matches_backend


def _check_chunk_invariants(r, tokenizer):
    for chunk in r.chunks:
        states = list(chunk.states())
        assert len(states) == len(chunk.steps) + 1
        if chunk.special:
            assert len(chunk.ids) == 1 and not chunk.steps
            continue
        assert b"".join(states[0]) == b"".join(states[-1])  # merging never loses a byte
        if r.algorithm == "byte-bpe":
            assert b"".join(chunk.initial) == chunk.text.encode("utf-8")
            assert all(len(p) == 1 for p in chunk.initial)
            for step in chunk.steps:
                assert tokenizer.mergeable_ranks[step.merged] == step.rank
            if not chunk.note:
                assert states[-1] == chunk.final
        else:
            for step in chunk.steps:
                assert tokenizer.sp.id_to_piece(step.rank).replace("▁", " ").encode() == step.merged
                assert step.score == tokenizer.sp.get_score(step.rank)


@pytest.mark.parametrize("name", ["cl100k_base", "qwen", "mistral-7b-v0.1", "botchan-bpe-1k"])
def test_replay_ends_in_the_backends_ids_for_random_text(name, vocab):
    tokenizer = vocab(name)

    @PROPERTY
    @given(TEXT)
    def check(text):
        r = replay(tokenizer, text, check=False)
        assert r.ids == tokenizer.encode_ids(text)
        _check_chunk_invariants(r, tokenizer)

    check()


@pytest.mark.parametrize("name", ["cl100k_base", "mistral-instruct-v3"])
def test_special_tokens_follow_the_policy(name, vocab):
    tokenizer = vocab(name)
    special = next(iter(tokenizer.special_tokens))
    text = f"before {special} after"
    parsed = replay(tokenizer, text, allowed_special="all")
    assert parsed.matches_backend
    assert any(c.special and c.text == special for c in parsed.chunks)
    plain = replay(tokenizer, text)
    assert plain.matches_backend and not any(c.special for c in plain.chunks)
    with pytest.raises(ValueError, match="disallowed special token"):
        replay(tokenizer, text, disallowed_special="all")


def test_sentencepiece_pieces_equal_sentencepieces_own(vocab):
    tokenizer = vocab("botchan-bpe-1k")
    r = replay(tokenizer, "  Hello  ｈｉ world ")
    (chunk,) = r.chunks
    assert chunk.text == tokenizer.sp.normalize("  Hello  ｈｉ world ") == "▁Hello▁hi▁world"
    assert list(chunk.pieces) == tokenizer.sp.encode("  Hello  ｈｉ world ", out_type=str)
    assert r.matches_backend


def test_sentencepiece_unknown_and_byte_fallback(vocab):
    botchan = replay(vocab("botchan-bpe-1k"), "ĀĀ x")
    assert botchan.matches_backend
    assert botchan.ids.count(vocab("botchan-bpe-1k").sp.unk_id()) == 1  # one unknown per run
    assert "unknown" in botchan.chunks[0].note
    mistral = replay(vocab("mistral-7b-v0.1"), "a\U0001f9ec")  # 🧬 is not a Mistral piece
    assert mistral.matches_backend and "byte fallback" in mistral.chunks[0].note
    assert [vocab("mistral-7b-v0.1").piece(i) for i in mistral.ids][-4:] == ["<0xF0>", "<0x9F>", "<0xA7>", "<0xAC>"]


def test_whole_chunk_lookup_is_explained(vocab):
    """tiktoken takes a chunk that is itself a token directly; Llama 3 has 588 tokens that merges
    alone never reach (` jeho` among them), and the replay says so."""
    tokenizer = vocab("llama3")
    ranks = tokenizer.mergeable_ranks
    assert len(byte_pair_merges(ranks, b" jeho")[2]) > 1
    r = replay(tokenizer, "a jeho")
    assert r.matches_backend and r.ids[-1] == ranks[b" jeho"]
    chunk = r.chunks[-1]
    assert chunk.final == (b" jeho",) and "whole chunk" in chunk.note
    assert list(chunk.states())[-1] != chunk.final  # the merges themselves stop short


def test_unigram_and_other_models_are_not_replayable(vocab):
    with pytest.raises(ReplayNotApplicable, match="Unigram.*Viterbi"):
        replay(vocab("botchan-unigram-1k"), "hello")
    with pytest.raises(ReplayNotApplicable, match="pipeline view"):
        algorithm_of(vocab("deepseek-v3"))
    assert algorithm_of(vocab("mistral-7b-v0.1")) == "sentencepiece-bpe"
    assert algorithm_of(vocab("llama3")) == "byte-bpe"


def test_split_chunks_are_tiktokens_regex_split(vocab):
    tokenizer = vocab("cl100k_base")
    text = MULTILINGUAL["code"]
    spans = split_chunks(tokenizer.pattern, text)
    assert "".join(text[a:b] for a, b in spans) == text


def test_replay_of_mixed_text_and_of_a_long_chunk_matches_the_backend(vocab):
    text = "\n".join(MULTILINGUAL.values()) * 4  # ~2.5 KB
    for name in ("cl100k_base", "mistral-7b-v0.1"):
        replay(vocab(name), "warm up")
        assert replay(vocab(name), text).matches_backend
    # 20k spaces are one chunk: quadratic merging would take minutes; the heap-based replay does not
    assert replay(vocab("cl100k_base"), "x" + " " * 20_000 + "y").matches_backend
