"""Context budgets and truncation on real tokenizers: where a limit falls, cuts that fit, whole clusters."""

from __future__ import annotations

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.analysis.budget import context_budget, grapheme_floor, truncate_to_tokens
from tokviz.core.resources import sample_text


def test_context_budget_marks_where_the_limit_falls(vocab):
    tok = vocab("cl100k_base")
    text = sample_text("english.txt")
    tokens = tok.encode(text)
    whole = context_budget(text, tokens, len(tokens))
    assert whole.fits and whole.fit_chars == len(text) and whole.fraction == 1.0
    half = context_budget(text, tokens, 100)
    assert not half.fits and half.fit_chars == tokens[100].start
    assert half.fraction == pytest.approx(tokens[100].start / len(text))
    assert context_budget(text, tokens, 0).fit_chars == 0
    # a character cut across the limit does not fit
    emoji = "a🤷"
    cut = tok.encode(emoji)
    assert len(cut) > 2 and cut[1].start == cut[2].start == 1
    assert context_budget(emoji, cut, 2).fit_chars == 1


def test_truncate_known_answer_and_no_op(vocab):
    tok = vocab("cl100k_base")
    assert truncate_to_tokens(tok, "hello world, hello", 2) == "hello world"
    text = sample_text("korean.txt")
    assert truncate_to_tokens(tok, text, len(tok.encode(text))) == text
    assert truncate_to_tokens(tok, text, 0) == ""
    with pytest.raises(ValueError):
        truncate_to_tokens(tok, text, -1)


@pytest.mark.parametrize("name", ["cl100k_base", "qwen", "mistral-7b-v0.1"])
def test_truncate_samples_fit_and_keep_clusters(vocab, name):
    tok = vocab(name)
    for file in ("korean.txt", "emoji_chat.txt", "japanese.txt", "logs.log"):
        text = sample_text(file)
        for n in (1, 7, 50, 123):
            cut = truncate_to_tokens(tok, text, n)
            assert text.startswith(cut) and len(tok.encode(cut)) <= n
            assert grapheme_floor(text, len(cut)) == len(cut)
            assert len(cut) > 0 or n < 3


def _clusters(text: str) -> list[str]:
    return regex.findall(r"\X", text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(blacklist_categories=["Cs"]), max_size=80)
       | st.lists(st.sampled_from(["한", "국", " ", "👨\u200d👩\u200d👧", "🇰🇷", "e\u0301", "\r\n", "ab", "{", "\t",
                                   "1\ufe0f\u20e3", "根", "い", "😀"]), max_size=40).map("".join),
       n=st.integers(0, 40), name=st.sampled_from(["cl100k_base", "qwen"]))
def test_truncation_fits_and_never_cuts_a_character(vocab, text, n, name):
    tok = vocab(name)
    cut = truncate_to_tokens(tok, text, n)
    assert text.startswith(cut)
    assert len(tok.encode(cut)) <= n
    clusters = _clusters(cut)
    assert clusters == _clusters(text)[: len(clusters)]  # whole grapheme clusters only
    if len(tok.encode(text)) <= n:
        assert cut == text


def test_grapheme_floor():
    text = "ab👍🏽\r\nc"
    assert [grapheme_floor(text, i) for i in range(len(text) + 2)] == [0, 1, 2, 2, 4, 4, 6, 7, 7]
