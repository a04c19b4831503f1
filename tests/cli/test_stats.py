"""`tokviz stats` as a script user sees it: tables, exports, progress, one-line errors."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

from tokviz.cli import main
from tokviz.cli.progress import ProgressBar
from tokviz.cli.stats import FilesProgress
from tokviz.core.resources import sample_text


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def korean_file(tmp_path):
    path = tmp_path / "korean.txt"
    path.write_text(sample_text("korean.txt"), encoding="utf-8")
    return path


def test_table_per_tokenizer_and_script(capsys, vocab, korean_file):
    code, out, err = run(capsys, "stats", str(korean_file), "-t", "cl100k_base", "-t", "qwen",
                         "--price", "qwen=0.4", "--limit", "300")
    assert code == 0 and err == ""
    text = sample_text("korean.txt")
    lines = out.splitlines()
    cl = next(line for line in lines if line.startswith("cl100k_base"))
    qwen = next(line for line in lines if line.startswith("qwen"))
    assert f"{len(vocab('cl100k_base').encode(text)):,}" in cl.split()
    assert f"{len(vocab('qwen').encode(text)):,}" in qwen.split() and "$0.000" in qwen
    assert "1.000" in cl.split()  # the first tokenizer is the baseline
    assert "fits 300" in out and "(to char" in out
    assert any(line.startswith("hangul") for line in lines)


def test_json_to_stdout(capsys, vocab, korean_file):
    code, out, _ = run(capsys, "stats", str(korean_file), "-t", "qwen", "-t", "cl100k_base",
                       "--baseline", "cl100k_base", "--json", "-")
    assert code == 0
    data = json.loads(out)
    qwen, cl = data["tokenizers"]
    assert data["baseline"] == "cl100k_base" and cl["ratio_to_baseline"] == 1.0
    assert qwen["tokens"] == len(vocab("qwen").encode(sample_text("korean.txt")))
    assert qwen["ratio_to_baseline"] == pytest.approx(qwen["tokens"] / cl["tokens"])


def test_baseline_not_in_list_is_added(capsys):
    code, out, _ = run(capsys, "stats", "--text", "hello", "-t", "qwen", "--baseline", "o200k_base",
                       "--csv", "-")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["tokenizer"] for r in rows] == ["qwen", "o200k_base"] and rows[1]["ratio_to_baseline"] == "1.0"


def test_csv_and_json_files(capsys, tmp_path, korean_file):
    out_csv, out_json = tmp_path / "out" / "s.csv", tmp_path / "s.json"
    out_csv.parent.mkdir()  # a missing folder is refused (test_an_output_in_a_missing_folder_...)
    code, out, err = run(capsys, "stats", str(korean_file), "-t", "mistral", "--csv", str(out_csv),
                         "--json", str(out_json))
    assert code == 0 and "mistral-7b-v0.1" in out and f"wrote {out_csv}" in err
    with open(out_csv, newline="", encoding="utf-8") as f:
        [row] = list(csv.DictReader(f))
    assert row["tokenizer"] == "mistral-7b-v0.1"
    assert int(row["tokens"]) == json.loads(out_json.read_text("utf-8"))["tokenizers"][0]["tokens"]


def test_folder_reports_skipped_files(capsys, tmp_path):
    (tmp_path / "a.txt").write_text("hello world")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "old.txt").write_bytes(b"na\xefve")
    code, out, err = run(capsys, "stats", str(tmp_path), "-t", "cl100k_base", "--json", "-")
    assert code == 0
    assert f"skipped {tmp_path / 'blob.bin'}: binary" in err and f"skipped {tmp_path / 'old.txt'}: not UTF-8" in err
    data = json.loads(out)
    assert data["tokenizers"][0]["tokens"] == 2 and len(data["skipped"]) == 2


def test_folder_skips_a_fifo_and_a_link_to_dev_zero(capsys, tmp_path):
    # both would hang a reader: a FIFO blocks until a writer comes, /dev/zero never ends
    (tmp_path / "a.txt").write_text("hello world")
    os.mkfifo(tmp_path / "pipe.txt")
    os.symlink("/dev/zero", tmp_path / "zeros.txt")
    code, out, err = run(capsys, "stats", str(tmp_path), "-t", "cl100k_base", "--json", "-")
    assert code == 0
    assert f"skipped {tmp_path / 'pipe.txt'}: a named pipe (FIFO), not a regular file" in err
    assert f"skipped {tmp_path / 'zeros.txt'}: a symlink to /dev/zero (a character device), not a regular file" in err
    data = json.loads(out)
    assert data["tokenizers"][0]["tokens"] == 2 and [f["path"] for f in data["files"]] == [str(tmp_path / "a.txt")]


def test_only_binary_files_is_an_error(capsys, tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"\x00")
    code, _, err = run(capsys, "stats", str(tmp_path / "blob.bin"), "-t", "qwen")
    assert code == 1 and "no text files to analyse (1 skipped)" in err


def test_formats_table(capsys, tmp_path):
    path = tmp_path / "d.json"
    path.write_text(sample_text("json_indented.json"))
    code, out, _ = run(capsys, "stats", str(path), "-t", "cl100k_base", "--formats")
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.split("format inflation")[1].splitlines()[2:]}
    assert int(rows["minified"][-1].replace(",", "")) < int(rows["indent"][-1].replace(",", ""))


@pytest.mark.parametrize("argv, message", [
    (["--text", "x", "--price", "cl100k_base"], "expected SPEC=USD_PER_MTOK"),
    (["--text", "x", "--price", "cl100k_base=cheap"], "'cheap' is not a non-negative number"),
    (["--text", "x", "--price", "qwen=1"], "qwen is not one of the tokenizers"),
    (["--text", "x", "--chars-per-token", "0"], "--chars-per-token: '0' is not a positive number"),
    (["--text", "x", "--limit", "-3"], "--limit: '-3' is not a whole number"),
    (["/no/such/path"], "/no/such/path: no such file or folder"),
    ([], "nothing to analyse"),
    (["--text", "x", "--csv", "-", "--json", "-"], "both want stdout"),
    (["--text", "x", "-t", "no-such-vocab"], "unknown tokenizer 'no-such-vocab'"),
])
def test_errors_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, "stats", "-t", "cl100k_base", *argv)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("tokviz: error: ") and message in err


def test_progress_bar_line():
    bar = ProgressBar(io.StringIO(), width=10, log_every=None)
    progress = FilesProgress(bar)
    assert progress.line(3, 10) == "[###.......] 3/10 files"
    assert progress.line(0, 0) == "[##########] 0/0 files"
    progress(1, 2)  # not a terminal: draws nothing
    progress(2, 2)
    assert bar.stream.getvalue() == ""


FULL_DISK_STATS = r"""
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
from tokviz.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("option", ["--csv", "--json"])
def test_an_output_that_cannot_be_written_is_one_line_naming_it(tmp_path, option):
    """A full disk said '[Errno 28] No space left on device' (which file?), a read-only folder
    named the hidden temporary."""
    import subprocess
    import sys

    (tmp_path / "t.txt").write_text("some text to count\n" * 20)
    out = tmp_path / "out.x"
    out.write_bytes(b"old")
    proc = subprocess.run([sys.executable, "-c", FULL_DISK_STATS, "stats", "-t", "cl100k_base", option, str(out),
                           str(tmp_path / "t.txt")], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"tokviz: error: cannot write {out}: File too large"
    assert out.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.x", "t.txt"]


@pytest.mark.parametrize("option", ["--csv", "--json"])
def test_an_output_in_a_missing_folder_is_refused_up_front(tmp_path, capsys, option):
    (tmp_path / "t.txt").write_text("text\n")
    out = tmp_path / "no" / "such" / "s.out"
    assert main(["stats", "-t", "cl100k_base", option, str(out), str(tmp_path / "t.txt")]) == 1
    assert f"{option} {out}: no such folder {out.parent}" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()
