"""`tokviz train --scheduler`: the trainer's counting stage as a map-reduce on a Dask cluster.

The merge loop needs only the distinct-chunk table (chunk -> count); this module builds it on
a cluster and hands it to the trainer, which merges here exactly as after a local count, so the
merges are byte-identical to a local run's (the loop's tie-breaking depends on the counts alone).

Map: one task per group of about `TASK_BYTES` of input (pieces of text files, cut as
`corpus.plan_pieces` cuts them, or dataset shards: files, Parquet row groups, byte ranges of a
big JSONL file), each counting into a `ChunkCounter` of its own and splitting its table into
`parts` partitions by a stable hash of the chunk (crc32: the same on every machine, unlike
Python's `hash`), as flat buffers (`pieces.compact`).

Reduce, started as the maps finish (at most twice the cluster's threads of maps are in flight,
so finished maps do not pile up): every `FAN_IN` maps' outputs are added by one task, all
partitions at once (so that each map's output moves once, not once per partition), whose result
is split into its partitions where it lies; then per partition a tree of tasks that add `FAN_IN`
tables at a time. A map task and a first-level task hold the tables of at most `FAN_IN` x
`TASK_BYTES` of text, however big the corpus; a task of the trees holds `FAN_IN` inputs and
their sum, each at most one partition of the distinct table: with 8 or more partitions, less
than the distinct table. This process then fetches the partitions one at a time into the one
table the merge loop reads: it holds the distinct table and one partition in transit, never a
map's output.

A worker that dies loses its tasks' results; Dask runs them again (every task is a pure function
of its inputs), so the table is still exact. Cancelling (`cancel`, Ctrl+C) cancels every task
of the run on the cluster.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tokviz.core.cluster import Cluster, ClusterError, prepare_worker
from tokviz.core.records import Shard
from tokviz.training.corpus import CorpusReport, piece_report, plan_pieces
from tokviz.training.datasets import count_shards, dataset_report, shard_bytes
from tokviz.training.events import ProgressCallback, Reporter
from tokviz.training.pieces import (
    NonUtf8,
    Piece,
    PieceLog,
    add_counts,
    batched,
    compact,
    count_pieces,
    expand,
    piece_size,
)
from tokviz.training.pretokenize import ChunkCounter, compile_pattern

TASK_BYTES = 32 << 20  # input bytes per map task (8 MB: 10.3 MB/s on one local worker; 32 MB: 12.7, as in-process)
FAN_IN = 4  # tables a reduce task adds
MIN_PARTS = 8  # partitions of the distinct table: one per thread of the cluster, at least 8,
MAX_PARTS = 64  # at most 64 (each map group adds a task per partition)

Table = tuple[bytes, bytes]  # `pieces.compact`'s buffers
MapOutput = tuple[tuple[Table, ...], PieceLog]


def partition(counts: dict[str, int], parts: int) -> tuple[Table, ...]:
    """`counts` cut into `parts` tables by the crc32 of each chunk's UTF-8."""
    buckets: list[dict[str, int]] = [{} for _ in range(parts)]
    for key, n in counts.items():
        buckets[zlib.crc32(key.encode("utf-8", "surrogatepass")) % parts][key] = n
    return tuple(compact(b) for b in buckets)


def _map_pieces(pieces: list[Piece], pattern: str | None, non_utf8: NonUtf8, parts: int) -> MapOutput:
    prepare_worker()
    counter = ChunkCounter(compile_pattern(pattern))
    log = count_pieces(pieces, counter, non_utf8)
    return partition(counter.counts(), parts), log


def _map_shards(shards: list[Shard], pattern: str | None, field: str | None, parts: int) -> MapOutput:
    prepare_worker()
    counter = ChunkCounter(compile_pattern(pattern))
    log = count_shards(shards, counter, field)
    return partition(counter.counts(), parts), log


def _log(output: MapOutput) -> PieceLog:
    return output[1]


def _add_tables(tables: Sequence[Table]) -> Table:
    total: dict[str, int] = {}
    for table in tables:
        add_counts(total, expand(*table, as_text=True))
    return compact(total)


def _first_level(outputs: list[MapOutput]) -> tuple[Table, ...]:
    """A few maps' tables added, every partition at once: each map's output moves once."""
    return tuple(_add_tables([out[0][p] for out in outputs]) for p in range(len(outputs[0][0])))


def _part(tables: tuple[Table, ...], part: int) -> Table:
    return tables[part]


def _combine(tables: list[Table]) -> Table:
    return _add_tables(tables)


def group_pieces(pieces: Sequence[Piece], sizes: dict[str, int], task_bytes: int | None = None) -> list[list[Piece]]:
    """Pieces in tasks of about `task_bytes` (default `TASK_BYTES`), in order."""
    return batched(pieces, lambda piece: piece_size(piece, sizes), task_bytes or TASK_BYTES)


def group_shards(shards: Sequence[Shard], task_bytes: int | None = None) -> list[list[Shard]]:
    """Shards in tasks of about `task_bytes` (default `TASK_BYTES`; a big shard alone), in order."""
    return batched(shards, shard_bytes, task_bytes or TASK_BYTES)


class _Reduction:
    """The map tasks, a sliding window of them, and per partition a tree of reduce tasks."""

    def __init__(self, cluster: Cluster, parts: int) -> None:
        self.cluster = cluster
        self.parts = parts
        self.levels: list[list[list[Any]]] = [[] for _ in range(parts)]
        self.ready: list[Any] = []
        # the futures nothing submitted yet depends on: cancelling them cancels the run, and a
        # future handed on to a reduce task leaves it, so that this process holds no reference
        # that would keep a map's output in a worker's memory once it has been reduced
        self.live: dict[str, Any] = {}

    def submit(self, fn: Callable[..., Any], *args: Any, using: Sequence[Any] = ()) -> Any:
        future = self.cluster.submit(fn, *args)
        for used in using:
            self.live.pop(used.key, None)
        self.live[future.key] = future
        return future

    def finished(self, future: Any) -> None:
        self.ready.append(future)
        if len(self.ready) >= FAN_IN:
            self._flush()

    def _flush(self) -> None:
        if self.ready:
            added = self.submit(_first_level, list(self.ready), using=self.ready)
            for p in range(self.parts):  # split where `added` is (Dask runs a task by its input)
                self._push(p, 0, self.submit(_part, added, p, using=[added]))
            self.ready = []

    def _push(self, part: int, level: int, future: Any) -> None:
        levels = self.levels[part]
        while len(levels) <= level:
            levels.append([])
        levels[level].append(future)
        if len(levels[level]) >= FAN_IN:
            tables, levels[level] = levels[level], []
            self._push(part, level + 1, self.submit(_combine, tables, using=tables))

    def finals(self) -> list[Any]:
        """One future per partition: its whole table."""
        self._flush()
        out = []
        for p in range(self.parts):
            rest = [f for level in self.levels[p] for f in level]
            out.append(rest[0] if len(rest) == 1 else self.submit(_combine, rest, using=rest))
        self.levels = [[] for _ in range(self.parts)]
        return out


def _count(
    cluster: Cluster, tasks: Sequence[tuple[Callable[..., Any], tuple[Any, ...], int]], parts: int,
    reporter: Reporter,
) -> tuple[dict[str, int], PieceLog]:
    """Run the map tasks `(fn, args, bytes)` and reduce their tables; the table and the logs."""
    import distributed

    dask: Any = distributed  # untyped: handled as Any at this edge
    run = _Reduction(cluster, parts)
    ahead = 2 * cluster.threads
    sizes: dict[str, int] = {}
    logs: list[Any] = []
    done = 0
    try:
        todo = iter(tasks)
        running = dask.as_completed(loop=cluster.client.loop)

        def feed() -> None:
            while running.count() < ahead:
                task = next(todo, None)
                if task is None:
                    return
                fn, args, size = task
                future = run.submit(fn, *args, parts)
                sizes[future.key] = size
                logs.append(run.submit(_log, future))  # the map stays live: its tables are still to reduce
                running.add(future)

        feed()
        for future in running:
            reporter.check()
            if future.status == "error":
                cluster.result(future)  # raises the task's error
            done += sizes.pop(future.key)
            reporter.tick(done, bytes_read=done)
            run.finished(future)
            del future
            feed()
        log = PieceLog()
        for part in logs:
            found: PieceLog = cluster.result(part)
            log.read.extend(found.read)
            log.skipped.extend(found.skipped)
            run.live.pop(part.key, None)
        logs = []
        counts: dict[str, int] = {}
        for final in run.finals():
            reporter.check()
            table = cluster.result(final)
            run.live.pop(final.key, None)
            final.release()
            counts.update(expand(*table))  # the partitions hold disjoint chunks
            del table
        return counts, log
    finally:
        cluster.cancel(run.live.values())


def _parts(cluster: Cluster) -> int:
    return max(MIN_PARTS, min(MAX_PARTS, cluster.threads))


def count_files_on_cluster(
    cluster: Cluster, files: Sequence[Path], *, pattern: str | None, non_utf8: NonUtf8 = "skip",
    progress: ProgressCallback | None = None, cancel: threading.Event | None = None,
) -> tuple[dict[str, int], CorpusReport]:
    """`corpus.count_corpus`, on a cluster: the same table and report."""
    compiled = compile_pattern(pattern)  # a bad pattern fails here, before any task
    sizes = {}
    for path in files:
        try:
            sizes[str(path)] = path.stat().st_size
        except OSError:
            sizes[str(path)] = 0
    reporter = Reporter(progress, cancel, "counting", total=sum(sizes.values()))
    reporter.check()
    pieces = [piece for path in files for piece in plan_pieces(path, sizes[str(path)], lines=compiled is None)]
    tasks = []
    for group in group_pieces(pieces, sizes):
        tasks.append((_map_pieces, (group, pattern, non_utf8), sum(piece_size(piece, sizes) for piece in group)))
    reporter.emit(0, files_read=0, files_skipped=0, bytes_read=0)
    counts, log = _count(cluster, tasks, _parts(cluster), reporter)
    report = piece_report(log, pieces, counts, compiled, non_utf8)
    reporter.emit(report.bytes, files_read=report.files_read, files_skipped=len(report.files_skipped),
                  bytes_read=report.bytes)
    return counts, report


def count_shards_on_cluster(
    cluster: Cluster, shards: Sequence[Shard], *, pattern: str | None, field: str | None,
    progress: ProgressCallback | None = None, cancel: threading.Event | None = None,
) -> tuple[dict[str, int], CorpusReport]:
    """`datasets.count_dataset_corpus`, on a cluster: the same table and report."""
    compile_pattern(pattern)
    total = sum(map(shard_bytes, shards))
    reporter = Reporter(progress, cancel, "counting", total=total)
    reporter.check()
    tasks = [(_map_shards, (group, pattern, field), sum(map(shard_bytes, group))) for group in group_shards(shards)]
    reporter.emit(0, files_read=0, files_skipped=0, bytes_read=0)
    counts, log = _count(cluster, tasks, _parts(cluster), reporter)
    report = dataset_report(log, counts)
    reporter.emit(total, files_read=report.files_read, files_skipped=len(report.files_skipped), bytes_read=total)
    return counts, report


__all__ = ["ClusterError", "count_files_on_cluster", "count_shards_on_cluster", "group_pieces", "group_shards",
           "partition"]
