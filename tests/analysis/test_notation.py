"""The notation's fragment runs read many at once exactly as one at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokviz.analysis.notation import (
    fragment_contexts,
    fragment_labels,
    fragment_labels_in_context,
    fragment_run_labels,
)

#: characters of every UTF-8 length, named ones, marks, and bytes that begin no character or
#: break one (overlong and surrogate leads, continuation bytes, bytes past U+10FFFF)
_CHARS = "a \t\n\r\x07\xa0\u0301\ufe0f\u200d\u3000\ufffd\uffff根👨é\U0010ffff"
_ODD_BYTES = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF]
_RUN_BYTES = st.one_of(
    st.text(alphabet=_CHARS, min_size=1, max_size=5).map(str.encode),
    st.lists(st.sampled_from(_ODD_BYTES), min_size=1, max_size=8).map(bytes),
)


@st.composite
def _runs(draw) -> list[list[bytes]]:
    """Runs of tokens: bytes cut anywhere (an empty token too), starting anywhere in a character."""
    runs = []
    for data in draw(st.lists(_RUN_BYTES, min_size=1, max_size=5)):
        data = data[draw(st.integers(0, len(data) - 1)):]
        cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=4)))
        bounds = [0, *cuts, len(data)]
        runs.append([data[a:b] for a, b in zip(bounds, bounds[1:])])
    return runs


@settings(max_examples=400, deadline=None)
@given(_runs(), st.booleans())
def test_many_runs_read_at_once_are_each_run_read_alone(runs, visible):
    expected = [got for run in runs for got in fragment_labels(run, visible_whitespace=visible)]
    labels, cont = fragment_run_labels([part for run in runs for part in run], np.array([len(r) for r in runs]),
                                       visible_whitespace=visible)
    assert list(zip(labels, cont.tolist())) == expected


@settings(max_examples=400, deadline=None)
@given(_runs(), st.booleans())
def test_each_token_read_in_its_context_is_read_as_in_its_run(runs, visible):
    """What a token reads of its run (`fragment_contexts`) is all its label and flag depend on."""
    parts = [part for run in runs for part in run]
    contexts = fragment_contexts(np.frombuffer(b"".join(parts), dtype=np.uint8),
                                 np.array([len(p) for p in parts], dtype=np.int64), np.array([len(r) for r in runs]))
    labels, cont = fragment_labels_in_context(parts, contexts, visible_whitespace=visible)
    expected = [got for run in runs for got in fragment_labels(run, visible_whitespace=visible)]
    assert list(zip(labels, cont.tolist())) == expected


def test_a_character_is_not_read_across_two_runs():
    """The same bytes as one run join `국`; as two runs each reads its bytes as U+FFFDs."""
    parts = [b"\xea\xb5", b"\xad"]
    assert fragment_run_labels(parts, np.array([2]))[0] == ["국", ""]
    labels, cont = fragment_run_labels(parts, np.array([1, 1]))
    assert labels == ["\ufffd\ufffd", "\ufffd"] and cont.tolist() == [False, False]
