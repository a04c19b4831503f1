"""The split helper: the same chunk counts as splitting here, whichever batches it takes."""

from __future__ import annotations

import os
import signal
from array import array
from collections import Counter

import pytest
import regex

from tests.training.texts import TRAINING
from tokviz.training import splitter
from tokviz.training.events import TrainingError
from tokviz.training.pretokenize import CL100K_PATTERN, O200K_PATTERN, ChunkCounter, ascii_pattern, compile_pattern
from tokviz.training.splitter import SplitHelper, _pack, _unpack


@pytest.mark.parametrize("pattern", [CL100K_PATTERN, O200K_PATTERN])
@pytest.mark.parametrize("batch", [3, 1 << 14])
def test_counts_with_a_helper_are_the_counts_without(pattern: str, batch: int, monkeypatch):
    import tokviz.training.pretokenize as pretokenize

    monkeypatch.setattr(pretokenize, "_BATCH", batch)  # small batches: many, some sent and some kept
    texts = [("\n".join(TRAINING[i:] + TRAINING) + " 한국어  émoji 😀 x") * 3 for i in range(len(TRAINING))]
    expected: Counter[str] = Counter()
    for text in texts:
        expected.update(regex.findall(pattern, text))
    compiled = compile_pattern(pattern)
    alone, helped = ChunkCounter(compiled, engine="numpy"), ChunkCounter(compiled, engine="numpy")
    for text in texts:
        alone.add(text)
        helped.add(text)
    with SplitHelper(pattern, ascii_pattern(pattern)) as helper:
        assert helped.counts(helper=helper) == alone.counts() == expected
        assert helper.held == 0


@pytest.mark.parametrize("pattern", [CL100K_PATTERN, O200K_PATTERN])
def test_counts_shared_while_reading_are_the_counts_without(pattern: str, monkeypatch):
    """Batches of new segments go to the helper while texts are still added; segments seen
    again afterwards are split again for their new occurrences only."""
    import tokviz.training.pretokenize as pretokenize
    from tokviz.training.segcount import SegmentTable

    monkeypatch.setattr(SegmentTable, "PENDING", 7)
    monkeypatch.setattr(pretokenize, "SHARE_PENDING", 1)
    monkeypatch.setattr(pretokenize, "SHARE_BATCH", 3)
    texts = [("\n".join(TRAINING[i:] + TRAINING) + " 한국어  émoji 😀 x") * 2 for i in range(len(TRAINING))]
    expected: Counter[str] = Counter()
    for text in texts:
        expected.update(regex.findall(pattern, text))
    compiled = compile_pattern(pattern)
    with SplitHelper(pattern, ascii_pattern(pattern)) as helper:
        sent = []
        offer = helper.offer
        monkeypatch.setattr(helper, "offer", lambda *args, **kw: sent.append(offer(*args, **kw)) or sent[-1])
        counter = ChunkCounter(compiled, engine="numpy")
        counter.helper = helper
        for text in texts:
            counter.add(text)
        assert any(sent)  # some batches went while texts were added
        assert counter.counts(helper=helper) == expected
        assert helper.held == 0


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP")
def test_a_busy_helper_is_not_sent_more_than_it_holds():
    with SplitHelper(CL100K_PATTERN, ascii_pattern(CL100K_PATTERN)) as helper:
        os.kill(helper.process.pid, signal.SIGSTOP)  # busy: it answers nothing until continued
        try:
            offers = [helper.offer(1, [b" a"]) for _ in range(splitter.AHEAD + 2)]
        finally:
            os.kill(helper.process.pid, signal.SIGCONT)
        assert offers == [True] * splitter.AHEAD + [False, False]
        assert helper.finish()[0] == ([b" a"], array("q", [splitter.AHEAD]))


@pytest.mark.parametrize("counts", [{}, {b" the": 3, b"": 1, b"\0x": 2}, {"é ": 1, "\0": 5, "😀": 2**40}])
def test_packed_counts_come_back_the_same(counts):
    empty = b"" if any(isinstance(k, bytes) for k in counts) else ""
    keys, values = _unpack(*_pack(counts, empty))
    assert dict(zip(keys, values)) == counts and len(keys) == len(counts)


def test_the_helper_runs_this_tokviz_whatever_the_working_directory(tmp_path, monkeypatch):
    fake = tmp_path / "tokviz" / "training"
    fake.mkdir(parents=True)
    for folder in (fake.parent, fake):
        (folder / "__init__.py").write_text("")
    (fake / "splitter.py").write_text("raise SystemExit(3)\n")  # another checkout's helper
    monkeypatch.chdir(tmp_path)
    with SplitHelper(CL100K_PATTERN, ascii_pattern(CL100K_PATTERN)) as helper:
        assert helper.offer(1, [b" a b"])
        assert helper.finish()[0] == ([b" a", b" b"], array("q", [1, 1]))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_killed_helper_is_a_training_error_not_a_broken_pipe():
    """The CLI takes a BrokenPipeError for its output's reader gone and exits quietly: a helper
    killed mid-run must say so instead."""
    with SplitHelper(CL100K_PATTERN, ascii_pattern(CL100K_PATTERN)) as helper:
        helper.process.kill()
        helper.process.wait()
        with pytest.raises(TrainingError, match=r"the splitting process ended unexpectedly \(exit code -9\)"):
            helper.offer(1, [b" a"])  # a pipe with no reader left refuses any write
