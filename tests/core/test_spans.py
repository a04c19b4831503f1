"""Spans cover the text, for every catalog vocabulary, with and without special tokens parsed.

Every character of the input lies in some token's span and the tokens come in order, but for what
the model drops whole: the whitespace a normalizing SentencePiece model drops before, between or
after special tokens is a gap, in no token (as in the library), and a special token spans its text.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core import catalog
from tokviz.core.tokens import Token, sanitize

NAMES = [entry.name for entry in catalog.builtin_entries() if entry.available]  # the provisioned ones

ANY_CHAR = st.characters(exclude_categories=[])  # every code point, lone surrogates included
SPACES = st.sampled_from([" ", "  ", "\n", " \n ", "\t", "\u3000", "\r\n"])


def dropped(gap: str) -> bool:
    """What a normalizer drops whole: whitespace, control and format characters, U+FFFD (BERT's
    text cleaning), and nothing else."""
    return all(c.isspace() or unicodedata.category(c)[0] in "CZ" or c == "\ufffd" for c in gap)


def assert_covering(text: str, tokens: list[Token]) -> None:
    """Every character and byte of `text` lies in some token's span, tokens in order, but for gaps
    of whitespace the model drops whole (a text of only that has no token at all)."""
    data = text.encode("utf-8")
    if not tokens:
        return
    end = bend = 0
    for t in tokens:
        assert 0 <= t.start <= t.end <= len(text) and 0 <= t.byte_start <= t.byte_end <= len(data), t
        if t.start > end:  # a gap: only what a normalizer drops, and its bytes are the gap's too
            assert dropped(text[end:t.start]), (t, f"characters {end}..{t.start} in no token")
            assert data[bend:t.byte_start] == text[end:t.start].encode("utf-8"), t
        else:
            assert t.byte_start <= bend, (t, "bytes in no token")
        assert t.end >= end and t.byte_end >= bend, (t, "out of order")
        end, bend = max(end, t.end), max(bend, t.byte_end)
    assert dropped(text[end:]) and data[bend:] == text[end:].encode("utf-8"), f"characters {end}.. in no token"


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
def test_spaces_dropped_around_special_tokens_are_gaps(vocab, name, text):
    """The library drops these spaces whole: no token stands for them, and each special token
    spans exactly its own text (`' <s>'`: characters 1-4, not 0-4)."""
    tok = vocab(name)
    tokens = tok.encode(text, allowed_special="all")
    assert all(t.piece in ("<s>", "</s>") for t in tokens)
    assert [text[t.start:t.end] for t in tokens] == [t.piece for t in tokens]
    assert [text.encode()[t.byte_start:t.byte_end] for t in tokens] == [t.bytes for t in tokens]
    assert_covering(text, tokens)
