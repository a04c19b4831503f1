"""`tokviz diff` as a script sees it: the exit status says identical (0), differ (1), trouble (2)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from tokviz.cli import main

KOREAN = "대한민국은 동아시아의 한반도 남부에 위치한 민주공화국이다."


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_differ_exits_1_and_prints_stretches_and_agreement(capsys, vocab):
    code, out, err = run(capsys, "diff", "-t", "cl100k_base", "-t", "o200k_base", KOREAN)
    assert code == 1 and err == ""
    first = out.splitlines()[0]
    assert first.startswith("── cl100k_base vs o200k_base: agreement ") and "% of boundaries" in first
    assert "ids differ" in first
    # the first stretch: cl100k cuts 대한 in two (tiktoken's ids), o200k does not; ids follow the tokens
    assert out.splitlines()[1:4] == [
        "chars 0-2 대한",
        "  cl100k_base  [대][한]  67945 24486",
        "  o200k_base   [대한]  151663",
    ]
    # fragments show their bytes, as encode shows them
    assert "⟨" in out


def test_identical_exits_0(capsys):
    code, out, _ = run(capsys, "diff", "-t", "cl100k_base", "-t", "cl100k_base", "hello  world\n")
    assert code == 0
    assert out == (
        "── cl100k_base vs cl100k_base: agreement 100.0% of boundaries, 0 differing stretches,"
        " identical ids\n"
    )


def test_same_cuts_other_ids_still_differ(capsys):
    code, out, _ = run(capsys, "diff", "-t", "cl100k_base", "-t", "r50k_base", "hi there")
    assert code == 1 and "0 differing stretches, ids differ" in out


def test_json_shape(capsys):
    code, out, _ = run(capsys, "diff", "--json", "-t", "cl100k_base", "-t", "o200k_base", KOREAN)
    assert code == 1
    result = json.loads(out)
    assert set(result) == {"identical", "reference", "chars", "tokenizers"}
    assert result["identical"] is False and result["reference"] == "cl100k_base" and result["chars"] == len(KOREAN)
    ref, other = result["tokenizers"]
    assert ref["agreement"] == 100.0 and ref["identical"] is True and "stretches" not in ref
    assert set(other) == {"tokenizer", "family", "count", "cuts", "agreement", "identical", "stretches"}
    assert other["tokenizer"] == "o200k_base" and 0 < other["agreement"] < 100
    first = other["stretches"][0]
    assert first["start"] == 0 and first["end"] == 2 and first["text"] == "대한"
    assert [t["id"] for t in first["reference"]] == [67945, 24486]
    assert [t["id"] for t in first["other"]] == [151663]
    assert set(first["other"][0]) == {"id", "text", "bytes", "start", "end", "kind"}


def test_stdin_and_special_policy(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'print("<|endoftext|>")')))
    code, out, _ = run(capsys, "diff", "--json", "--special", "all", "-t", "qwen", "-t", "qwen", "-")
    assert code == 0 and json.loads(out)["tokenizers"][1]["count"] == 4


@pytest.mark.parametrize("argv, message", [
    (["diff", "-t", "cl100k_base", "x"], "at least two tokenizers"),
    (["diff", "-t", "cl100k_base", "-t", "no-such-vocabulary", "x"], "unknown tokenizer 'no-such-vocabulary'"),
    (["diff", "-t", "qwen", "-t", "qwen", "--special", "raise", "<|endoftext|>"], "disallowed special token"),
    (["diff", "-t", "qwen", "-t", "qwen", "--file", "/nonexistent/x.txt"], "/nonexistent/x.txt"),
])
def test_trouble_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_a_refused_special_token_names_the_vocabulary_that_refuses_it(capsys):
    # mistral has no <|endoftext|>: only cl100k_base refuses the text, and the error says so
    code, out, err = run(capsys, "diff", "-t", "mistral-7b-v0.1", "-t", "cl100k_base", "--special", "raise",
                         "a <|endoftext|>")
    assert code == 2 and out == ""
    assert err.startswith("tokviz: error: cl100k_base: Encountered text corresponding to disallowed special token")


def test_usage_errors_exit_2_not_1():
    proc = subprocess.run([sys.executable, "-m", "tokviz", "diff", "x"], capture_output=True, text=True)
    assert proc.returncode == 2 and "-t/--tokenizer" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "tokviz", "diff", "-t", "cl100k_base", "-t", "o200k_base"],
                          input=KOREAN, capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stdout.startswith("── cl100k_base vs o200k_base")


def test_other_commands_still_exit_1_on_errors(capsys):
    code, _, err = run(capsys, "encode", "-t", "no-such-vocabulary", "x")
    assert code == 1 and "unknown tokenizer" in err
