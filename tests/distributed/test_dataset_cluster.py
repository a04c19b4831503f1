"""`tokviz dataset --scheduler`: per-example counts and their order on a real Dask cluster (a
scheduler and two worker processes on loopback) are those of a local run, byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.distributed.data import rows, texts, write_jsonl, write_parquet
from tokviz.analysis import dataset
from tokviz.cli import main
from tokviz.core import cluster as cluster_module
from tokviz.core.cluster import ClusterError, ShippedFile, ShippedVocab
from tokviz.training import vocabfile
from tokviz.training.trainer import train_texts

SPECS = ["cl100k_base", "qwen", "mistral-7b-v0.1"]


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch) -> list[str]:
    """A JSONL file cut into many byte ranges (with torn lines), and a Parquet file of several
    row groups: many shards, more than the two workers hold at once."""
    monkeypatch.setattr(dataset, "SHARD_BYTES", 20_000)
    jsonl = write_jsonl(tmp_path / "chats.jsonl", rows(300, seed=1), torn_every=97)
    parquet = write_parquet(tmp_path / "texts.parquet", rows(200, seed=2), row_group=40)
    return [str(jsonl), str(parquet)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> str:
    """A vocabulary trained here: a rank file and its sidecar, which only this machine has."""
    result = train_texts(texts(200, seed=5), vocab_size=400, name="mine")
    folder = tmp_path_factory.mktemp("trained")
    vocabfile.save(result, folder / "mine")
    return str(folder / "mine.tiktoken")


def _run(capsys, tmp_path: Path, name: str, *argv: str) -> tuple[str, str, str]:
    per_example = tmp_path / f"{name}.jsonl"
    summary = tmp_path / f"{name}.json"
    code = main(["dataset", *argv, "--per-example", str(per_example), "--json", str(summary)])
    _, err = capsys.readouterr()
    assert code == 0, err
    skipped = "\n".join(line for line in err.splitlines() if line.startswith("tokviz: skipped"))
    return per_example.read_text(), summary.read_text(), skipped


def test_counts_on_a_cluster_are_the_local_counts_in_the_same_order(capsys, tmp_path, inputs, scheduler, trained):
    specs = [a for s in [*SPECS, trained] for a in ("-t", s)] + ["--template", "chatml"]  # the trained one has none
    local = _run(capsys, tmp_path, "local", *inputs, *specs, "--jobs", "1")
    remote = _run(capsys, tmp_path, "remote", *inputs, *specs, "--scheduler", scheduler)
    assert remote == local
    per_example = [json.loads(line) for line in local[0].splitlines()]
    assert len(per_example) == 300 + 200  # every row counted, torn lines skipped and reported
    assert local[2].count("not JSON") == len(range(96, 300, 97))
    assert len(dataset.list_shards(inputs, split_bytes=dataset.SHARD_BYTES)) > 8


def test_a_sample_on_a_cluster_is_the_local_sample(capsys, tmp_path, inputs, scheduler):
    argv = [*inputs, "-t", "cl100k_base", "-t", "qwen", "--sample", "150", "--seed", "3"]
    local = _run(capsys, tmp_path, "local", *argv, "--jobs", "1")
    remote = _run(capsys, tmp_path, "remote", *argv, "--scheduler", scheduler)
    assert remote == local


def test_the_scheduler_comes_from_the_environment(capsys, tmp_path, inputs, scheduler, monkeypatch):
    local = _run(capsys, tmp_path, "local", *inputs, "--jobs", "1")
    monkeypatch.setenv("TOKVIZ_SCHEDULER", scheduler)
    remote = _run(capsys, tmp_path, "remote", *inputs)
    assert remote == local


def test_a_worker_killed_mid_run_changes_nothing(capsys, tmp_path, inputs, kill_first):
    marker, scheduler = kill_first("_count_shard_task"), kill_first.address
    local = _run(capsys, tmp_path, "local", *inputs, "-t", "cl100k_base", "-t", "qwen", "--jobs", "1")
    remote = _run(capsys, tmp_path, "remote", *inputs, "-t", "cl100k_base", "-t", "qwen", "--scheduler", scheduler)
    assert marker.exists()  # a worker did die running a shard
    assert remote == local


def test_an_unreachable_scheduler_is_one_line(capsys, tmp_path, inputs, monkeypatch):
    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1.0)
    code = main(["dataset", *inputs, "--scheduler", "tcp://127.0.0.1:9"])
    out, err = capsys.readouterr()
    assert code == 1
    assert err.startswith("tokviz: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_version_mismatch_is_one_line(capsys, tmp_path, inputs, scheduler, monkeypatch):
    import tokviz

    monkeypatch.setattr(tokviz, "__version__", "0.0.0-other")
    code = main(["dataset", *inputs, "--scheduler", scheduler])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.startswith("tokviz: error: version mismatch on worker tcp://127.0.0.1:")
    assert "tokviz 0.1.0 there, 0.0.0-other here" in err and err.count("\n") == 1


def test_a_vocabulary_arrives_checked_by_sha256(tmp_path):
    shipped = ShippedVocab.of("cl100k_base")
    bad = ShippedFile(shipped.files[0].name, shipped.files[0].sha256, shipped.files[0].data[:-1] + b"x")
    with pytest.raises(ClusterError, match="arrived with sha256"):
        bad.check()
    with pytest.raises(ClusterError, match="arrived with sha256"):
        ShippedVocab(shipped.spec, (bad,), entry=shipped.entry).materialize(tmp_path / "bad")
    assert not [p for p in (tmp_path / "bad").rglob("*") if p.is_file()]  # nothing kept that does not match
    folder = shipped.materialize(tmp_path)
    assert (folder / shipped.files[0].name).read_bytes() == shipped.files[0].data


@pytest.mark.parametrize("command", ["dataset", "train"])
def test_without_a_scheduler_dask_is_never_imported(tmp_path, inputs, monkeypatch, command):
    monkeypatch.delenv("TOKVIZ_SCHEDULER", raising=False)
    argv = [*inputs, "--jobs", "1"] if command == "dataset" else [
        *inputs, "--dataset", "-o", str(tmp_path / "v"), "--vocab-size", "300"]
    code = (
        "import sys; from tokviz.__main__ import main; "
        f"status = main([{command!r}, *{argv!r}]); "
        "print(status, sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "0 []"


def test_a_worker_without_the_vocabulary_loads_the_one_sent(scheduler):
    """The workers' vocabulary folder is empty: what they load is what was sent, written under
    their own local directory by its hash."""
    from distributed import Client

    def on_worker(shipped: ShippedVocab):
        import os
        from pathlib import Path

        from tokviz.core.cluster import worker_directory

        empty = not any(Path(os.environ["TOKVIZ_DATA_DIR"]).iterdir())
        ids = shipped.load().encode_ordinary_batch(["hello world"])[0]
        written = sorted(p.name for p in (worker_directory() / "tokviz-vocab" / shipped.digest).iterdir())
        return empty, list(ids), written

    shipped = ShippedVocab.of("cl100k_base")
    with Client(scheduler, set_as_default=False) as client:
        empty, ids, written = client.submit(on_worker, shipped, pure=False).result()
    assert empty
    assert ids == [15339, 1917]
    assert written == [shipped.files[0].name]


def test_leaving_early_cancels_the_tasks_on_the_cluster(scheduler, inputs):
    from tokviz.analysis.dataset_cluster import ClusterCounts
    from tokviz.core.cluster import Cluster

    shards = dataset.list_shards(inputs, split_bytes=dataset.SHARD_BYTES)
    with Cluster(scheduler) as running:
        counts = ClusterCounts(running, dataset.DatasetOptions(("cl100k_base",)))
        results = counts.shards(shards, None)
        assert next(results)  # the first shard's counts; the next ones are in flight
        results.close()  # as on Ctrl+C or an error: the generator's way out
        counts.close()
        deadline = time.monotonic() + 20
        while (left := running.client.run_on_scheduler(_tasks)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert left == 0  # nothing of the run is left on the scheduler, the client still connected


def _tasks(dask_scheduler) -> int:
    return len(dask_scheduler.tasks)


def test_local_addresses():
    assert cluster_module.parse_local("local:3") == 3
    assert cluster_module.parse_local("local[2]") == 2
    assert cluster_module.parse_local("tcp://10.0.0.5:8786") is None
    with pytest.raises(ClusterError, match="local:N needs a whole number"):
        cluster_module.parse_local("local:0")


@pytest.mark.parametrize(("address", "why"), [("nonsense", "missing port number"),
                                              ("udp://1.2.3.4:1", "unknown address scheme")])
def test_an_address_that_cannot_work_is_one_line_at_once(tmp_path, address, why):
    path = tmp_path / "a.jsonl"
    path.write_text('{"text": "hello"}\n')
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tokviz", "dataset", str(path), "--scheduler", address],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith(f"tokviz: error: cannot reach the Dask scheduler at {address}: {why}")
    assert done.stderr.count("\n") == 1
    assert time.monotonic() - started < 15  # no client left behind to time out on the way out


def test_a_model_folder_sends_its_tokenizer_files_not_its_weights(tmp_path, vocab_path, scheduler, monkeypatch):
    import shutil

    from distributed import Client

    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(vocab_path("deepseek-v3"), folder / "tokenizer.json")
    config = {"add_bos_token": True, "bos_token": "<｜begin▁of▁sentence｜>"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(b"\0" * 100_000)
    (folder / "config.json").write_text("{}")
    shipped = ShippedVocab.of(str(folder))
    assert sorted(f.name for f in shipped.files) == ["tokenizer.json", "tokenizer_config.json"]

    from tokviz.core import catalog

    text = "Weights stay home; the tokenizer travels. 東京"
    here = catalog.load(str(folder)).encode_ordinary_batch([text])[0]
    with Client(scheduler, set_as_default=False) as client:
        there = client.submit(lambda v: list(v.load().encode_ordinary_batch([text])[0]), shipped, pure=False).result()
    assert there == list(here)
    monkeypatch.setattr(cluster_module, "SHIP_LIMIT", 1000)
    with pytest.raises(ClusterError, match="too much to send to the workers"):
        ShippedVocab.of(str(folder))
