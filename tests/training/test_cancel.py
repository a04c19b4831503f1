"""Cancellation: a set event stops training quickly, raises Cancelled, writes nothing."""

from __future__ import annotations

import io
import multiprocessing
import os
import random
import threading
from pathlib import Path

import pytest

from tests.training.texts import TRAINING
from tokviz.core.cancel import Cancelled
from tokviz.training import corpus, splitter
from tokviz.training.bpe import BpeTrainer
from tokviz.training.events import Progress, Reporter, TokenTable
from tokviz.training.trainer import train, train_texts


def test_cancel_before_start(tmp_path: Path):
    (tmp_path / "a.txt").write_text("hello world " * 100)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        train([tmp_path], vocab_size=1000, cancel=cancel)


@pytest.mark.parametrize("native", [True, False], ids=["compiled", "python"])
def test_cancel_during_merging_stops_at_once_and_reports_merges(monkeypatch, native: bool):
    monkeypatch.setattr(BpeTrainer, "NATIVE", native and BpeTrainer.NATIVE)
    # every batch of merges is reported: which event sets the cancel depends on the run, not the clock
    monkeypatch.setattr(Reporter, "due", lambda self: self.callback is not None)
    cancel = threading.Event()
    events: list[Progress] = []

    def progress(event: Progress) -> None:
        events.append(event)
        if sum(e.phase == "merging" for e in events) == 3:  # a few batches of merges first
            cancel.set()

    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghij한글") for _ in range(rng.randint(3, 12))) for _ in range(40000)]
    with pytest.raises(Cancelled, match="merging"):
        train_texts([" ".join(words)], vocab_size=256 + 20000, progress=progress, cancel=cancel, min_frequency=1)
    merging = [e for e in events if e.phase == "merging"]
    assert len(merging) == 3 and events[-1] is merging[-1]  # nothing reported after the cancel
    assert merging[-1].done < 20000
    learned = [m for e in merging for m in e.new_merges]
    assert len(learned) == merging[-1].done  # every merge is reported once, in order
    assert [e.done for e in merging] == sorted({e.done for e in merging})
    table = TokenTable()
    assert len(table.add(learned)) == len(learned) and len(table) == 256 + len(learned)
    tokens = [e.corpus_tokens for e in merging]
    assert tokens == sorted(tokens, reverse=True) and tokens[-1] < tokens[0]  # the curve falls


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("mode", ["pool", "helper"])
def test_cancel_during_counting_in_pool_terminates_workers(tmp_path: Path, monkeypatch, mode: str):
    for i in range(6):
        (tmp_path / f"d{i}.txt").write_text(" ".join(TRAINING) * 20)
    monkeypatch.setattr(corpus, "HELPER_MIN_BYTES", 0)
    if mode == "pool":
        monkeypatch.setattr(corpus, "POOL_MIN_BYTES", 0)
    before = set(multiprocessing.active_children())
    cancel = threading.Event()
    workers: list[int] = []

    helpers: list[splitter.SplitHelper] = []
    start = splitter.SplitHelper.__init__

    def start_helper(self, *args):
        start(self, *args)
        helpers.append(self)

    monkeypatch.setattr(splitter.SplitHelper, "__init__", start_helper)

    def progress(event: Progress) -> None:
        if event.phase == "counting" and not cancel.is_set():
            # the first counting event comes once the workers are up, before any result is in
            workers.extend(p.pid for p in set(multiprocessing.active_children()) - before)
            workers.extend(h.process.pid for h in helpers)  # a subprocess, not multiprocessing's
            cancel.set()

    with pytest.raises(Cancelled, match="counting"):
        train([tmp_path], vocab_size=256 + 50000, jobs=2, progress=progress, cancel=cancel, min_frequency=1)
    assert len(workers) == 1  # --jobs 2: one worker (or split helper), and this process counts too
    assert set(multiprocessing.active_children()) <= before
    assert not [pid for pid in workers if _alive(pid)]


class _InterruptedStream(io.StringIO):
    """stderr for the CLI that delivers a Ctrl-C (KeyboardInterrupt) when a phase's first line is shown."""

    def __init__(self, phase: str) -> None:
        super().__init__()
        self.phase, self.fired = phase, False

    def write(self, text: str) -> int:
        n = super().write(text)
        if not self.fired and text.startswith(self.phase):
            self.fired = True
            raise KeyboardInterrupt
        return n


@pytest.mark.parametrize("phase", ["counting", "merging"])
def test_cli_interrupted_writes_nothing_and_leaves_no_process(tmp_path: Path, monkeypatch, phase: str):
    import sys

    from tokviz.cli import main

    monkeypatch.setattr(corpus, "POOL_MIN_BYTES", 0)
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i in range(4):
        (folder / f"d{i}.txt").write_text(" ".join(TRAINING) * 10)
    before = set(multiprocessing.active_children())
    err = _InterruptedStream(phase)
    monkeypatch.setattr(sys, "stderr", err)
    code = main(["train", str(folder), "-o", str(tmp_path / "v"), "--vocab-size", "5000", "--jobs", "2"])
    assert code == 130
    assert err.fired and "tokviz train: interrupted; nothing written" in err.getvalue()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
    assert set(multiprocessing.active_children()) <= before


def test_training_imports_no_qt():
    import subprocess
    import sys

    code = (
        "import sys, tokviz.training.trainer, tokviz.training.vocabfile, tokviz.cli.train, "
        "tokviz.training.curve; from tokviz.training import train; "
        "assert 'PySide6' not in sys.modules, 'PySide6 imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
