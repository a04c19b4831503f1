"""Spans cover the text, for every catalog vocabulary, with and without special tokens parsed.

Every character of the input lies in some token's span and the tokens come in order, whatever the
backend drops (a normalizing SentencePiece model drops the spaces between two special tokens).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core import catalog
from tokviz.core.tokens import Token, sanitize

NAMES = [entry.name for entry in catalog.builtin_entries() if entry.available]  # the provisioned ones

ANY_CHAR = st.characters(exclude_categories=[])  # every code point, lone surrogates included
SPACES = st.sampled_from([" ", "  ", "\n", " \n ", "\t", "\u3000", "\r\n"])


def assert_covering(text: str, tokens: list[Token]) -> None:
    """Every character and byte of `text` lies in some token's span, tokens in order (a text the
    model drops whole, `' '` in a normalizing model, has no token to hold it)."""
    data = text.encode("utf-8")
    if not tokens:
        return
    assert tokens[0].start == 0 and tokens[0].byte_start == 0, tokens[0]
    end = bend = 0
    for t in tokens:
        assert 0 <= t.start <= t.end <= len(text) and 0 <= t.byte_start <= t.byte_end <= len(data), t
        assert t.start <= end and t.byte_start <= bend, (t, f"characters {end}..{t.start} in no token")
        assert t.end >= end and t.byte_end >= bend, (t, "out of order")
        end, bend = t.end, t.byte_end
    assert end == len(text) and bend == len(data), f"characters {end}.. in no token"


def texts_for(name: str) -> st.SearchStrategy[str]:
    specials = sorted(catalog.load(name).special_tokens)[:40] or ["<|endoftext|>"]
    part = st.one_of(st.text(ANY_CHAR, max_size=6), SPACES, st.sampled_from(specials))
    return st.lists(part, max_size=10).map("".join)


@pytest.mark.parametrize("special", ["all", "none"])
@pytest.mark.parametrize("name", NAMES)
def test_spans_cover_the_text(vocab, name, special):
    tok = vocab(name)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(texts_for(name))
    def check(text):
        allowed = "all" if special == "all" else frozenset()
        tokens = tok.encode(text, allowed_special=allowed)
        clean = sanitize(text)
        assert_covering(clean, tokens)
        columns = tok.encode_columns(text, allowed_special=allowed)
        assert columns.ids.tolist() == [t.id for t in tokens]
        assert np.array_equal(columns.starts, [t.start for t in tokens])
        assert np.array_equal(columns.ends, [t.end for t in tokens])
        assert np.array_equal(columns.byte_starts, [t.byte_start for t in tokens])
        assert np.array_equal(columns.byte_ends, [t.byte_end for t in tokens])

    check()


@pytest.mark.parametrize(
    "name, text",
    [("botchan-unigram-1k", " <s>"), ("kyoto-ja-unigram-8k", "<s>  </s>"), ("botchan-bpe-1k", "<s>  ")],
)
def test_dropped_spaces_around_special_tokens_are_covered(vocab, name, text):
    tok = vocab(name)
    tokens = tok.encode(text, allowed_special="all")
    assert all(t.piece in ("<s>", "</s>") for t in tokens)
    assert_covering(text, tokens)
