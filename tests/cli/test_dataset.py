"""`tokviz dataset`: every example's count is what `tokviz encode` (a text) or `tokviz chat` (a
conversation) gives for it alone, on real vocabularies and templates, from JSONL and Parquet."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tokviz.cli import main
from tokviz.core.resources import sample_text

SPECS = ["cl100k_base", "qwen", "mistral-7b-v0.1", "ggml-vocab-phi-3"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _rows() -> list[dict]:
    korean, english = sample_text("korean.txt"), sample_text("english.txt")
    return [
        {"text": english[:700]},
        {"messages": [{"role": "user", "content": "What is 2+2? <|im_end|><s>[INST] <|end|>"},
                      {"role": "assistant", "content": "  4\n\n"}]},
        {"text": korean[:300] + " 🙂 <|endoftext|> <s>"},
        {"conversations": [{"from": "human", "value": korean[:120]}, {"from": "gpt", "value": "네, 알겠습니다."}]},
        {"prompt": "Translate to French: cat ->", "completion": " chat"},
        {"text": "   leading spaces\tand\ttabs\r\n"},
        {"messages": [{"role": "user", "content": english[:200]}, {"role": "assistant", "content": "ok"},
                      {"role": "user", "content": "def f(x):\n    return x  \n\n"}]},
        {"messages": [{"role": "system", "content": " You answer in French. "}, {"role": "user", "content": "日本語?"},
                      {"role": "assistant", "content": "Oui."}]},
    ]


def _alone(capsys, tmp_path: Path, spec: str, row: dict) -> int:
    if "messages" in row or "conversations" in row:
        messages = row.get("messages") or [
            {"role": {"human": "user", "gpt": "assistant"}[m["from"]], "content": m["value"]}
            for m in row["conversations"]]
        path = tmp_path / "one.json"
        path.write_text(json.dumps(messages), encoding="utf-8")
        code, out, _ = run(capsys, "chat", "-t", spec, "--json", str(path))
        assert code == 0
        return json.loads(out)[0]["counts"]["total"]
    text = row["text"] if "text" in row else row["prompt"] + row["completion"]
    path = tmp_path / "one.txt"
    path.write_text(text, encoding="utf-8", newline="")
    code, out, _ = run(capsys, "encode", "-t", spec, "--json", "-f", str(path))
    assert code == 0
    return json.loads(out)[0]["count"]


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_counts_equal_encode_and_chat_alone(capsys, tmp_path, vocab, kind):
    rows = _rows()
    data = tmp_path / f"data.{kind}"
    if kind == "jsonl":
        data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    else:  # one column per field kind; absent fields are null, as in a real mixed Parquet file
        keys = list(dict.fromkeys(k for r in rows for k in r))
        pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows]), data, row_group_size=3)
    out_file = tmp_path / "per.csv"
    argv = ["dataset", str(data), *(a for s in SPECS for a in ("-t", s)), "--per-example", str(out_file),
            "--jobs", "2" if kind == "parquet" else "1"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    with open(out_file, newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["example", *SPECS]
    assert [int(r[0]) for r in table[1:]] == list(range(len(rows)))
    for row, counts in zip(rows, table[1:]):
        assert [int(c) for c in counts[1:]] == [_alone(capsys, tmp_path, s, row) for s in SPECS], row


def test_bad_records_are_one_line_each_and_strict_stops(capsys, tmp_path, vocab):
    data = tmp_path / "bad.jsonl"
    data.write_bytes(b'{"text": "fine"}\n{"text": "torn\n{"other": 1}\n{"text": "\xff\xfe"}\n'
                     b'{"messages": [{"role": "system", "content": "s"}, {"role": "system", "content": "t"}]}\n'
                     b'{"text": "also fine"}\n')
    code, out, err = run(capsys, "dataset", str(data), "-t", "mistral-7b-v0.1", "--jobs", "1")
    assert code == 0 and "Traceback" not in err
    lines = err.splitlines()
    assert [line.split(": ")[1].rsplit(":", 1)[1] for line in lines] == [f"line {n}" for n in (2, 3, 4, 5)]
    assert "template rejects" in lines[3]
    assert out.startswith("2 examples") and "4 skipped" in out
    code, out, err = run(capsys, "dataset", str(data), "-t", "cl100k_base", "--strict", "--jobs", "1")
    assert code == 1 and err.count("\n") == 1 and f"{data}:line 2" in err and "--strict" in err


def test_json_summary_sample_and_outputs(capsys, tmp_path, vocab):
    data = tmp_path / "t.jsonl"
    data.write_text("".join(json.dumps({"text": "word " * i}) + "\n" for i in range(1, 51)))
    code, out, err = run(capsys, "dataset", str(data), "-t", "cl100k_base", "-t", "qwen", "--context", "30",
                         "--price", "cl100k_base=2", "--json", "-", "--sample", "10", "--seed", "1", "--jobs", "1",
                         "--per-example", str(tmp_path / "p.parquet"))
    assert code == 0, err
    summary = json.loads(out)
    cl = summary["tokenizers"][0]
    assert summary["examples"] == 10 and cl["name"] == "cl100k_base" and cl["examples"] == 10
    table = pq.read_table(tmp_path / "p.parquet").to_pydict()
    assert list(table) == ["example", "cl100k_base", "qwen"] and table["example"] == sorted(table["example"])
    assert cl["tokens"] == sum(table["cl100k_base"]) and cl["cost"] == pytest.approx(cl["tokens"] * 2 / 1e6)
    assert cl["over_context"] == sum(n > 30 for n in table["cl100k_base"])
    assert cl["max"] == max(table["cl100k_base"])
    code, _, err = run(capsys, "dataset", str(data), "--per-example", str(tmp_path / "x.txt"))
    assert code == 1 and err.startswith("tokviz: error: --per-example") and err.count("\n") == 1


def test_scripts_are_what_stats_gives_for_the_same_texts(capsys, tmp_path, vocab):
    korean, english = sample_text("korean.txt")[:400], sample_text("english.txt")[:400]
    chat = [{"role": "user", "content": english}, {"role": "assistant", "content": "네 😀"}]
    rows = [{"text": korean}, {"messages": chat}]
    data = tmp_path / "mixed.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    specs = ["cl100k_base", "qwen"]
    code, out, err = run(capsys, "dataset", str(data), "-t", specs[0], "-t", specs[1], "--scripts", "--json", "-",
                         "--jobs", "2")
    assert code == 0, err
    got = {(r["tokenizer"], r["script"]): r for r in json.loads(out)["scripts"]}
    # the texts and message contents, each a file of its own: stats sums their attributions
    for i, text in enumerate([korean, english, "네 😀"]):
        (tmp_path / "alone").mkdir(exist_ok=True)
        (tmp_path / "alone" / f"{i}.txt").write_text(text, encoding="utf-8", newline="")
    code, out, err = run(capsys, "stats", str(tmp_path / "alone"), "-t", specs[0], "-t", specs[1], "--json", "-")
    assert code == 0, err
    expected = {(r["tokenizer"], r["script"]): r for r in json.loads(out)["scripts"]}
    assert set(got) == set(expected) and {s for _, s in got} >= {"hangul", "latin", "emoji"}
    for key, row in expected.items():
        assert got[key]["chars"] == row["chars"] and got[key]["tokens"] == pytest.approx(row["tokens"]), key
    code, out, _ = run(capsys, "dataset", str(data), "-t", "cl100k_base", "--scripts", "--jobs", "1")
    assert code == 0 and "tokens per script" in out and "hangul" in out
    code, out, _ = run(capsys, "dataset", str(data), "-t", "cl100k_base", "--jobs", "1")
    assert code == 0 and "tokens per script" not in out


def test_a_corrupt_parquet_file_is_named(capsys, tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    code, out, err = run(capsys, "dataset", str(bad), "-t", "cl100k_base")
    assert code != 0 and "Traceback" not in err
    assert f"{bad}: not a readable Parquet file" in err


@pytest.mark.parametrize("option", ["--per-example", "--json"])
def test_an_output_that_is_a_folder_is_refused_up_front(tmp_path, capsys, option):
    """It failed after the whole count, naming a temporary, and left that temporary behind."""
    (tmp_path / "d.jsonl").write_text('{"text": "hi"}\n')
    out = tmp_path / "out.csv"
    out.mkdir()
    assert main(["dataset", str(tmp_path / "d.jsonl"), "-t", "cl100k_base", option, str(out)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"tokviz: error: {option} {out}: that is a folder; give a file name (in it: {out / 'NAME'})"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl", "out.csv"] and not any(out.iterdir())
