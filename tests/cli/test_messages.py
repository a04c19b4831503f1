"""Clear one-line messages for odd input: argv bytes that are not UTF-8, a FIFO where a file is
expected, an id past what tiktoken accepts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tokviz.cli import main
from tokviz.core import catalog
from tokviz.core.tokenizer import TokenizerError

CONVERT = "convert it first, e.g. iconv -f LATIN1 -t UTF-8"


@pytest.mark.parametrize("command", [
    ["encode", "-t", "cl100k_base"], ["diff", "-t", "cl100k_base", "-t", "o200k_base"],
])
def test_argv_bytes_that_are_not_utf8_are_refused_as_on_stdin(command):
    tokviz = [sys.executable, "-m", "tokviz", *command]
    arg = subprocess.run([*tokviz, b"caf\xe9"], capture_output=True)
    stdin = subprocess.run([*tokviz, "-"], input=b"caf\xe9", capture_output=True)
    assert arg.stdout == stdin.stdout == b"" and arg.returncode == stdin.returncode != 0
    assert arg.stderr.decode().strip() == (
        f"tokviz: error: the text argument is not UTF-8 text (byte 0xe9 at offset 3); {CONVERT}"
    )
    assert stdin.stderr.decode().strip() == f"tokviz: error: stdin is not UTF-8 text (byte 0xe9 at offset 3); {CONVERT}"


def test_a_fifo_as_a_vocabulary_says_what_it_is(tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(TokenizerError, match=r"pipe is a named pipe \(FIFO\), not a vocabulary file"):
        catalog.load(str(tmp_path / "pipe"))
    assert main(["encode", "-t", str(tmp_path / "pipe"), "hi"]) == 1
    assert capsys.readouterr().err == (
        f"tokviz: error: {tmp_path / 'pipe'} is a named pipe (FIFO), not a vocabulary file\n"
    )


def test_stats_on_a_fifo_says_what_it_is(tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe")
    assert main(["stats", "-t", "cl100k_base", str(tmp_path / "pipe")]) == 1
    assert f"skipped {tmp_path / 'pipe'}: a named pipe (FIFO), not a regular file or folder" in capsys.readouterr().err


def test_a_start_id_past_tiktokens_range_is_refused_before_any_work(tmp_path, capsys):
    words = tmp_path / "absent.tsv"  # not even read: the start id is the first error
    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "e"), "--start-id", str(10**11)]) == 1
    assert capsys.readouterr().err.strip() == (
        "tokviz: error: start id 100,000,000,000 is past 4,294,967,294, the largest id tiktoken accepts")
    assert list(tmp_path.iterdir()) == []


def test_the_largest_start_id_still_loads(vocab, tmp_path, capsys):
    words = tmp_path / "w.tsv"
    words.write_text("一只猫\t5\n", encoding="utf-8")
    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "e"), "--start-id", str(2**32 - 2)]) == 0
    assert catalog.load(str(tmp_path / "e.tiktoken")).encode_ids("一只猫") == [2**32 - 2]
    words.write_text("一只猫\t5\n我是一只猫\t3\n", encoding="utf-8")
    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "f"), "--start-id", str(2**32 - 2)]) == 1
    assert "start id 4,294,967,294 leaves no room for 4 new ids" in capsys.readouterr().err
