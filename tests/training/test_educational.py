"""The readable BPE: minbpe's known answer, and its encoding equals tiktoken's with the same merges."""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.training.texts import TRAINING
from tokviz.training._educational import encode, train_merges
from tokviz.training.trainer import train_texts
from tokviz.training.vocabfile import trained_tokenizer


def test_known_answer():
    merges = train_merges({b"aaabdaaabac": 1}, 3)
    assert encode(merges, b"aaabdaaabac") == [258, 100, 258, 97, 99]


@functools.cache
def trained():
    return train_texts(TRAINING, vocab_size=356, pattern="none")


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=60) | st.sampled_from(TRAINING))
def test_encoding_equals_tiktokens_with_the_same_merges(text):
    result = trained()
    assert encode(result.merges, text.encode("utf-8")) == trained_tokenizer(result).encoding.encode(text)
