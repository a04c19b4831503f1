"""Cancellation: a set event stops training quickly, raises TrainingCancelled, writes nothing."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from tests.training.texts import TRAINING
from tokviz.training import corpus
from tokviz.training.events import Progress, TokenTable, TrainingCancelled
from tokviz.training.trainer import train, train_texts


def test_cancel_before_start(tmp_path: Path):
    (tmp_path / "a.txt").write_text("hello world " * 100)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(TrainingCancelled):
        train([tmp_path], vocab_size=1000, cancel=cancel)


def test_cancel_during_merging_is_prompt_and_reports_merges():
    cancel = threading.Event()
    events: list[Progress] = []
    set_at: list[float] = []

    def progress(event: Progress) -> None:
        events.append(event)
        if event.phase == "merging" and not cancel.is_set():
            cancel.set()
            set_at.append(time.perf_counter())

    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghij한글") for _ in range(rng.randint(3, 12))) for _ in range(40000)]
    with pytest.raises(TrainingCancelled, match="merging"):
        train_texts([" ".join(words)], vocab_size=256 + 20000, progress=progress, cancel=cancel, min_frequency=1)
    # the trainer checks after every merge (well under 100 ms); the margin is for a loaded machine
    assert time.perf_counter() - set_at[0] < 0.5
    merging = [e for e in events if e.phase == "merging"]
    learned = [m for e in merging for m in e.new_merges]
    assert len(learned) == merging[-1].done  # every merge is reported once, in order
    table = TokenTable()
    assert len(table.add(learned)) == len(learned) and len(table) == 256 + len(learned)
    assert merging[-1].corpus_tokens < merging[0].corpus_tokens or len(merging) == 1


def test_cancel_during_counting_in_pool_terminates_workers(tmp_path: Path, monkeypatch):
    for i in range(6):
        (tmp_path / f"d{i}.txt").write_text(" ".join(TRAINING) * 200)
    monkeypatch.setattr(corpus, "POOL_MIN_BYTES", 0)
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    start = time.perf_counter()
    with pytest.raises(TrainingCancelled, match="counting|merging"):
        train([tmp_path], vocab_size=256 + 50000, jobs=2, cancel=cancel, min_frequency=1)
    assert time.perf_counter() - start < 5
    timer.cancel()


def test_cli_cancel_writes_nothing(tmp_path: Path):
    from tokviz.training import vocabfile

    cancel = threading.Event()
    cancel.set()
    (tmp_path / "a.txt").write_text("abc abc")
    with pytest.raises(TrainingCancelled):
        result = train([tmp_path / "a.txt"], vocab_size=300, cancel=cancel)
        vocabfile.save(result, tmp_path / "v")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_training_imports_no_qt():
    import subprocess
    import sys

    code = (
        "import sys, tokviz.training.trainer, tokviz.training.vocabfile, tokviz.cli.train, "
        "tokviz.training.curve; from tokviz.training import train; "
        "assert 'PySide6' not in sys.modules, 'PySide6 imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
