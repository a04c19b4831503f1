"""`encode_columns` states exactly what `encode` states, for every backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core.columns import TokenColumns

from .texts import MULTILINGUAL

NAMES = ["cl100k_base", "qwen", "tokviz-samples", "mistral-7b-v0.1", "deepseek-v3"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("policy", [{}, {"allowed_special": "all"}])
def test_columns_equal_tokens_on_the_sample_set(vocab, name, policy):
    tok = vocab(name)
    for label, text in MULTILINGUAL.items():
        cols = tok.encode_columns(text, **policy)
        assert list(TokenColumns(cols)) == tok.encode(text, **policy), label
        assert cols.n_bytes == len(text.encode("utf-8"))
        assert cols.ids.dtype == np.int64 and len(cols.key_index) == len(cols.ids)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_columns_equal_tokens_on_any_text(vocab, text):
    for name in ("cl100k_base", "mistral-7b-v0.1"):
        tok = vocab(name)
        assert list(TokenColumns(tok.encode_columns(text))) == tok.encode(text)


def test_disallowed_special_raises_the_same_error(vocab):
    with pytest.raises(ValueError, match="disallowed special token"):
        vocab("qwen").encode_columns("<|endoftext|>", disallowed_special="all")


@given(st.lists(st.integers(0, 300_000), max_size=200))
def test_distinct_ids_is_np_unique(ids):
    from tokviz.core.columns import distinct_ids

    array = np.array(ids, dtype=np.int64)
    distinct, inverse = distinct_ids(array)
    expected, expected_inverse = np.unique(array, return_inverse=True)
    assert distinct.tolist() == expected.tolist() and inverse.tolist() == expected_inverse.reshape(-1).tolist()
    assert inverse.dtype == np.int32
