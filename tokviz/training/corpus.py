"""Read a corpus and count its chunks, in parallel across worker processes, streaming.

Each file is cut into pieces of about `BLOCK_SIZE` bytes (`plan_pieces`), each cut between a
visible ASCII character and a space: no preset pattern matches across that point (see
`pretokenize.SEGMENT`), so a piece counts the same alone as inside the whole file, a very large
file never sits in memory whole, and its pieces can be counted by different workers. (A custom
pattern may split differently at a cut.) With no pattern each line is a chunk, as SentencePiece
and tokenizers' trainers read files, so pieces are cut after a newline; a line much longer than a
piece is cut at a safe cut all the same. Files with NUL
bytes are binary and skipped; files that are not UTF-8 are skipped or decoded with U+FFFD, by
option; unreadable files are skipped; a file is counted whole or not at all. Every skip is
reported with its reason. Memory grows with the number of distinct chunks, not with the corpus.

Small inputs, and `jobs=1`, are counted in this process alone. From `HELPER_MIN_BYTES` on, `jobs > 1`
counts in this process and splits the distinct segments with a helper process as well
(`splitter.SplitHelper`); from `POOL_MIN_BYTES` on, on `pool.CountingPool`'s processes.

This module does not walk folders (see `tokviz.core.walk`) or merge (see `bpe`).
"""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from tokviz.core.walk import Skipped
from tokviz.training.events import ProgressCallback, Reporter, TrainingError
from tokviz.training.pieces import (
    NonUtf8,
    Piece,
    PieceLog,
    add_counts,
    compact,
    count_pieces,
    expand,
    read_piece,
)
from tokviz.training.pool import CountingPool
from tokviz.training.pretokenize import SEGMENT_SAFE, ChunkCounter, ascii_pattern, compile_pattern
from tokviz.training.splitter import SplitHelper

if TYPE_CHECKING:
    import regex

BLOCK_SIZE = 1 << 20  # bytes per piece: what one read holds (the text, and its segments list)
HELPER_MIN_BYTES = 4 << 20  # below this, splitting is too short to share with a helper process
POOL_MIN_BYTES = 64 << 20  # below this, the pool's workers start up (numpy) for longer than they save
_CUT = re.compile(rb"[!-~] ")  # a printable ASCII character, then a space: cut between them
_LINE = re.compile(rb"\n")  # with no pattern: cut after a newline


@dataclass
class CorpusReport:
    files_read: int = 0
    files_skipped: list[Skipped] = field(default_factory=list)
    files_replaced: list[str] = field(default_factory=list)  # non-UTF-8, decoded with U+FFFD
    bytes: int = 0
    unique_chunks: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "files_read": self.files_read,
            "files_skipped": [{"path": s.path, "reason": s.reason} for s in self.files_skipped],
            "files_replaced": list(self.files_replaced),
            "bytes": self.bytes,
            "unique_chunks": self.unique_chunks,
        }


def _next_cut(f: BinaryIO, offset: int, cut: re.Pattern[bytes] = _CUT, limit: int | None = None) -> int | None:
    """The first cut at or after `offset` found by `cut`, which matches the byte before the cut.

    The default cuts between a visible ASCII character and a space: no preset pattern matches
    across such a point (see `pretokenize.SEGMENT`). The cut is decided by the bytes after
    `offset` alone, so two readers of neighbouring pieces agree on it. None when the file has no
    cut from there on (or within `limit` bytes).
    """
    end = None if limit is None else offset + limit
    f.seek(offset - 1)
    while end is None or offset < end:
        window = f.read(1 << 16)
        if len(window) < 2:
            return None
        found = cut.search(window)
        if found is not None:
            at = offset + found.start()
            return at if end is None or at <= end else None
        offset += len(window) - 1
        f.seek(offset - 1)
    return None


def plan_pieces(path: Path, size: int, *, block_size: int | None = None, lines: bool = False) -> list[Piece]:
    """Cut a file into pieces of about `block_size` bytes at safe cuts (one piece when small).

    Pieces are read and counted on their own, by any worker; together they count exactly like
    the whole file. A file with no safe cut (say, a long line of CJK text without ASCII spaces)
    stays one piece: exactness first. With `lines`, a cut comes after a newline when one is
    near (within three blocks), so that no line is split.
    """
    block_size = block_size or BLOCK_SIZE
    name = str(path)
    if size <= block_size + (block_size >> 1):
        return [(name, 0, -1)]
    pieces, start = [], 0
    try:
        with open(path, "rb") as f:
            while start + block_size < size:
                cut = _next_cut(f, start + block_size, _LINE, 3 * block_size) if lines else None
                if cut is None:
                    cut = _next_cut(f, start + block_size)
                if cut is None or cut >= size:
                    break
                pieces.append((name, start, cut))
                start = cut
    except OSError:
        return [(name, 0, -1)]  # the worker that reads it reports why
    pieces.append((name, start, -1))
    return pieces


def read_blocks(
    path: Path, *, non_utf8: NonUtf8, block_size: int | None = None, lines: bool = False
) -> Iterator[tuple[str, int, bool]]:
    """Yield `(text, n_bytes, replaced)` for the pieces of a file in order; raise SkipFile."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    for piece in plan_pieces(path, size, block_size=block_size, lines=lines):
        yield read_piece(piece, non_utf8=non_utf8)


def default_jobs(total_bytes: int | None = None) -> int:
    """Counting processes when `jobs` is not given, for a corpus of `total_bytes` (None: large):
    the cores this process may run on, at most 4, from `HELPER_MIN_BYTES` on; below, 1 (count
    here). `--jobs n` is `n - 1` workers and this process (`pool`), or below `POOL_MIN_BYTES`
    this process and one helper that splits (`splitter`).

    Why (`python bench/bench_train.py --jobs 1 2` compares): on a large corpus a second counting
    process saves wall time for more memory. Below some tens of MB a pool worker's start-up (it
    imports numpy and regex) costs more than the second core gives, while a split helper starts
    in a few tens of ms, hidden behind the reading, and takes half the split, the larger part of
    counting. At most 4: each counting process holds the distinct segments of its share.
    """
    if total_bytes is not None and total_bytes < HELPER_MIN_BYTES:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(cores, 4)


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

    Files are cut into pieces (`plan_pieces`); with `jobs > 1` and enough bytes the pieces are
    counted by worker processes (`pool.CountingPool`), else here, with a helper process that
    splits (`splitter.SplitHelper`) from `HELPER_MIN_BYTES` on. Raises Cancelled when `cancel`
    is set (workers are ended at once).
    """
    compiled = compile_pattern(pattern)  # a bad pattern fails here, in the caller's process
    sizes = []
    for path in files:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)
    total_bytes = sum(sizes)
    jobs = max(1, jobs or default_jobs(total_bytes))
    reporter = Reporter(progress, cancel, "counting", total=total_bytes)
    reporter.check()
    lines = compiled is None
    pieces = [piece for path, size in zip(files, sizes) for piece in plan_pieces(path, size, lines=lines)]
    if jobs > 1 and len(pieces) > 1 and total_bytes >= POOL_MIN_BYTES:
        with CountingPool(min(jobs, len(pieces)) - 1, pattern, non_utf8) as pool:  # and this process
            reporter.emit(0, files_read=0, files_skipped=0, bytes_read=0)  # the workers are up
            counts, log = pool.count(pieces, reporter, {str(p): n for p, n in zip(files, sizes)})
    else:
        with _split_helper(pattern if jobs > 1 and total_bytes >= HELPER_MIN_BYTES else None) as helper:
            reporter.emit(0, files_read=0, files_skipped=0, bytes_read=0)
            counter = ChunkCounter(compiled)
            counter.helper = helper  # it splits while the corpus is read, and at the end
            consumed = 0

            def on_bytes(n: int) -> None:
                nonlocal consumed
                consumed += n
                reporter.tick(consumed, bytes_read=consumed)

            log = count_pieces(pieces, counter, non_utf8, on_bytes)
            packed = compact(counter.counts(check=reporter.check))
        del counter  # its chunk strings go before `expand` makes their keys
        counts = expand(*packed)
        del packed
    report = piece_report(log, pieces, counts, compiled, non_utf8)
    reporter.emit(report.bytes, files_read=report.files_read, files_skipped=len(report.files_skipped),
                  bytes_read=report.bytes)
    return counts, report


def _split_helper(pattern: str | None) -> AbstractContextManager[SplitHelper | None]:
    """A split helper for a preset `pattern` (None: no helper), or none if it cannot start."""
    if pattern is None or pattern not in SEGMENT_SAFE:
        return nullcontext()
    try:
        return SplitHelper(pattern, ascii_pattern(pattern))
    except OSError:  # no interpreter to run it (an embedded Python): this process splits alone
        return nullcontext()


def piece_report(
    log: PieceLog, pieces: Sequence[Piece], counts: dict[str, int], compiled: regex.Pattern[str] | None,
    non_utf8: NonUtf8,
) -> CorpusReport:
    """Sum the pieces up per file; take a skipped file's other pieces back out of `counts`.

    A file is all or nothing: a bad byte in one piece skips the whole file, so the pieces of it
    that were counted (maybe by another worker) are counted again here and subtracted. Rare.
    """
    report = CorpusReport()
    skipped: dict[str, Skipped] = {}
    for s in log.skipped:
        skipped.setdefault(s.path, s)
    report.files_skipped = sorted(skipped.values(), key=lambda s: s.path)
    bad_read = [p for p in pieces if p[0] in skipped and p[0] in {r[0] for r in log.read}]
    if bad_read:
        counter = ChunkCounter(compiled)
        count_pieces(bad_read, counter, non_utf8)
        add_counts(counts, expand(*compact(counter.counts())), sign=-1)
    seen: dict[str, int] = {}
    replaced: set[str] = set()
    for path, size, rep in log.read:
        if path in skipped:
            continue
        seen[path] = seen.get(path, 0) + size
        if rep:
            replaced.add(path)
    report.files_read = len(seen)
    report.bytes = sum(seen.values())
    report.files_replaced = sorted(replaced)
    report.unique_chunks = len(counts)
    return report


def check_corpus(report: CorpusReport, counts: dict[str, int], paths: Sequence[str]) -> None:
    """Raise TrainingError when nothing usable was read, saying what was found instead."""
    where = ", ".join(str(p) for p in paths)
    if report.files_read == 0 and not report.files_skipped:
        raise TrainingError(f"no files to train on in {where} (empty, or everything excluded)")
    if report.files_read == 0:
        reasons = Counter(s.reason.split(" (")[0].split(":")[0] for s in report.files_skipped)
        summary = ", ".join(f"{n} {r}" for r, n in reasons.most_common())
        raise TrainingError(f"no readable text in {where}: all {len(report.files_skipped)} files skipped ({summary})",
                            skipped=report.files_skipped)
    if not counts:
        raise TrainingError(f"no text to train on in {where}: the {report.files_read} files read are empty")
