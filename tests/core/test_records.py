"""The dataset readers on real files: JSONL, JSON, Parquet, CSV, text, Arrow, folders, shards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tokviz.core.records import Example, Skip, list_shards, read_examples, read_shard

ROWS = [
    {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
    {"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]},
    {"prompt": "2+2=", "completion": "4"},
    {"text": "plain text"},
]


def _flat(batches):
    return [r for b in batches for r in b]


def test_jsonl_fields_and_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    lines = [json.dumps(r).encode() for r in ROWS] + [b'{"text": "torn', b'{"other": 1}', b'{"text": "\xff"}']
    path.write_bytes(b"\n".join(lines) + b"\n")
    records = [r for _, r in _flat(read_examples([path]))]
    assert [r.is_chat for r in records[:4]] == [True, True, False, False]
    assert records[1].messages == [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert records[2].text == "2+2=4" and records[3].text == "plain text"
    skips = records[4:]
    assert all(isinstance(s, Skip) for s in skips)
    assert [s.source for s in skips] == [f"{path}:line {n}" for n in (5, 6, 7)]
    assert "not JSON" in skips[0].reason and "no messages" in skips[1].reason and "UTF-8" in skips[2].reason


def test_dotted_field(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"a": {"b": "deep"}}) + "\n" + json.dumps({"a": {}}) + "\n")
    first, second = (r for _, r in _flat(read_examples([path], field="a.b")))
    assert isinstance(first, Example) and first.text == "deep"
    assert isinstance(second, Skip) and "a.b" in second.reason


def test_parquet_row_groups_csv_json_text_arrow_folder(tmp_path: Path) -> None:
    table = pa.Table.from_pylist([{"text": f"row {i}"} for i in range(10)])
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=4)
    (tmp_path / "b.csv").write_text("text,x\nfrom csv,1\n")
    (tmp_path / "c.json").write_text(json.dumps([{"text": "from json"}]))
    (tmp_path / "d.txt").write_text("a whole file")
    with pa.OSFile(str(tmp_path / "e.arrow"), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table.slice(0, 2))
    (tmp_path / "ignored.lock").write_text("x")
    shards = list_shards([tmp_path])
    assert [(Path(s.path).name, s.part) for s in shards] == [
        ("a.parquet", 0), ("a.parquet", 1), ("a.parquet", 2), ("b.csv", None), ("c.json", None),
        ("d.txt", None), ("e.arrow", None)]
    assert [r.source.rsplit(":", 1)[1] for b in read_shard(shards[1]) for r in b] == [f"row {i}" for i in (4, 5, 6, 7)]
    texts = [r.text for _, r in _flat(read_examples([tmp_path]))]
    assert texts == [f"row {i}" for i in range(10)] + ["from csv", "from json", "a whole file", "row 0", "row 1"]


def test_csv_quotes_and_a_quote_never_closed(tmp_path: Path) -> None:
    """Quoted commas, doubled quotes and line breaks are values (as pandas reads them); a quote
    never closed would make the rest of the file one value: that row is a Skip, and the rows
    before it are examples."""
    path = tmp_path / "d.csv"
    path.write_bytes(b'text,n\r\nfine,1\r\n"a, ""b""\nc",2\r\n\r\n"torn,3\r\nnext,4\r\nmore,5\r\n')
    records = [r for _, r in _flat(read_examples([path]))]
    assert [r.text for r in records[:2]] == ["fine", 'a, "b"\nc']
    assert len(records) == 3 and isinstance(records[2], Skip)
    assert records[2].source == f"{path}:row 2"
    assert records[2].reason == ("a quote in this row (from line 6) is never closed: "
                                 "the rest of the file would be one value")
    path.write_text('text\n"closed at the end\nof the file"\n')  # a last row that spans lines, closed
    assert [r.text for _, r in _flat(read_examples([path]))] == ["closed at the end\nof the file"]


def test_a_utf8_signature_and_tab_separated_values(tmp_path: Path) -> None:
    """Excel's "CSV UTF-8" and Windows editors start a file with a BOM: it is no part of the first
    key or line. A `.tsv` is a CSV separated by tabs."""
    (tmp_path / "a.csv").write_bytes(b"\xef\xbb\xbftext,n\r\nfrom csv,1\r\n")
    (tmp_path / "b.jsonl").write_bytes(b'\xef\xbb\xbf{"text": "first line"}\n{"text": "second"}\n')
    (tmp_path / "c.json").write_bytes(b'\xef\xbb\xbf[{"text": "from json"}]')
    (tmp_path / "d.tsv").write_text('text\tn\nwith, a comma\t1\n"quoted\ttab"\t2\n')
    texts = [r.text for _, r in _flat(read_examples([tmp_path]))]
    assert texts == ["from csv", "first line", "second", "from json", "with, a comma", "quoted\ttab"]


def test_csv_conversations_written_as_json_or_python_literals(tmp_path: Path) -> None:
    """A CSV cell is text: a `messages` column holds JSON, or the Python literal that pandas'
    `to_csv` (and so `datasets`' `to_csv`) writes. A `messages` cell that is neither is a Skip,
    not a text of brackets; a text field that merely looks like a list stays a text."""
    import csv

    path = tmp_path / "chat.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["messages", "tools"])
        w.writerow([json.dumps([{"role": "user", "content": "hi"}]), ""])
        w.writerow([repr([{"content": "a", "role": "user"}, {"content": "b", "role": "assistant"}]),
                    repr([{"type": "function", "function": {"name": "f"}}])])
        w.writerow(["just words", ""])
    first, second, third = (r for _, r in _flat(read_examples([path])))
    assert first.messages == [{"role": "user", "content": "hi"}] and first.tools is None
    assert second.messages == [{"content": "a", "role": "user"}, {"content": "b", "role": "assistant"}]
    assert second.tools == [{"type": "function", "function": {"name": "f"}}]
    assert isinstance(third, Skip) and "'messages' is a string" in third.reason
    path = tmp_path / "code.jsonl"
    path.write_text(json.dumps({"text": '[{"a": 1}]'}) + "\n" + json.dumps({"text": "[1, 2]"}) + "\n")
    assert [r.text for _, r in _flat(read_examples([path], field="text"))] == ['[{"a": 1}]', "[1, 2]"]


def test_utf16_files_are_one_skip_saying_how_to_convert(tmp_path: Path) -> None:
    """Windows Notepad's "Unicode" and PowerShell's `>` write UTF-16 with a byte-order mark: one
    skip per file that says so (a UTF-16 JSONL was one "not JSON" skip per line)."""
    rows = "".join(json.dumps({"text": f"row {i}"}) + "\n" for i in range(50))
    for name, text in [("a.jsonl", rows), ("b.json", '[{"text": "x"}]'), ("c.csv", "text\nx\n"), ("d.txt", "x")]:
        (tmp_path / name).write_bytes(text.encode("utf-16"))
    records = [r for _, r in _flat(read_examples([tmp_path]))]
    assert [Path(r.source).name for r in records] == ["a.jsonl", "b.json", "c.csv", "d.txt"]
    assert {r.reason for r in records} == {
        "UTF-16 text, not UTF-8 (it starts with a UTF-16 byte-order mark): "
        "save it as UTF-8 first (e.g. iconv -f UTF-16 -t UTF-8)"}
    shards = list_shards([tmp_path / "a.jsonl"], split_bytes=100)
    assert len(shards) > 1 and len([r for s in shards for b in read_shard(s) for r in b]) == 1


def test_byte_ranges_cover_every_line_once(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({"text": "x" * (i % 37)}) + "\n" for i in range(500)))
    whole = [r.text for b in read_shard(list_shards([path])[0]) for r in b]
    for size in (1, 7, 100, 4096):
        shards = list_shards([path], split_bytes=size)
        assert len(shards) > 1
        assert [r.text for s in shards for b in read_shard(s) for r in b] == whole


def test_limit_and_sample_are_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"text": str(i)}) + "\n" for i in range(100)))
    assert [i for i, _ in _flat(read_examples([path], limit=5))] == [0, 1, 2, 3, 4]
    a = [i for i, _ in _flat(read_examples([path], sample=10, seed=3, batch=4))]
    assert a == [i for i, _ in _flat(read_examples([path], sample=10, seed=3))]
    assert a == sorted(a) and len(set(a)) == 10
    assert a != [i for i, _ in _flat(read_examples([path], sample=10, seed=4))]


def test_records_import_no_qt() -> None:
    code = "import sys, tokviz.core.records; assert 'PySide6' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
