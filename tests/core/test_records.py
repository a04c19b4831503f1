"""Reading a dataset's examples from real files of every kind, with the rows that cannot be read
named and skipped."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tokviz.core.records import DatasetError, Example, Skipped, dataset_files, read_examples

CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_jsonl_rows_of_every_shape_and_the_bad_ones_named(tmp_path):
    path = tmp_path / "mix.jsonl"
    path.write_bytes(b"\n".join([
        json.dumps({"messages": CHAT}).encode(),
        json.dumps({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}).encode(),
        json.dumps({"prompt": "P", "completion": "C"}).encode(),
        json.dumps({"text": "plain"}).encode(),
        b'{"text": "torn',
        b"",
        json.dumps({"meta": {"body": "nested"}}).encode(),
        b'{"text": "caf\xe9"}',
    ]) + b"\n")
    items = list(read_examples([path]))
    assert [type(i).__name__ for i in items] == ["Example"] * 4 + ["Skipped"] * 3
    assert [i.number for i in items] == list(range(7))  # the blank line is no example
    chat, sharegpt, prompt, text = items[:4]
    assert chat.kind == "chat" and list(chat.messages) == CHAT
    assert [m["role"] for m in sharegpt.messages] == ["user", "assistant"]
    assert prompt.text == "PC" and text.text == "plain"
    torn, nested, latin = items[4:]
    assert torn.where == f"{path}:5" and "not a JSON value" in torn.reason
    assert nested.where == f"{path}:7" and "use --field" in nested.reason
    assert latin.where == f"{path}:8" and "not UTF-8 (byte 0xe9" in latin.reason
    [nested_text] = [i for i in read_examples([path], field="meta.body") if isinstance(i, Example)]
    assert nested_text.text == "nested" and nested_text.number == 5


def test_parquet_arrow_csv_json_and_text_files_in_a_folder(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    table = pa.table({"text": ["one", "two", None], "id": [1, 2, 3]})
    pq.write_table(table, folder / "a.parquet", row_group_size=2)
    with pa.OSFile(str(folder / "b.arrow"), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)  # what a `datasets` cache holds
    (folder / "c.csv").write_text('text,label\n"a, quoted",x\nb,y\n', encoding="utf-8")
    (folder / "d.json").write_text(json.dumps([{"messages": CHAT}, {"text": "t"}]), encoding="utf-8")
    (folder / "e.txt").write_text("a whole file", encoding="utf-8")
    (folder / ".hidden.jsonl").write_text('{"text": "no"}\n', encoding="utf-8")
    assert [p.name for p in dataset_files([folder])] == ["a.parquet", "b.arrow", "c.csv", "d.json", "e.txt"]
    items = list(read_examples([folder]))
    texts = [i.text if isinstance(i, Example) and i.kind == "text" else type(i).__name__ for i in items]
    assert texts == ["one", "two", "Skipped", "one", "two", "Skipped", "a, quoted", "b", "Example", "t", "a whole file"]
    assert items[2].where == f"{folder / 'a.parquet'} row 2"
    assert items[7].where == f"{folder / 'c.csv'}:3"


def test_limit_and_a_seeded_sample_keep_input_order(tmp_path):
    path = tmp_path / "n.jsonl"
    path.write_text("".join(json.dumps({"text": str(n)}) + "\n" for n in range(100)), encoding="utf-8")
    assert [i.number for i in read_examples([path], limit=3)] == [0, 1, 2]
    one = [i.number for i in read_examples([path], sample=10, seed=7)]
    assert one == sorted(one) and len(set(one)) == 10
    assert one == [i.number for i in read_examples([path], sample=10, seed=7)]
    assert one != [i.number for i in read_examples([path], sample=10, seed=8)]


def test_paths_that_are_not_datasets_are_errors(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"\0")
    with pytest.raises(DatasetError, match="no such file"):
        dataset_files([tmp_path / "missing.jsonl"])
    with pytest.raises(DatasetError, match="not a dataset file"):
        dataset_files([tmp_path / "x.bin"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError, match="no dataset files"):
        dataset_files([empty])


def test_a_json_file_that_is_not_a_list_is_one_skipped_row(tmp_path):
    path = tmp_path / "one.json"
    path.write_text('{"oops": 1}', encoding="utf-8")
    [item] = list(read_examples([path]))
    assert isinstance(item, Skipped) and "not a JSON list" in item.reason
