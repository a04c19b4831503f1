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


SPANS_TEXT = "Héllo  WORLD ﬁn ｈｉ 根 안녕 👋🏽 <|endoftext|>\r\n\tend  " * 3


@pytest.mark.parametrize("name", ["cl100k_base", "mistral-7b-v0.1", "botchan-unigram-1k", "ggml-vocab-bert-bge",
                                  "ggml-vocab-llama-spm"])
def test_spans_that_meet_share_one_array_and_read_back_exactly(vocab, name):
    """Byte-level BPE byte spans always meet; SentencePiece's char spans of fragments overlap, and
    BERT's normalisation and llama-spm's leave gaps: only pairs that meet are shared."""
    from tokviz.core.columns import PatchedEnds, RunningColumn, share_bounds
    from tokviz.core.encode_server import compact, encode
    from tokviz.core.tokenizer import SpecialPolicy

    tokenizer = vocab(name)
    policy = SpecialPolicy.parse("all")
    plain = encode(tokenizer, SPANS_TEXT, policy)
    for cols in (encode(tokenizer, SPANS_TEXT, policy, model_adds=True), compact(plain)):
        shared = share_bounds(cols)
        for a, b in (("byte_starts", "byte_ends"), ("starts", "ends")):
            meet = bool(np.array_equal(getattr(cols, b)[:-1], getattr(cols, a)[1:]))
            start, end = getattr(shared, a), getattr(shared, b)
            if isinstance(end, PatchedEnds):  # char ends, most meeting: the bounds and the others
                size = end.dtype.itemsize
                assert a == "starts" and not meet and 0 < len(end.at) * (4 + size) < len(end) * size
                if isinstance(start, RunningColumn):  # the bounds themselves added up from the keys
                    assert end.base.bounds is start.bounds and len(start.bounds.at) * 16 <= len(end)
            elif isinstance(end, RunningColumn):  # spans that meet: added up from the key column
                assert meet and start.bounds is end.bounds
                assert len(end.bounds.at) * 16 <= len(end)  # the tokens not as long as their key's
            else:
                assert (start.base is not None and start.base is end.base) == meet, (name, a)
            assert start.tolist() == getattr(cols, a).tolist() and end.tolist() == getattr(cols, b).tolist()
            if not isinstance(start, RunningColumn):
                assert start.dtype == getattr(cols, a).dtype and (not meet or not start.flags.writeable)
            plain_start, plain_end = getattr(cols, a), getattr(cols, b)
            for v in sorted({0, 1, 7, 40, int(plain_end[-1]), int(plain_end[-1]) + 1}):
                for side in ("left", "right"):  # how the window finds the token at a position
                    assert int(np.searchsorted(end, v, side=side)) == int(np.searchsorted(plain_end, v, side=side))
                    assert int(np.searchsorted(start, v, side=side)) == int(np.searchsorted(plain_start, v, side=side))
        assert list(TokenColumns(shared)) == list(TokenColumns(cols))
    assert TokenColumns(share_bounds(plain)) == tokenizer.encode_with(SPANS_TEXT, policy)
    byte_gaps = int((plain.byte_ends[:-1] != plain.byte_starts[1:]).sum())
    char_gaps = int((plain.ends[:-1] != plain.starts[1:]).sum())
    if name in ("ggml-vocab-bert-bge", "ggml-vocab-llama-spm"):
        assert byte_gaps > 0  # the case that must stay unshared is really there
    if name in ("cl100k_base", "mistral-7b-v0.1"):
        assert byte_gaps == 0 and char_gaps > 0  # bytes meet, fragments' characters overlap


def test_patched_ends_read_as_the_array_they_stand_for():
    """Every way the window reads an end column (an index, a negative one, slices with steps,
    index arrays, `np.searchsorted` both sides, comparisons, arithmetic, `np.asarray`) gives
    what the plain array gives."""
    from tokviz.core.columns import PatchedEnds

    rng = np.random.default_rng(3)
    starts = np.cumsum(rng.integers(0, 3, 5000)).astype(np.int32)
    ends = np.append(starts[1:], starts[-1] + 2).astype(np.int32)
    at = np.flatnonzero(rng.uniform(size=4999) < 0.1).astype(np.int32)
    ends[at] = starts[at + 1] + 1  # fragments: a span reaches one past the next one's start
    ends = np.maximum.accumulate(ends)  # an end column is non-decreasing
    apart = np.flatnonzero(ends[:-1] != starts[1:])
    patched = PatchedEnds(np.append(starts, ends[-1]), apart.astype(np.int32), ends[apart])
    assert len(patched) == len(ends) and np.asarray(patched).tolist() == ends.tolist() == patched.tolist()
    for i in (0, 1, 17, 4998, 4999, -1, -5000, *apart[:20].tolist()):
        assert patched[i] == ends[i]
    for sl in (slice(None), slice(10, 20), slice(4990, None), slice(None, None, 7), slice(100, 3, -3), slice(5, 5)):
        assert patched[sl].tolist() == ends[sl].tolist()
    picks = rng.integers(-5000, 5000, 300)
    assert patched[picks].tolist() == ends[picks].tolist()
    for v in (-1, 0, 5, int(ends[777]), int(ends[-1]), int(ends[-1]) + 1, *ends[apart[:30]].tolist()):
        for side in ("left", "right"):
            assert int(np.searchsorted(patched, v, side=side)) == int(np.searchsorted(ends, v, side=side))
    values = ends[::37]
    found = np.searchsorted(patched, values, side="right")
    assert found.tolist() == np.searchsorted(ends, values, side="right").tolist()
    assert (patched == ends).all() and (patched - 1).tolist() == (ends - 1).tolist() and not (patched < starts).any()
    assert list(patched)[:50] == ends[:50].tolist()
    with pytest.raises(IndexError):
        patched[5000]


@pytest.mark.parametrize("n", [1, 31, 32, 33, 5000])
def test_running_bounds_read_as_the_arrays_they_stand_for(n):
    """Byte bounds added up from the key column (and a few tokens longer or shorter than their
    bytes, a dummy prefix's): every read the window makes of a byte column (an index, a negative
    one, slices with steps, index arrays few and many, `np.asarray`, iteration) gives what the
    plain arrays give, at both ends of every block of `STEP` bounds."""
    from tokviz.core.columns import RunningBounds

    rng = np.random.default_rng(n)
    lengths = rng.integers(1, 9, 300)
    key_index = rng.integers(0, 300, n).astype(np.uint16)
    steps = lengths[key_index].copy()
    odd = np.flatnonzero(rng.uniform(size=n) < 0.03)
    steps[odd] += rng.integers(-1, 3, len(odd)).clip(-(steps[odd] - 0))
    bounds = np.concatenate([[7], 7 + np.cumsum(steps)]).astype(np.int32)
    running = RunningBounds.of(bounds, lengths, key_index)
    assert running is not None
    starts, ends = bounds[:-1], bounds[1:]
    for column, plain in ((running.starts, starts), (running.ends, ends)):
        assert len(column) == n and np.asarray(column).tolist() == plain.tolist() == column.tolist()
        assert list(column) == plain.tolist()
        for i in {0, n - 1, -1, -n, *range(0, n, 31), *range(1, n, 32), *odd[:20].tolist()}:
            assert column[i] == plain[i], i
        for sl in (slice(None), slice(3, 40), slice(n - 5, None), slice(None, None, 7), slice(40, 3, -3),
                   slice(5, 5), slice(31, 33), slice(32, 64)):
            assert column[sl].tolist() == plain[sl].tolist(), sl
        for picks in (rng.integers(-n, n, 3), rng.integers(-n, n, n // 10 + 1), rng.integers(-n, n, n)):
            assert column[picks].tolist() == plain[picks].tolist()
        with pytest.raises(IndexError):
            column[n]
        with pytest.raises(IndexError):
            column[np.array([0, n])]


def test_bounds_unlike_their_tokens_bytes_stay_an_array():
    from tokviz.core.columns import RunningBounds

    key_index = np.arange(64) % 4
    lengths = np.array([1, 2, 3, 4])
    bounds = np.arange(65) * 2  # every token 2 bytes long: most are not as long as their bytes
    assert RunningBounds.of(bounds, lengths, key_index) is None


def test_tokens_read_by_slices_over_running_bounds_are_the_arrays_tokens(vocab):
    """`TokenColumns` reads both byte columns of a `RunningBounds` at once (in Python for a few
    tokens, with a token not as long as its bytes among them or not): the same tokens."""
    from tokviz.core.columns import RunningColumn, share_bounds
    from tokviz.core.encode_server import compact, encode
    from tokviz.core.tokenizer import SpecialPolicy

    tokenizer = vocab("mistral-7b-v0.1")
    cols = compact(encode(tokenizer, SPANS_TEXT * 5, SpecialPolicy.parse("all")))
    shared = share_bounds(cols)
    assert isinstance(shared.byte_ends, RunningColumn) and len(shared.byte_ends.bounds.at)
    plain, running = TokenColumns(cols), TokenColumns(shared)
    n = len(plain)
    for start, stop in [(0, 1), (0, 70), (1, 5), (30, 34), (31, 100), (n - 3, n), (0, n), (50, 50)]:
        assert running[start:stop] == plain[start:stop], (start, stop)
