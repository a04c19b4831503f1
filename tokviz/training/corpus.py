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
from typing import Callable, Iterator, Literal, Sequence

from tokviz.training.events import ProgressCallback, Reporter, TrainingError
from tokviz.training.pretokenize import ChunkCounter, compile_pattern
from tokviz.training.walk import Skipped

NonUtf8 = Literal["skip", "replace"]
BLOCK_SIZE = 1 << 20
TASKS_PER_JOB = 2  # few, large tasks: equal segments are only split once per task
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
    for last in _CUT.finditer(data, max(0, len(data) - (1 << 16))):  # noqa: B007 (keeps the last match)
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


def read_blocks(path: Path, *, non_utf8: NonUtf8, block_size: int | None = None) -> Iterator[tuple[str, int, bool]]:
    """Yield `(text, n_bytes, replaced)` blocks of a file; raise SkipFile with the reason."""
    block_size = block_size or BLOCK_SIZE
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


def count_files(
    paths: Sequence[str],
    pattern: str | None,
    non_utf8: NonUtf8,
    on_bytes: Callable[[int], None] | None = None,
) -> TaskResult:
    """Count the chunks of some files; keys are `pretokenize.chunk_key`s.

    Runs in a worker or in-process; `on_bytes(n)` is called as bytes are consumed (it may raise
    to cancel). A file skipped half-way (a bad byte in a later block) adds nothing.
    """
    on_bytes = on_bytes or _PROGRESS_HOOK
    compiled = compile_pattern(pattern)
    task = ChunkCounter(compiled)
    read, skipped = [], []
    for path in paths:
        blocks = read_blocks(Path(path), non_utf8=non_utf8)
        pending, counter, n_bytes, replaced = None, None, 0, False
        try:
            for text, size, rep in blocks:
                if pending is None and counter is None:
                    pending = text  # maybe the only block: then it goes straight to the task
                else:
                    if counter is None:
                        counter = ChunkCounter(compiled)
                        counter.add(pending)
                    counter.add(text)
                n_bytes, replaced = n_bytes + size, replaced or rep
                if on_bytes is not None:
                    on_bytes(size)
        except SkipFile as e:
            skipped.append(Skipped(str(path), str(e)))
            continue
        if counter is not None:
            task.merge(counter)
        elif pending is not None:
            task.add(pending)
        read.append((str(path), n_bytes, replaced))
    counted = task.counts(check=(lambda: on_bytes(0)) if on_bytes is not None else None)
    keyed = {k.encode("utf-8").decode("latin-1"): v for k, v in counted.items()}
    return TaskResult(keyed, read, skipped)


def _tasks(files: Sequence[Path], n_tasks: int) -> list[tuple[list[str], int]]:
    """Batch files into about `n_tasks` tasks of similar size (files stay in order within one)."""
    sizes = []
    for path in files:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)
    target = max(sum(sizes) / max(n_tasks, 1), 1)
    tasks, batch, size = [], [], 0
    for path, n in zip(files, sizes):
        batch.append(str(path))
        size += n
        if size >= target:
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
    jobs = max(1, jobs or os.cpu_count() or 1)
    tasks = _tasks(files, jobs * TASKS_PER_JOB)
    total_bytes = sum(size for _, size in tasks)
    reporter = Reporter(progress, cancel, "counting", total=total_bytes)
    report = CorpusReport()
    counts: dict[str, int] = {}

    def absorb(res: TaskResult) -> None:
        nonlocal counts
        if not counts:
            counts = res.counts
        else:
            get = counts.get
            for key, n in res.counts.items():
                counts[key] = get(key, 0) + n
        report.files_skipped.extend(res.skipped)
        for path, n, replaced in res.read:
            report.files_read += 1
            report.bytes += n
            if replaced:
                report.files_replaced.append(path)

    reporter.emit(0, **_extra(report))
    if jobs == 1 or len(tasks) < 2 or total_bytes < POOL_MIN_BYTES:
        consumed = 0

        def on_bytes(n: int) -> None:
            nonlocal consumed
            consumed += n
            reporter.tick(consumed, **_extra(report, consumed))

        absorb(count_files([str(p) for p in files], pattern, non_utf8, on_bytes))
    else:
        _count_in_pool(tasks, pattern, non_utf8, min(jobs, len(tasks)), reporter, report, absorb)
    report.files_skipped.sort(key=lambda s: s.path)
    report.unique_chunks = len(counts)
    reporter.emit(report.bytes, **_extra(report))
    return counts, report


_PROGRESS_HOOK: Callable[[int], None] | None = None  # set in pool workers


def _init_worker(shared) -> None:
    global _PROGRESS_HOOK

    def add(n: int) -> None:
        with shared.get_lock():
            shared.value += n

    _PROGRESS_HOOK = add


def _count_in_pool(tasks, pattern, non_utf8, jobs, reporter: Reporter, report: CorpusReport, absorb) -> None:
    ctx = mp_context()
    shared = ctx.Value("q", 0)
    order = sorted(tasks, key=lambda t: -t[1])  # big tasks first, so the last to finish is small
    # a fresh worker per task: a finished task's memory goes back to the system at once
    pool = ctx.Pool(jobs, initializer=_init_worker, initargs=(shared,), maxtasksperchild=1)
    done = 0
    try:
        pending = pool.imap_unordered(_run_task, [(b, pattern, non_utf8) for b, _ in order])
        while done < len(order):
            reporter.tick(shared.value, **_extra(report, shared.value))
            try:
                result = pending.next(timeout=0.05)
            except multiprocessing.TimeoutError:
                continue
            absorb(result)
            del result
            done += 1
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def _run_task(args: tuple[list[str], str | None, NonUtf8]) -> TaskResult:
    return count_files(*args)


def _extra(report: CorpusReport, consumed: int | None = None) -> dict:
    return {
        "files_read": report.files_read,
        "files_skipped": len(report.files_skipped),
        "bytes_read": report.bytes if consumed is None else consumed,
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
