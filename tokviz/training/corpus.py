"""Read a corpus and count its chunks, in parallel across worker processes, streaming.

Each file is read in blocks (`BLOCK_SIZE`); a block is cut before a space that follows a visible
character, a point no preset pattern matches across (see `pretokenize._segments`), so very large
files never sit in memory whole and split the same as when read whole. (A custom pattern may
split differently there; with no pattern each block is one chunk.) Files with NUL bytes are binary and skipped; files that are not UTF-8 are
skipped or decoded with U+FFFD, by option; unreadable files are skipped. Every skip is reported
with its reason. Memory grows with the number of unique chunks, not with the corpus.

Worker processes are started with `forkserver` (or `spawn` where there is none), never plain
`fork`: the GUI process runs Qt threads. Small inputs are counted in-process.

This module does not walk folders (see `walk`) or merge (see `bpe`).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Literal, Sequence

from tokviz.training.events import ProgressCallback, Reporter, TrainingError
from tokviz.training.pretokenize import compile_pattern, count_chunks
from tokviz.training.walk import Skipped

NonUtf8 = Literal["skip", "replace"]
BLOCK_SIZE = 4 << 20
TASK_BYTES = 8 << 20  # files are batched into tasks of about this many bytes
POOL_MIN_BYTES = 4 << 20  # below this, a pool costs more than it saves
_CUT = re.compile(rb"[!-~] ")  # a printable ASCII character, then a space: cut between them


class SkipFile(Exception):
    """This file cannot be used; the message is the reason reported."""


@dataclass
class CorpusReport:
    files_read: int = 0
    files_skipped: list[Skipped] = field(default_factory=list)
    files_replaced: list[str] = field(default_factory=list)  # non-UTF-8, decoded with U+FFFD
    bytes: int = 0
    unique_chunks: int = 0

    def to_json(self) -> dict:
        return {
            "files_read": self.files_read,
            "files_skipped": [{"path": s.path, "reason": s.reason} for s in self.files_skipped],
            "files_replaced": list(self.files_replaced),
            "bytes": self.bytes,
            "unique_chunks": self.unique_chunks,
        }


def _cut_point(data: bytes) -> int:
    """Where to end a block: before the last space after a visible character, else after a
    newline, else at a character start."""
    last = None
    for last in _CUT.finditer(data, max(0, len(data) - (1 << 16))):
        pass
    if last is not None:
        return last.start() + 1
    newline = data.rfind(b"\n")
    if newline != -1:
        return newline + 1
    cut = len(data)
    while cut > 0 and (data[cut - 1] & 0xC0) == 0x80:  # back off over continuation bytes...
        cut -= 1
    if cut > 0 and data[cut - 1] >= 0xC0:  # ...and the lead byte they belong to
        cut -= 1
    return cut or len(data)


def read_blocks(path: Path, *, non_utf8: NonUtf8, block_size: int = BLOCK_SIZE) -> Iterator[tuple[str, int, bool]]:
    """Yield `(text, n_bytes, replaced)` blocks of a file; raise SkipFile with the reason."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise SkipFile(f"unreadable: {e.strerror or e}") from e
    with f:
        tail = b""
        while True:
            try:
                data = f.read(block_size)
            except OSError as e:
                raise SkipFile(f"unreadable: {e.strerror or e}") from e
            if b"\0" in data:
                raise SkipFile("binary (NUL bytes)")
            data, eof = tail + data, not data
            cut = len(data) if eof else _cut_point(data)
            block, tail = data[:cut], data[cut:]
            if block:
                try:
                    yield block.decode("utf-8"), len(block), False
                except UnicodeDecodeError as e:
                    if non_utf8 == "skip":
                        raise SkipFile(f"not UTF-8 (byte {e.start} of a block: {e.reason})") from e
                    yield block.decode("utf-8", errors="replace"), len(block), True
            if eof:
                return


@dataclass
class TaskResult:
    counts: dict[str, int]
    read: list[tuple[str, int, bool]]  # (path, bytes, replaced)
    skipped: list[Skipped]


def count_files(paths: Sequence[str], pattern: str | None, non_utf8: NonUtf8) -> TaskResult:
    """Count the chunks of some files (run in a worker); keys are `pretokenize.chunk_key`s."""
    compiled = compile_pattern(pattern)
    total: Counter[str] = Counter()
    read, skipped = [], []
    for path in paths:
        counts: Counter[str] = Counter()  # per file: a file skipped half-way adds nothing
        n_bytes, replaced = 0, False
        try:
            for text, size, rep in read_blocks(Path(path), non_utf8=non_utf8):
                count_chunks(text, compiled, counts)
                n_bytes, replaced = n_bytes + size, replaced or rep
        except SkipFile as e:
            skipped.append(Skipped(str(path), str(e)))
            continue
        total.update(counts)
        read.append((str(path), n_bytes, replaced))
    keyed = {k.encode("utf-8").decode("latin-1"): v for k, v in total.items()}
    return TaskResult(keyed, read, skipped)


def _tasks(files: Sequence[Path]) -> list[tuple[list[str], int]]:
    tasks, batch, size = [], [], 0
    for path in files:
        try:
            n = path.stat().st_size
        except OSError:
            n = 0
        batch.append(str(path))
        size += n
        if size >= TASK_BYTES:
            tasks.append((batch, size))
            batch, size = [], 0
    if batch:
        tasks.append((batch, size))
    return tasks


def mp_context() -> multiprocessing.context.BaseContext:
    """forkserver where the platform has it, else spawn; never fork (Qt threads in the parent)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def count_corpus(
    files: Sequence[Path],
    *,
    pattern: str | None,
    non_utf8: NonUtf8 = "skip",
    jobs: int | None = None,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> tuple[dict[str, int], CorpusReport]:
    """Count the chunks of `files`; return `(chunk_key -> count, report)`.

    Raises TrainingCancelled when `cancel` is set (workers are terminated at once).
    """
    compile_pattern(pattern)  # a bad pattern fails here, in the caller's process
    tasks = _tasks(files)
    total_bytes = sum(size for _, size in tasks)
    jobs = max(1, jobs or os.cpu_count() or 1)
    reporter = Reporter(progress, cancel, "counting", total=total_bytes)
    counts: Counter[str] = Counter()
    report = CorpusReport()

    def absorb(res: TaskResult) -> None:
        counts.update(res.counts)
        report.files_skipped.extend(res.skipped)
        for path, n, replaced in res.read:
            report.files_read += 1
            report.bytes += n
            if replaced:
                report.files_replaced.append(path)
        reporter.emit(report.bytes, **_extra(report))

    reporter.emit(0, **_extra(report))
    if jobs == 1 or len(tasks) < 2 or total_bytes < POOL_MIN_BYTES:
        for batch, _ in tasks:
            for path in batch:  # one file at a time, so cancel is noticed between files
                reporter.check()
                absorb(count_files([path], pattern, non_utf8))
    else:
        _count_in_pool(tasks, pattern, non_utf8, min(jobs, len(tasks)), absorb, reporter)
    report.files_skipped.sort(key=lambda s: s.path)
    report.unique_chunks = len(counts)
    return dict(counts), report


def _count_in_pool(tasks, pattern, non_utf8, jobs, absorb, reporter: Reporter) -> None:
    # big tasks first, so the last one to finish is small
    order = sorted(tasks, key=lambda t: -t[1])
    pool = mp_context().Pool(jobs)
    try:
        results = pool.imap_unordered(_run_task, [(b, pattern, non_utf8) for b, _ in order])
        for _ in order:
            while True:
                reporter.check()
                try:
                    res = results.next(timeout=0.05)
                    break
                except multiprocessing.TimeoutError:
                    continue
            absorb(res)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _run_task(args: tuple[list[str], str | None, NonUtf8]) -> TaskResult:
    return count_files(*args)


def _extra(report: CorpusReport) -> dict:
    return {
        "files_read": report.files_read,
        "files_skipped": len(report.files_skipped),
        "bytes_read": report.bytes,
    }


def check_corpus(report: CorpusReport, counts: dict[str, int], paths: Sequence[str]) -> None:
    """Raise TrainingError when nothing usable was read, saying what was found instead."""
    where = ", ".join(str(p) for p in paths)
    if report.files_read == 0 and not report.files_skipped:
        raise TrainingError(f"no files to train on in {where} (empty, or everything excluded)")
    if report.files_read == 0:
        reasons = Counter(s.reason.split(" (")[0].split(":")[0] for s in report.files_skipped)
        summary = ", ".join(f"{n} {r}" for r, n in reasons.most_common())
        raise TrainingError(f"no readable text in {where}: all {len(report.files_skipped)} files skipped ({summary})")
    if not counts:
        raise TrainingError(f"no text to train on in {where}: the {report.files_read} files read are empty")
