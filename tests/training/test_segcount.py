"""Counting segments with numpy (`segcount`): the same segments, and chunks, as `re` and `regex`."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.files import write
from tokviz.training import corpus, segcount
from tokviz.training.corpus import count_corpus
from tokviz.training.pretokenize import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    SEGMENT,
    ChunkCounter,
    chunk_key,
    compile_pattern,
)
from tokviz.training.segcount import SegmentTable, count_block, cut_points

PATTERNS = [GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN]
# every kind of whitespace `re` knows (ASCII, the \x1c-\x1f separators, the non-ASCII ones),
# CJK without spaces, \r\n, combining marks, emoji, digits, contractions
ALPHABET = (" \t\n\r\x0b\x0c\x1c\x1f\x85\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
            "aZé한中文1²'s.,:!-/_\u0301\u200d😀\u00c2\u00e2\u0100")


def _segments(text: str) -> list[str]:
    found = SEGMENT.findall(text)
    if found and not found[-1]:
        found.pop()
    return found


def test_the_whitespace_table_is_str_isspace():
    spaces = {c for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    ascii_ = {c for c in spaces if c < 128}
    assert ascii_ == {c for c in range(128) if not segcount._NONSPACE[c]}
    wide = {int.from_bytes(chr(c).encode(), "big") for c in spaces if c >= 128}
    assert wide == set(segcount._SPACE2.tolist()) | set(segcount._SPACE3.tolist())
    assert all(len(chr(c).encode()) <= 3 for c in spaces)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=120))
def test_cut_points_are_segments_cuts(text):
    data = text.encode()
    cuts = cut_points(np.frombuffer(data, dtype=np.uint8)).tolist()
    pieces = [data[a:b].decode() for a, b in zip([0, *cuts], [*cuts, len(data)])]
    assert [p for p in pieces if p] == _segments(text)


def test_every_pair_of_characters_cuts_as_segment():
    chars = sorted(set(ALPHABET)) + [chr(c) for c in range(128)]
    for a in chars:
        text = "".join(a + " " + b for b in chars) + a + " "
        data = text.encode()
        cuts = cut_points(np.frombuffer(data, dtype=np.uint8)).tolist()
        pieces = [data[x:y].decode() for x, y in zip([0, *cuts], [*cuts, len(data)])]
        assert [p for p in pieces if p] == _segments(text), repr(a)


@pytest.fixture
def small(monkeypatch):
    """Windows of a few segments and flushes every few blocks: every seam gets exercised."""
    monkeypatch.setattr(segcount, "WINDOW", 16)
    monkeypatch.setattr(SegmentTable, "PENDING", 8)
    monkeypatch.setattr(segcount, "_powers_cache", [])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET, max_size=200), min_size=1, max_size=6), st.sampled_from(PATTERNS))
def test_numpy_counts_equal_findall_on_whole_texts(texts, pattern):
    compiled = regex.compile(pattern)
    counter = ChunkCounter(compiled, engine="numpy")
    expected: Counter[str] = Counter()
    for text in texts * 3:
        counter.add(text)
        expected.update(compiled.findall(text))
    expected.pop("", None)
    assert counter.counts() == expected


@pytest.mark.parametrize("pattern", PATTERNS)
def test_small_windows_and_flushes_count_exactly(small, pattern):
    from tests.training.texts import TRAINING

    compiled = regex.compile(pattern)
    texts = [*TRAINING, "中文没有空格的句子。" * 20, "a\u00a0 b\u3000 c\r\n d  e\u2028 f", "x " * 50]
    counter = ChunkCounter(compiled, engine="numpy")
    expected: Counter[str] = Counter()
    for i, text in enumerate(texts * 4):
        text = text[i % 7:]
        counter.add(text)
        expected.update(compiled.findall(text))
    assert len(counter.table) > 0
    assert counter.counts() == expected


def _weak_hashes(b, starts, ends):
    """A hash that collides all the time: the segment's length and first byte."""
    return (ends - starts).astype(np.uint64) * np.uint64(256) + b[starts].astype(np.uint64)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_hash_collisions_never_change_a_count(small, monkeypatch, pattern):
    from tests.training.texts import TRAINING

    monkeypatch.setattr(segcount, "_hashes", _weak_hashes)
    compiled = regex.compile(pattern)
    counter = ChunkCounter(compiled, engine="numpy")
    expected: Counter[str] = Counter()
    for text in [*TRAINING, *TRAINING[::-1], "ab ac ad ab ac ba " * 30]:
        counter.add(text)
        expected.update(compiled.findall(text))
    assert counter.segments  # the colliding segments were counted as strings
    assert counter.counts() == expected


def test_collisions_inside_a_block_fall_back_to_re(monkeypatch):
    monkeypatch.setattr(segcount, "_hashes", _weak_hashes)
    assert count_block(b"x ab ac ab y") is None  # ' ab' and ' ac' share a hash: count with re
    assert count_block(b"x ab ab y") is not None


def test_text_with_nul_or_few_segments_falls_back():
    assert count_block(b"a b\0 c d") is None
    assert count_block(b"one two") is None
    counter = ChunkCounter(compile_pattern(CL100K_PATTERN), engine="numpy")
    counter.add("a b\0 c d b\0 c")
    assert counter.counts() == Counter(regex.findall(CL100K_PATTERN, "a b\0 c d b\0 c"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_corpus_counted_with_numpy_in_pieces_and_workers(tmp_path: Path, monkeypatch, jobs: int):
    # pieces of ~20 kB (over NUMPY_MIN_BYTES) cut from files of mixed text, counted here or by
    # two workers, against findall on each whole file
    monkeypatch.setattr(corpus, "BLOCK_SIZE", 20_000)
    monkeypatch.setattr(corpus, "POOL_MIN_BYTES", 0)
    from tests.training.texts import TRAINING

    texts = []
    for i in range(3):
        text = "\r\n".join(TRAINING[i:] + TRAINING) * 6 + "中文没有空格。" * 500 + "x\u00a0 y\u3000 z\u2029 " * 300
        texts.append(text)
        write(tmp_path, f"doc{i}.txt", text)
    counts, report = count_corpus(sorted(tmp_path.glob("*.txt")), pattern=CL100K_PATTERN, jobs=jobs)
    expected: Counter[str] = Counter()
    for text in texts:
        expected.update(chunk_key(c) for c in regex.findall(CL100K_PATTERN, text))
    assert counts == dict(expected)
    assert report.files_read == 3


def _table_of(texts: list[str]) -> tuple[SegmentTable, Counter[str]]:
    """The segment table of counting `texts` with numpy (flushed), and its collision strings."""
    counter = ChunkCounter(compile_pattern(CL100K_PATTERN), engine="numpy")
    for text in texts:
        counter.add(text)
    counter.table.flush(counter.segments)
    return counter.table, counter.segments


def test_table_columns_are_int32_while_they_fit():
    from tests.training.texts import TRAINING

    table, _ = _table_of(TRAINING * 3)
    assert {table.counts.dtype, table.offsets.dtype, table.lengths.dtype} == {np.dtype(np.int32)}
    assert table.seen >= int(table.counts.max())  # the bound the narrow counts rest on


@pytest.mark.parametrize("pattern", PATTERNS)
def test_columns_past_the_narrow_bound_are_widened_and_count_exactly(small, monkeypatch, pattern):
    # a bound of 40: the counts (segments seen), offsets and lengths (bytes held) all pass it
    monkeypatch.setattr(segcount, "NARROW_MAX", 40)
    from tests.training.texts import TRAINING

    compiled = regex.compile(pattern)
    counter = ChunkCounter(compiled, engine="numpy")
    expected: Counter[str] = Counter()
    for text in [*TRAINING, "ab ab ab ab " * 30, *TRAINING]:
        counter.add(text)
        expected.update(compiled.findall(text))
    counter.table.flush(counter.segments)
    table = counter.table
    assert {table.counts.dtype, table.offsets.dtype, table.lengths.dtype} == {np.dtype(np.int64)}
    assert int(table.counts.max()) > 40 and len(table.buf) > 40
    assert counter.counts() == expected


def test_batches_let_the_table_go_before_the_first_batch():
    from tests.training.texts import TRAINING

    table, _ = _table_of(TRAINING * 2)
    assert len(table) > 7
    batches = table.batches(7)
    next(batches)
    assert len(table) == 0 and not table.buf  # emptied: only the gathered batches are held


def test_a_cancel_stops_the_batches_while_they_are_gathered():
    """Gathering a 100 MB corpus's table took ~0.8 s before the first batch: the cancel check
    runs for each batch gathered, so a cancel does not wait for the whole table."""
    from tests.training.texts import TRAINING
    from tokviz.core.cancel import Cancelled, check

    table, _ = _table_of(TRAINING * 2)
    assert len(table) > 14
    calls = []
    cancel = threading.Event()

    def checked() -> None:
        calls.append(1)
        if len(calls) == 2:
            cancel.set()  # asked while the second batch is about to be gathered
        check(cancel, "training")

    with pytest.raises(Cancelled):
        next(table.batches(7, checked))
    assert len(calls) == 2  # not one call per batch of the whole table


@pytest.mark.parametrize("size", [1, 5])
def test_batches_hold_every_segment_once_with_its_count(size):
    from tests.training.texts import TRAINING

    texts = [*TRAINING, "x\u00a0 y\u3000 z\u2029 " * 5, "中文 没有 空格 " * 4]
    table, overflow = _table_of(texts * 2)
    assert not overflow
    expected: Counter[str] = Counter()
    for text in texts * 2:
        expected.update(_segments(text)[1:-1])
    if size == 1:  # one segment a batch: each batch is that segment
        got: Counter[str] = Counter()
        for n, joined in table.batches(size):
            segment = b"".join(joined).decode()  # (an ASCII part, empty here, before the others)
            assert segment not in got
            got[segment] = n
        assert got == expected
    else:  # several a batch: the ASCII ones first, every byte seen its segment's count times
        held = 0
        for n, joined in table.batches(size):
            assert joined[0].isascii() and all(not part.isascii() for part in joined[1:])
            held += n * sum(map(len, joined))
        assert held == sum(len(s.encode()) * n for s, n in expected.items())


@pytest.mark.parametrize("taken", [0, 1, 3, 100])
def test_shared_batches_and_the_rest_hold_every_occurrence_once(taken, monkeypatch):
    """`share` gives out batches of the segments no batch held yet; a count that grows later is
    given out again by `batches` for its growth only, and a declined batch is offered again."""
    from tests.training.texts import TRAINING

    monkeypatch.setattr(SegmentTable, "PENDING", 5)  # many flushes: new segments between shares
    texts = [*TRAINING, "x\u00a0 y\u3000 z\u2029 " * 5, "中文 没有 空格 " * 4] * 3
    texts = [text for text in texts if count_block(text.encode()) is not None]  # (few segments: not here)
    expected: Counter[str] = Counter()
    for text in texts:
        expected.update(_segments(text)[1:-1])
    table, overflow = SegmentTable(), Counter[str]()
    got: Counter[str] = Counter()
    offers = 0

    def take(n: int, joined: list[bytes]) -> bool:
        nonlocal offers
        offers += 1
        if offers % 4 == 0 or offers > taken:  # declines some, and all past `taken`
            return False
        for part in joined:
            for segment in _segments(" x" + part.decode())[1:]:  # the segments laid end to end
                got[segment] += n
        return True

    for text in texts:
        found = count_block(text.encode())
        assert found is not None
        for block in found[2]:
            table.add(block, overflow)
            table.share(2, take)
    table.flush(overflow)
    assert not overflow and offers >= min(taken, 1)
    for n, joined in table.batches(3):
        assert n > 0
        for part in joined:
            for segment in _segments(" x" + part.decode())[1:]:
                got[segment] += n
    assert got == expected
