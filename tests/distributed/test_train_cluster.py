"""`tokviz train --scheduler`: the counting stage as a map-reduce on a real Dask cluster (a
scheduler and two worker processes on loopback); the merges are byte-identical to a local run's,
and so is the corpus report, for folders of text files and for datasets."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.distributed.data import rows, write_corpus, write_jsonl, write_parquet
from tokviz.cli import main
from tokviz.core.cancel import Cancelled
from tokviz.training import cluster as train_cluster
from tokviz.training import corpus, datasets
from tokviz.training.trainer import TrainingResult, train


@pytest.fixture
def small_tasks(monkeypatch):
    """Pieces of 64 KB, map tasks of 128 KB, dataset shards of 20 KB: many tasks, several
    levels of reduce tasks, files counted in pieces by different workers."""
    monkeypatch.setattr(corpus, "BLOCK_SIZE", 64 << 10)
    monkeypatch.setattr(train_cluster, "TASK_BYTES", 128 << 10)
    monkeypatch.setattr(datasets, "SHARD_BYTES", 20_000)


def _same(a: TrainingResult, b: TrainingResult) -> None:
    assert a.merges == b.merges
    assert a.replaced == b.replaced
    assert a.initial_tokens == b.initial_tokens
    assert a.corpus.to_json() == b.corpus.to_json()


def test_merges_on_a_cluster_are_the_local_merges(tmp_path, scheduler, small_tasks):
    folder = write_corpus(tmp_path / "corpus")
    local = train([folder], vocab_size=900, jobs=1)
    remote = train([folder], vocab_size=900, scheduler=scheduler)
    _same(remote, local)
    report = local.corpus
    assert len(local.merges) == 900 - 256
    assert report.unique_chunks > 2000
    skipped = {Path(s.path).name: s.reason for s in report.files_skipped}
    assert set(skipped) == {"binary.txt", "latin1.txt", "late_bad.txt"}  # a late bad byte skips the whole file
    assert len(corpus.plan_pieces(folder / "big.txt", (folder / "big.txt").stat().st_size)) > 10


@pytest.mark.parametrize("pattern", ["none", r"\w+|\s+|[^\w\s]+"])
def test_without_a_preset_pattern_too(tmp_path, scheduler, small_tasks, pattern):
    """No split (each piece one chunk) and a pattern of one's own (split by `findall` alone)."""
    folder = write_corpus(tmp_path / "corpus", seed=40)
    _same(train([folder], vocab_size=600, pattern=pattern, scheduler=scheduler),
          train([folder], vocab_size=600, pattern=pattern, jobs=1))


def test_a_dataset_trains_alike_on_a_cluster(tmp_path, scheduler, small_tasks):
    jsonl = write_jsonl(tmp_path / "chats.jsonl", rows(400, seed=3), torn_every=50)
    parquet = write_parquet(tmp_path / "texts.parquet", rows(200, seed=4), row_group=30)
    local = train([jsonl, parquet], vocab_size=700, dataset=True)
    remote = train([jsonl, parquet], vocab_size=700, dataset=True, scheduler=scheduler)
    _same(remote, local)
    assert [s.path for s in local.corpus.files_skipped] == [f"{jsonl}:line {n}" for n in range(50, 409, 51)]
    only_text = train([parquet], vocab_size=500, field="text", scheduler=scheduler)
    assert only_text.corpus.files_read == 1 and only_text.params["field"] == "text"


def test_the_cli_writes_the_same_vocabulary(tmp_path, scheduler, small_tasks, capsys):
    jsonl = write_jsonl(tmp_path / "data.jsonl", rows(300, seed=6))
    for name, extra in (("local", []), ("remote", ["--scheduler", scheduler])):
        code = main(["train", str(jsonl), "--field", "text", "-o", str(tmp_path / name), "--vocab-size", "600",
                     *extra])
        assert code == 0, capsys.readouterr().err
    assert (tmp_path / "remote.tiktoken").read_bytes() == (tmp_path / "local.tiktoken").read_bytes()


@pytest.mark.parametrize("stage", ["_map_pieces", "_first_level", "_part", "_combine"])
def test_a_worker_killed_mid_count_changes_nothing(tmp_path, small_tasks, kill_first, stage):
    """Killed while counting, or while reducing: then the tables it held are lost too, and
    are made again from the tasks they came from."""
    folder = write_corpus(tmp_path / "corpus", seed=7)
    local = train([folder], vocab_size=800, jobs=1)
    marker = kill_first(stage)
    remote = train([folder], vocab_size=800, scheduler=kill_first.address)
    assert marker.exists()
    _same(remote, local)


def test_cancelling_cancels_the_tasks_on_the_cluster(tmp_path, scheduler, small_tasks):
    from distributed import Client

    folder = write_corpus(tmp_path / "corpus", seed=8)
    cancel = threading.Event()

    def progress(event):
        if event.phase == "counting" and event.done > 0:
            cancel.set()

    with pytest.raises(Cancelled):
        train([folder], vocab_size=800, scheduler=scheduler, progress=progress, cancel=cancel)
    with Client(scheduler, set_as_default=False) as client:
        deadline = time.monotonic() + 20
        left = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
    assert left == 0


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    from tokviz.core import cluster

    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)
    (tmp_path / "a.txt").write_text("some text to train on")
    code = main(["train", str(tmp_path), "-o", str(tmp_path / "v"), "--vocab-size", "300",
                 "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert err[-1].startswith("tokviz train: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    assert not (tmp_path / "v.tiktoken").exists()



def test_ctrl_c_stops_a_local_cluster_quietly(tmp_path):
    """Ctrl+C in a terminal reaches the whole process group, the local cluster's workers too:
    one line, status 130, nothing written, no process left behind."""
    import os
    import signal
    import subprocess
    import sys

    from tests.distributed.data import texts

    folder = tmp_path / "corpus"
    folder.mkdir()
    for i in range(8):
        (folder / f"{i}.txt").write_text(" ".join(texts(2000, seed=20 + i)), encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, "-m", "tokviz", "train", str(folder), "-o", str(tmp_path / "v"), "--vocab-size", "5000",
         "--scheduler", "local:2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    for line in child.stderr:  # the first counting line: the cluster is up, the tasks are out
        lines.append(line)
        if line.startswith("counting"):
            break
    os.killpg(child.pid, signal.SIGINT)
    with child.stderr:
        lines += child.stderr.readlines()
    assert child.wait(timeout=60) == 130
    assert lines[-1] == "tokviz train: interrupted; nothing written\n"
    assert not any("Traceback" in line or "KeyboardInterrupt" in line for line in lines)
    assert not (tmp_path / "v.tiktoken").exists()
    deadline = time.monotonic() + 10
    while True:  # processes of the group still running (an exited one waits for init as a zombie)
        states = subprocess.run(["ps", "-o", "stat=", "-g", str(child.pid)], capture_output=True, text=True).stdout
        left = [s for s in states.split() if not s.startswith("Z")]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert left == []
