"""Tokens per script: each token spread over the bytes it covers, the sums adding up to the count."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.analysis.attribution import attribute_tokens
from tokviz.analysis.stats import analyze_text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=60))
def test_per_script_sum_invariant_on_arbitrary_text(vocab, text):
    for name in ("cl100k_base", "mistral-7b-v0.1"):  # byte-level BPE and SentencePiece (dummy prefix)
        tokens = vocab(name).encode(text)
        assert attribute_tokens(text, tokens).sum() == pytest.approx(len(tokens), abs=1e-9)


def test_script_attribution_follows_the_covered_bytes(vocab):
    tok = vocab("cl100k_base")
    r = analyze_text("hello 안녕", [tok]).results[0]
    assert r.script_tokens["latin"] == pytest.approx(1.0)  # `hello` is one token
    assert r.script_tokens["emoji"] == 0 and r.script_tokens["hangul"] > 1
