"""The merge loop against a slow reference, rustbpe, the known answer, and itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.training.texts import TRAINING
from tokviz.training._educational import merge, train_merges
from tokviz.training.bpe import BpeTrainer, MergeStats, train_bpe
from tokviz.training.events import TrainingError
from tokviz.training.pretokenize import CL100K_PATTERN, GPT2_PATTERN
from tokviz.training.trainer import train_texts
from tokviz.training.vocabfile import trained_tokenizer


def keyed(chunks: dict[bytes, int]) -> dict[str, int]:
    return {w.decode("latin-1"): f for w, f in chunks.items()}


# the compiled loop (`_merge.c`), one merge per call; and the Python loop: every merge through the
# numpy batch path, or every merge through the plain loop, or with the cold buckets at their
# busiest (COLD_BITS 0: a new pair below half the merge's count waits)
PATHS = {
    "native": {"NATIVE_STEP": 1},
    "batch": {"BATCH": 1, "NATIVE": False},
    "loop": {"BATCH": 10**9, "NATIVE": False},
    "cold": {"COLD_BITS": 0, "NATIVE": False},
}
HELPER_PATHS = {"mixed": {"NATIVE": False}}


def trained(chunks: dict[bytes, int], num_merges: int, *, path: str, min_frequency: int = 2) -> MergeStats:
    trainer = type("Trainer", (BpeTrainer,), {**PATHS, **HELPER_PATHS}[path])
    return trainer(keyed(chunks), min_frequency=min_frequency).train(num_merges)


def test_known_answer():
    result = train_texts(["aaabdaaabac"], vocab_size=259, pattern="none")
    assert [m[:2] for m in result.merges] == [(97, 97), (97, 98), (256, 257)]
    assert trained_tokenizer(result).encoding.encode("aaabdaaabac") == [258, 100, 258, 97, 99]


def test_stops_early_when_no_pair_repeats():
    result = train_texts(["abcd"], vocab_size=1000, pattern="none")
    assert result.merges == []
    assert result.vocab_size == 256
    result = train_texts(["abab xy"], vocab_size=1000, pattern="none")
    assert [m[:2] for m in result.merges] == [(97, 98)]
    assert result.vocab_size == 257


def test_min_frequency():
    chunks = keyed({b"ab": 5, b"cd": 3, b"ef": 2})
    assert [m[2] for m in train_bpe(chunks, 10, min_frequency=3).merges] == [5, 3]
    with pytest.raises(TrainingError, match="at least 1"):
        BpeTrainer(chunks, min_frequency=0)


def test_overlapping_pairs_count_windows_but_replace_once():
    stats = train_bpe(keyed({b"aaa": 1, b"aa": 1}), 5, min_frequency=1)
    assert stats.merges[0] == (97, 97, 3)
    assert stats.replaced[0] == 2
    assert stats.corpus_tokens() == [5, 3, 2]  # "aaa" -> [aa, a] -> [aaa]; "aa" -> [aa]


chunk_lists = st.dictionaries(
    st.binary(min_size=1, max_size=12).map(lambda b: bytes(x % 6 + 97 for x in b)),
    st.integers(1, 9),
    min_size=1,
    max_size=25,
)


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=150, deadline=None)
@given(chunk_lists, st.integers(1, 40), st.integers(1, 3))
def test_matches_reference_trainer(path, chunks, num_merges, min_frequency):
    expected = train_merges(chunks, num_merges, min_frequency=min_frequency)
    assert trained(chunks, num_merges, path=path, min_frequency=min_frequency).merges == expected


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.binary(min_size=1, max_size=30), st.integers(1, 1000), min_size=1, max_size=40))
def test_matches_reference_on_arbitrary_bytes(path, chunks):
    assert trained(chunks, 60, path=path).merges == train_merges(chunks, 60)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab c\n한글é😀", max_size=40), min_size=1, max_size=8))
def test_text_corpus_matches_reference_and_round_trips(texts):
    from collections import Counter

    import regex

    chunks = Counter(c.encode() for t in texts for c in regex.findall(CL100K_PATTERN, t))
    chunks.pop(b"", None)
    if not chunks:
        return
    result = train_texts(texts, vocab_size=256 + 30, pattern="cl100k")
    assert result.merges == train_merges(dict(chunks), 30)
    tok = trained_tokenizer(result)
    for text in texts:
        assert tok.encoding.decode(tok.encoding.encode(text)) == text


def _reference_curve(chunks: dict[bytes, int], merges: list[tuple[int, int, int]]) -> list[int]:
    """Corpus tokens before any merge and after each, by replaying the merges the slow way."""
    words = {tuple(w): f for w, f in chunks.items()}
    curve = [sum(len(w) * f for w, f in words.items())]
    for i, (left, right, _) in enumerate(merges):
        words = {merge(w, (left, right), 256 + i): f for w, f in words.items()}
        curve.append(sum(len(w) * f for w, f in words.items()))
    return curve


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=120, deadline=None)
@given(chunk_lists, st.integers(1, 40), st.integers(1, 12))
def test_counts_and_curve_match_reference_at_any_floor(path, chunks, num_merges, min_frequency):
    # pairs that fall below the floor are dropped as they fall: the merges must not notice
    expected = train_merges(chunks, num_merges, min_frequency=min_frequency)
    stats = trained(chunks, num_merges, path=path, min_frequency=min_frequency)
    assert stats.merges == expected
    assert stats.corpus_tokens() == _reference_curve(chunks, expected)


@pytest.mark.parametrize(
    "chunks",
    [
        {b"ababab": 1, b"ba": 1},  # adjacent occurrences: (b, a) is lost once per gap, (new, new) made
        {b"aaaa": 3, b"aaa": 2, b"a": 7},  # overlapping runs: windows counted, pairs replaced once
        {b"abcabc": 2, b"bcab": 2, b"cabca": 1},  # ties everywhere: the smallest pair first
        {b"xyxyxy": 1, b"yx": 2, b"xy": 1},  # a pair made by a merge ties with one that existed
        {b"ab": 1, b"cd": 1, b"abcd": 1},  # every pair falls to the floor together
        {b"a" * n: n for n in range(2, 12)} | {b"ba" * 5: 2},  # runs of every parity, side by side
    ],
)
@pytest.mark.parametrize("min_frequency", [1, 2, 3])
@pytest.mark.parametrize("path", PATHS)
def test_small_cases_match_reference(chunks, min_frequency, path):
    expected = train_merges(chunks, 30, min_frequency=min_frequency)
    stats = trained(chunks, 30, path=path, min_frequency=min_frequency)
    assert stats.merges == expected
    assert stats.corpus_tokens() == _reference_curve(chunks, expected)


def test_both_paths_agree_on_real_text():
    import json
    import os
    from collections import Counter

    import regex

    folder = os.path.dirname(json.__file__)
    texts = [Path(folder, f).read_text(encoding="utf-8") for f in sorted(os.listdir(folder)) if f.endswith(".py")]
    chunks = Counter(c.encode() for t in texts + TRAINING for c in regex.findall(CL100K_PATTERN, t))
    batch, loop = trained(dict(chunks), 1200, path="batch"), trained(dict(chunks), 1200, path="loop")
    assert len(batch.merges) > 600
    assert (batch.merges, batch.replaced) == (loop.merges, loop.replaced)
    mixed = trained(dict(chunks), 1200, path="mixed")  # large merges in numpy, small ones in the loop
    assert (batch.merges, batch.replaced) == (mixed.merges, mixed.replaced)
    native = train_bpe(keyed(dict(chunks)), 1200)  # what runs: the compiled loop
    assert (batch.merges, batch.replaced) == (native.merges, native.replaced)


def test_identical_across_runs():
    a = train_texts(TRAINING * 3, vocab_size=600)
    b = train_texts(list(reversed(TRAINING * 3)), vocab_size=600)
    assert a.merges == b.merges


def _rustbpe_merges(texts: list[str], vocab_size: int, pattern: str) -> list[bytes]:
    rustbpe = pytest.importorskip("rustbpe")
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(texts), vocab_size, pattern=pattern)
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])
    assert [r for _, r in ranks] == list(range(len(ranks)))
    return [bytes(b) for b, _ in ranks]


@pytest.mark.parametrize("pattern", [CL100K_PATTERN, GPT2_PATTERN])
def test_identical_merges_to_rustbpe(pattern):
    import json
    import os

    # real text: the json package's own sources, plus the multilingual training texts
    folder = os.path.dirname(json.__file__)
    texts = [Path(folder, f).read_text(encoding="utf-8") for f in sorted(os.listdir(folder)) if f.endswith(".py")]
    texts += TRAINING
    result = train_texts(texts, vocab_size=1500, pattern=pattern)
    ours = result.token_bytes()
    theirs = _rustbpe_merges(texts, 1500, pattern)
    # rustbpe also merges pairs seen once; up to where we stop (count < 2) both must agree exactly
    assert len(result.merges) > 600
    assert ours == theirs[: len(ours)]


def test_identical_merges_to_rustbpe_known_answer():
    assert _rustbpe_merges(["aaabdaaabac"], 259, r"[\s\S]+")[256:] == [b"aa", b"ab", b"aaab"]


def test_too_many_merges_is_an_error():
    with pytest.raises(TrainingError, match="at most"):
        train_bpe(keyed({b"ab": 2}), 2_000_000)


@pytest.mark.parametrize("path", PATHS)
def test_counts_past_32_bits(path):
    chunks = {b"abab": 3_000_000_000, b"abc": 5_000_000_000, b"cab": 7, b"bcbc": 2**40}
    stats = trained(chunks, 6, path=path)
    assert stats.merges == train_merges(chunks, 6)
    assert stats.merges[0] == (98, 99, 2**41 + 5_000_000_000)  # bc: twice in bcbc, once in abc
    assert stats.corpus_tokens() == _reference_curve(chunks, stats.merges)

