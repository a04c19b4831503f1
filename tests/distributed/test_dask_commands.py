"""The set-up docs/scaling.md gives, run as written: `dask scheduler` and `dask worker` as
processes of their own (workers started in an empty folder, with an empty vocabulary folder),
and tokviz connecting to them; results as a local run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.distributed.data import rows, write_corpus, write_jsonl
from tokviz.cli import main
from tokviz.training import cluster as train_cluster
from tokviz.training import corpus
from tokviz.training.trainer import train

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dask_processes(tmp_path_factory):
    """`dask scheduler` and `dask worker --nworkers 2 --nthreads 1`; the scheduler's address."""
    home = tmp_path_factory.mktemp("worker-home")
    (home / "vocabs").mkdir()
    env = {**os.environ, "TOKVIZ_DATA_DIR": str(home / "vocabs"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    file = home / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(file)], cwd=home, env=env, **quiet)
    workers = None
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)  # written whole
        address = json.loads(file.read_text())["address"]
        workers = subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nworkers", "2",
                                    "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
                                   cwd=home, env=env, **quiet)
        from distributed import Client

        with Client(address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for process in (workers, scheduler):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def test_train_and_dataset_on_dask_processes(tmp_path, dask_processes, monkeypatch, capsys):
    monkeypatch.setattr(corpus, "BLOCK_SIZE", 64 << 10)
    monkeypatch.setattr(train_cluster, "TASK_BYTES", 256 << 10)
    folder = write_corpus(tmp_path / "corpus", seed=30)
    local = train([folder], vocab_size=700, jobs=1)
    remote = train([folder], vocab_size=700, scheduler=dask_processes)
    assert remote.merges == local.merges and remote.corpus.to_json() == local.corpus.to_json()

    jsonl = write_jsonl(tmp_path / "chats.jsonl", rows(150, seed=31), torn_every=60)
    outputs = []
    for name, extra in (("local", ["--jobs", "1"]), ("remote", ["--scheduler", dask_processes])):
        code = main(["dataset", str(jsonl), "-t", "cl100k_base", "-t", "qwen", "--per-example",
                     str(tmp_path / f"{name}.jsonl"), *extra])
        assert code == 0, capsys.readouterr().err
        outputs.append((tmp_path / f"{name}.jsonl").read_text())
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 150
