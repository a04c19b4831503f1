"""An `Encoding` states exactly what `encode` states, for every backend, and finds tokens by position."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core.tokens import display_text

from .texts import MULTILINGUAL

NAMES = ["cl100k_base", "qwen", "tokviz-samples", "mistral-7b-v0.1", "deepseek-v3"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("policy", [{}, {"allowed_special": "all"}])
def test_columns_equal_tokens_on_the_sample_set(vocab, name, policy):
    tok = vocab(name)
    for label, text in MULTILINGUAL.items():
        cols = tok.encode_columns(text, **policy)
        assert list(cols) == tok.encode(text, **policy), label
        assert cols.n_bytes == len(text.encode("utf-8"))
        assert len(cols.key_index) == len(cols.ids) == len(cols)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_columns_equal_tokens_on_any_text(vocab, text):
    for name in ("cl100k_base", "mistral-7b-v0.1"):
        tok = vocab(name)
        assert list(tok.encode_columns(text)) == tok.encode(text)


def test_disallowed_special_raises_the_same_error(vocab):
    with pytest.raises(ValueError, match="disallowed special token"):
        vocab("qwen").encode_columns("<|endoftext|>", disallowed_special="all")


@given(st.lists(st.integers(0, 300_000), max_size=200))
def test_distinct_ids_is_np_unique(ids):
    from tokviz.core.encoding import distinct_ids

    array = np.array(ids, dtype=np.int64)
    distinct, inverse = distinct_ids(array)
    expected, expected_inverse = np.unique(array, return_inverse=True)
    assert distinct.tolist() == expected.tolist() and inverse.tolist() == expected_inverse.reshape(-1).tolist()
    assert inverse.dtype == np.int32


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(), st.integers(0, 60), st.integers(0, 60))
def test_lookups_by_position_agree_with_the_tokens(vocab, text, a, b):
    """`tokens_in_chars` is every token whose span overlaps [a, b) (a caret: [a, a + 1)), and
    `token_at_char` the first of a caret's: read off the tokens one by one."""
    for name in ("cl100k_base", "mistral-7b-v0.1"):
        enc = vocab(name).encode_columns(text)
        lo, hi = (a, b) if b > a else (a, a + 1)
        expected = [i for i, t in enumerate(enc) if t.start < hi and t.end > lo]
        assert list(enc.tokens_in_chars(a, b)) == expected
        at = [i for i, t in enumerate(enc) if t.start <= a < t.end]
        assert enc.token_at_char(a) == (at[0] if at else None)


def test_compact_and_parts_are_the_same_tokens(vocab):
    enc = vocab("qwen").encode_columns(MULTILINGUAL["korean"] + MULTILINGUAL["emoji_zwj"])
    small = enc.compact()
    assert small.ids.dtype == np.int32 and small.starts.dtype == np.int32 and small.key_index.dtype == np.uint16
    assert small == list(enc)
    n = len(enc)
    assert enc.part(2, n - 1) == list(enc)[2 : n - 1]
    assert enc.shifted(5, 7)[0].start == enc[0].start + 5 and enc.shifted(5, 7)[0].byte_end == enc[0].byte_end + 7
    assert [enc.token_text(i) for i in range(n)] == [display_text(t.bytes) for t in enc]


@pytest.mark.parametrize("name", ["cl100k_base", "mistral-7b-v0.1"])
def test_slices_short_and_long_are_the_tokens_encode_gives(vocab, name):
    """A few tokens are read from their own rows of the table, many from every row: the same."""
    tok = vocab(name)
    text = " ".join(MULTILINGUAL.values()) * 3
    cols, tokens = tok.encode_columns(text), tok.encode(text)
    assert len(cols.table) > 8  # so that the short slices below read only their own rows
    for a, b in [(0, 1), (5, 7), (len(tokens) - 2, len(tokens)), (0, len(tokens)), (3, len(tokens) - 3)]:
        assert cols[a:b] == tokens[a:b]
        assert [cols[i] for i in range(a, b)] == tokens[a:b]
