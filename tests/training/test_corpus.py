"""Reading a corpus: bad files reported, big files streamed (the walk itself: tests/core/test_walk.py)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
import regex

from tests.files import write
from tokviz.core.walk import collect_files
from tokviz.training import corpus
from tokviz.training.corpus import count_corpus, read_blocks
from tokviz.training.events import TrainingError
from tokviz.training.pretokenize import CL100K_PATTERN, GPT2_PATTERN, chunk_key
from tokviz.training.trainer import read_word_counts, train


def test_bad_files_are_reported_not_fatal(tree: Path):
    counts, report = count_corpus(collect_files([tree]).files, pattern=CL100K_PATTERN, jobs=1)
    skipped = {Path(s.path).name: s.reason for s in report.files_skipped}
    assert skipped["blob.dat"] == "binary (NUL bytes)"
    assert skipped["latin1.txt"].startswith("not UTF-8")
    assert report.files_read == 4
    assert counts[chunk_key(" hello")] == 3 and counts[chunk_key("hello")] == 1


def test_non_utf8_replace(tree: Path):
    counts, report = count_corpus([tree / "latin1.txt"], pattern=CL100K_PATTERN, non_utf8="replace")
    assert report.files_read == 1 and report.files_replaced == [str(tree / "latin1.txt")]
    # "café crème" read as latin-1: each é/è becomes U+FFFD, which cl100k glues to the next letters
    assert counts[chunk_key("caf")] == counts[chunk_key("\ufffd")] == counts[chunk_key("\ufffdme")] == 1


def test_unreadable_entry_reported(tmp_path: Path):
    # a path that cannot be opened as a file (works as root too, unlike chmod 000)
    write(tmp_path, "ok.txt", "fine fine\n")
    (tmp_path / "dir.txt").mkdir()
    counts, report = count_corpus([tmp_path / "ok.txt", tmp_path / "dir.txt"], pattern=CL100K_PATTERN)
    assert report.files_read == 1
    assert report.files_skipped[0].reason.startswith("unreadable")


def _use(mode: str, monkeypatch) -> int:
    """Count in this process alone (`one`), with a split helper (`helper`) or on the pool (`pool`),
    whatever the size of the test's corpus; return the jobs to ask for."""
    monkeypatch.setattr(corpus, "HELPER_MIN_BYTES", 0)
    if mode == "pool":
        monkeypatch.setattr(corpus, "POOL_MIN_BYTES", 0)
    return 1 if mode == "one" else 2


@pytest.mark.parametrize("pattern", [CL100K_PATTERN, GPT2_PATTERN])
@pytest.mark.parametrize("mode", ["one", "helper", "pool"])
def test_large_file_streamed_in_pieces_counts_like_whole(tmp_path: Path, pattern: str, mode: str, monkeypatch):
    monkeypatch.setattr(corpus, "BLOCK_SIZE", 1000)
    jobs = _use(mode, monkeypatch)
    text = ("The quick brown fox, 한국어 문장도 섞고 😀 emoji.\n    indented  code(x)\n\n" * 300) + "end"
    path = write(tmp_path, "big.txt", text)
    blocks = list(read_blocks(path, non_utf8="skip"))
    assert len(blocks) > 10 and "".join(b for b, _, _ in blocks) == text
    counts, report = count_corpus([path], pattern=pattern, jobs=jobs)
    expected = Counter(chunk_key(c) for c in regex.findall(pattern, text))
    assert counts == dict(expected)
    assert report.files_read == 1 and report.bytes == len(text.encode())


@pytest.mark.parametrize("jobs", [1, 2])
def test_no_pattern_counts_each_line_once_across_pieces(tmp_path: Path, jobs: int, monkeypatch):
    monkeypatch.setattr(corpus, "BLOCK_SIZE", 1000)
    monkeypatch.setattr(corpus, "POOL_MIN_BYTES", 0)
    lines = ["The quick brown fox, 한국어 문장도 섞고 😀 emoji.\n", "    indented  code(x)\n", "\n"]
    text = "".join(lines * 300) + "end"
    path = write(tmp_path, "big.txt", text)
    blocks = [b for b, _, _ in read_blocks(path, non_utf8="skip", lines=True)]
    assert len(blocks) > 10 and "".join(blocks) == text
    assert all(b.endswith("\n") for b in blocks[:-1])  # no line is cut
    counts, report = count_corpus([path], pattern=None, jobs=jobs)
    assert counts == {chunk_key(line): 300 for line in lines} | {"end": 1}
    assert report.bytes == len(text.encode())


def test_no_pattern_cuts_a_line_far_longer_than_a_piece_at_a_space(tmp_path: Path):
    text = "word " * 2000 + "\nshort\n"  # one line of 10,000 bytes
    path = write(tmp_path, "long.txt", text)
    blocks = [b for b, _, _ in read_blocks(path, non_utf8="skip", block_size=1000, lines=True)]
    assert len(blocks) > 2 and "".join(blocks) == text


def test_file_without_a_safe_cut_stays_one_piece(tmp_path: Path):
    text = "한" * 1000 + "\n\n" + "글" * 1000  # no space after a visible ASCII character anywhere
    path = write(tmp_path, "wide.txt", text)
    assert [b for b, _, _ in read_blocks(path, non_utf8="skip", block_size=1000)] == [text]
    text = "한 " * 1000  # spaces, but only after Hangul: still no cut no pattern crosses
    path = write(tmp_path, "wide.txt", text)
    assert len(list(read_blocks(path, non_utf8="skip", block_size=1000))) == 1


def test_large_file_blocks_counted(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(corpus, "BLOCK_SIZE", 512)
    text = "word " * 2000
    path = write(tmp_path, "big.txt", text)
    counts, report = count_corpus([path], pattern=CL100K_PATTERN)
    assert report.bytes == len(text) and counts[chunk_key(" word")] == 1999


@pytest.mark.parametrize("jobs", [1, 2])
def test_late_bad_byte_skips_whole_file(tmp_path: Path, monkeypatch, jobs: int):
    monkeypatch.setattr(corpus, "BLOCK_SIZE", 64)
    monkeypatch.setattr(corpus, "POOL_MIN_BYTES", 0)
    path = write(tmp_path, "late.txt", ("fine text " * 50).encode() + b"\xff\xfe bad")
    good = write(tmp_path, "good.txt", "good words " * 40)
    counts, report = count_corpus([path, good], pattern=CL100K_PATTERN, jobs=jobs)
    assert counts == {chunk_key("good"): 1, chunk_key(" good"): 39, chunk_key(" words"): 40, chunk_key(" "): 1}
    assert report.files_read == 1 and report.bytes == good.stat().st_size
    assert [s.path for s in report.files_skipped] == [str(path)]
    assert report.files_skipped[0].reason.startswith("not UTF-8")


def test_empty_folder_error(tmp_path: Path):
    with pytest.raises(TrainingError, match="no files to train on"):
        train([tmp_path], vocab_size=300)


def test_all_binary_error(tmp_path: Path):
    write(tmp_path, "a.bin", b"\x00\x01")
    write(tmp_path, "b.bin", b"abc\x00")
    with pytest.raises(TrainingError, match=r"no readable text .* all 2 files skipped \(2 binary"):
        train([tmp_path], vocab_size=300)


def test_empty_files_error(tmp_path: Path):
    write(tmp_path, "empty.txt", "")
    with pytest.raises(TrainingError, match="empty"):
        train([tmp_path], vocab_size=300)


def test_bad_regex_error_before_reading(tmp_path: Path):
    write(tmp_path, "a.txt", "text")
    with pytest.raises(TrainingError, match="does not compile"):
        train([tmp_path], vocab_size=300, pattern="[unclosed")


def test_word_counts_file(tmp_path: Path):
    path = write(tmp_path, "counts.tsv", "hello\t5\n world\t3\n\\n\\n\t2\n\n")
    assert read_word_counts(path) == {"hello": 5, " world": 3, "\n\n": 2}
    result = train(word_counts=path, vocab_size=300)
    assert result.corpus.files_read == 1 and result.merges[0][2] == 5


@pytest.mark.parametrize("line", ["hello 5", "hello\tfive", "hello\t0", "\t3"])
def test_word_counts_bad_line_named(tmp_path: Path, line: str):
    path = write(tmp_path, "counts.tsv", f"ok\t1\n{line}\n")
    with pytest.raises(TrainingError, match=r"counts.tsv: line 2 is not"):
        read_word_counts(path)


def test_identical_merges_across_jobs(tmp_path: Path, monkeypatch):
    from tests.training.texts import TRAINING

    for i in range(12):
        write(tmp_path, f"doc{i:02d}.txt", "\n".join(TRAINING[i % len(TRAINING):] + TRAINING) * 3)
    one = train([tmp_path], vocab_size=800, jobs=_use("one", monkeypatch))
    helped = train([tmp_path], vocab_size=800, jobs=_use("helper", monkeypatch))
    two = train([tmp_path], vocab_size=800, jobs=_use("pool", monkeypatch))  # the pool on this small corpus
    three = train([tmp_path], vocab_size=800, jobs=3)
    assert one.merges == helped.merges == two.merges == three.merges
    assert one.corpus.unique_chunks == helped.corpus.unique_chunks == two.corpus.unique_chunks
    assert len(one.merges) > 300


def test_default_jobs_uses_the_cores_from_a_few_mb_on():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert corpus.default_jobs(1 << 20) == 1
    assert corpus.default_jobs(corpus.HELPER_MIN_BYTES - 1) == 1
    assert corpus.default_jobs(corpus.HELPER_MIN_BYTES) == min(cores, 4)
    assert corpus.default_jobs() == min(cores, 4)


def test_a_helper_that_cannot_start_leaves_the_split_here(tmp_path: Path, monkeypatch):
    from tokviz.training import splitter

    def no_interpreter(*args, **kwargs):
        raise FileNotFoundError("no python")

    monkeypatch.setattr(splitter.subprocess, "Popen", no_interpreter)
    path = write(tmp_path, "a.txt", "The quick brown fox, 한국어 😀 jumps. " * 200)
    counts, _ = count_corpus([path], pattern=CL100K_PATTERN, jobs=_use("helper", monkeypatch))
    assert counts == {chunk_key(c): n for c, n in Counter(regex.findall(CL100K_PATTERN, path.read_text())).items()}
