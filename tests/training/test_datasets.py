"""`tokviz train` on datasets: the documents are each text, or each message of a conversation,
read with `tokviz dataset`'s readers; training on them is training on those strings."""

from __future__ import annotations

import json

import pytest

from tests.distributed.data import rows, write_jsonl, write_parquet
from tokviz.training import datasets
from tokviz.training.events import TrainingError
from tokviz.training.trainer import train, train_texts


def _documents(row: dict) -> list[str]:
    if "messages" in row:
        return [m["content"] for m in row["messages"]]
    if "conversations" in row:
        return [m["value"] for m in row["conversations"]]
    if "prompt" in row:
        return [row["prompt"] + row["completion"]]
    return [row["text"]]


def test_a_dataset_trains_as_its_documents(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets, "SHARD_BYTES", 10_000)  # byte-range shards, records cut at lines
    records = rows(200, seed=9)
    jsonl = write_jsonl(tmp_path / "data.jsonl", records, torn_every=40)
    with open(jsonl, "a", encoding="utf-8") as f:
        f.write(json.dumps({"text": "a NUL \0 inside"}) + "\n")
    result = train([jsonl], vocab_size=600, dataset=True)
    expected = train_texts([d for row in records for d in _documents(row)], vocab_size=600)
    assert result.merges == expected.merges
    assert result.initial_tokens == expected.initial_tokens
    skipped = [(s.path.rsplit(":", 1)[1], s.reason.split(" (")[0]) for s in result.corpus.files_skipped]
    assert skipped == [(f"line {n}", "not JSON") for n in range(40, 205, 41)] + [
        (f"line {200 + 5 + 1}", "binary")]  # (a NUL character)
    assert result.corpus.files_read == 1


def test_a_field_picks_the_texts(tmp_path):
    records = rows(120, seed=10)
    parquet = write_parquet(tmp_path / "data.parquet", records, row_group=25)
    result = train([parquet], vocab_size=500, field="text")
    texts = [r.get("text") or r.get("prompt") or "" for r in records]
    assert result.merges == train_texts([t for t in texts if t], vocab_size=500).merges
    assert result.params["field"] == "text"


def test_a_dataset_run_refuses_the_file_filters(tmp_path):
    jsonl = write_jsonl(tmp_path / "data.jsonl", rows(20))
    with pytest.raises(TrainingError, match="not what a dataset is read from"):
        train([jsonl], vocab_size=300, field="text", exclude=["*.md"])
