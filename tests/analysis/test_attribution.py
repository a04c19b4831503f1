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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=60))
def test_whole_number_shares_match_the_per_byte_spread(vocab, text):
    """`share_counts` against the obviously-correct spread: every token adds 1/len to each byte it
    covers, a token covering nothing adds its own characters' classes."""
    import numpy as np

    from tokviz.core.scripts import OTHER, SCRIPTS, char_classes, code_points

    for name in ("cl100k_base", "mistral-7b-v0.1", "kyoto-ja-unigram-8k"):
        tokens = vocab(name).encode(text)
        classes = char_classes(text)
        cps = code_points(text)
        byte_classes = np.repeat(classes, 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)).tolist()
        expected = [0.0] * len(SCRIPTS)
        for t in tokens:
            lo, hi = min(t.byte_start, len(byte_classes)), min(t.byte_end, len(byte_classes))
            if hi > lo:
                for b in range(lo, hi):
                    expected[byte_classes[b]] += 1 / (hi - lo)
            else:
                own = char_classes(t.text).tolist()
                for c in own:
                    expected[c] += 1 / len(own)
                if not own:
                    expected[OTHER] += 1
        assert attribute_tokens(text, tokens).tolist() == pytest.approx(expected, abs=1e-9)
