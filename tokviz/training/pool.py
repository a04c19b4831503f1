"""Counting worker processes, started once per run, that never outlive the process that started them.

`CountingPool(workers, pattern, non_utf8)` starts `workers` processes: spawned, never forked
(the GUI's process runs Qt threads, whose locks a forked child inherits), and not from a
forkserver (its server process lives as long as the process that started it; a spawned worker
imports what it needs itself while this process counts). `count(pieces,
reporter)` deals the pieces out a few at a time as workers finish (a big file is many pieces, so
it is shared too), and counts pieces in the calling process too whenever no worker has a message
for it: `--jobs n` is `n - 1` workers and this process, one process less than `n` workers and an
idle parent, and so less memory for the process tree (bench/bench_train.py measures it).
Each counter (a worker's or this process's) adds every piece to one `ChunkCounter` of its own, so
a segment seen by a worker is split once, splits its distinct segments itself at the end and
the workers send their chunk counts back once, as two flat buffers (`pieces.compact`) rather
than a pickled dict of a million strings.

Why each worker splits its own segments: a segment both workers saw is then split twice, but
that is few (most distinct segments of a corpus are seen by one share only), while pooling the
segments first (a round that sent every worker's segments to the worker of their length class)
costs more CPU than the whole split: partitioning, decoding and summing the shares' segments
outweighs splitting them. Dealing the table rows out by hash instead (each process keeps, and
splits, the hashes of its residue; numpy buffers, nothing decoded) was not built: the shares'
distinct segments overlap little, so each table would shrink little, while with more than one
worker the rows would have to pass through this process, which talks to each worker alone.

Lifetime: a worker reads its tasks on a thread of its own; when the parent's end of that pipe
closes (the parent returned, raised, or was killed by SIGTERM or SIGKILL) the read fails and the
worker leaves at once with `os._exit`: no traceback, no `BrokenPipeError`. Nothing here creates
a semaphore or shared memory, so a killed parent leaks none. Ctrl-C is the parent's to handle:
workers ignore SIGINT and the parent ends them on every way out (`close`).

Protocol, pickled over one-way pipes (counts travel as `pieces.compact` buffers):
  -> ("task", [Piece, ...])    <- ("bytes", n) progress, then ("log", PieceLog)
  -> ("finish",)               <- ("chunks", chunks)   last
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, cast

from tokviz.core.heap import trim_heap
from tokviz.training.events import Reporter, TrainingError
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
from tokviz.training.splitter import ignore_ctrl_c, start_ignoring_ctrl_c

TASK_BYTES = 2 << 20  # bytes per task: small enough that the workers finish together
AHEAD = 2  # tasks a worker holds: it never waits for the parent between two tasks


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    tasks: Connection
    results: Connection
    held: int = 0  # tasks sent and not yet answered
    finishing: bool = False  # "finish" sent: it splits its segments after the tasks it holds


def _tasks(pieces: Sequence[Piece], sizes: dict[str, int]) -> deque[list[Piece]]:
    return deque(batched(pieces, lambda piece: piece_size(piece, sizes), TASK_BYTES))


class CountingPool:
    """`jobs` counting processes for one run; use as a context manager (it ends them all)."""

    def __init__(self, jobs: int, pattern: str | None, non_utf8: NonUtf8) -> None:
        self.pattern, self.non_utf8 = pattern, non_utf8
        self.workers: list[_Worker] = []
        try:
            for _ in range(jobs):
                task_r, task_w = multiprocessing.Pipe(duplex=False)
                result_r, result_w = multiprocessing.Pipe(duplex=False)
                process = multiprocessing.get_context("spawn").Process(
                    target=_serve, args=(task_r, result_w, pattern, non_utf8), name="tokviz-count", daemon=True)
                start_ignoring_ctrl_c(process.start)
                task_r.close()  # the parent keeps only its own ends: a dead worker reads as EOF
                result_w.close()
                self.workers.append(_Worker(process, task_w, result_r))
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> CountingPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pids(self) -> list[int]:
        return [w.process.pid for w in self.workers if w.process.pid is not None]

    def count(
        self, pieces: Sequence[Piece], reporter: Reporter, sizes: dict[str, int] | None = None
    ) -> tuple[dict[str, int], PieceLog]:
        """Count `pieces` on the workers and in this process; return `(chunk_key -> count, log)`.

        This process takes a task whenever no worker has a message for it, so `n` workers and
        this process count on `n + 1` cores. Each keeps the distinct middle segments of what it
        read (`ChunkCounter`); when the tasks run out each splits its own (this process while
        the workers do) and the workers send their chunk counts, which are added to these.
        Ticks `reporter` (which raises Cancelled) about every 50 ms.
        """
        todo = _tasks(pieces, sizes or {})
        log, consumed = PieceLog(), 0
        paths: set[str] = set()
        here: ChunkCounter | None = ChunkCounter(compile_pattern(self.pattern))
        counts: dict[str, int] = {}

        def tick() -> None:
            reporter.tick(consumed, bytes_read=consumed, files_read=len(paths), files_skipped=len(log.skipped))

        def on_bytes(n: int) -> None:
            nonlocal consumed
            consumed += n
            tick()

        def add_log(part: PieceLog) -> None:
            log.read.extend(part.read)
            log.skipped.extend(part.skipped)
            paths.update(r[0] for r in part.read)

        for w in self.workers:
            self._deal(w, todo)
        by_reader = {w.results: w for w in self.workers}
        while by_reader or here is not None:
            ready = wait(list(by_reader), timeout=0 if here is not None else 0.05) if by_reader else []
            for conn in ready:
                conn = cast(Connection, conn)  # wait() returns the objects it was given
                w = by_reader[conn]
                try:
                    message: Any = conn.recv()
                except (EOFError, OSError) as e:
                    raise _died(w) from e
                kind = message[0]
                if kind == "bytes":
                    consumed += message[1]
                elif kind == "log":
                    w.held -= 1
                    add_log(message[1])
                    self._deal(w, todo)
                else:  # "chunks": this worker is finished
                    add_counts(counts, expand(*message[1]))
                    del by_reader[conn]
                del message
            if here is not None and not ready:
                if todo:
                    task = todo.popleft()
                    if not todo:  # the last task: the workers finish now, not after it
                        self._finish()
                    add_log(count_pieces(task, here, self.non_utf8, on_bytes))
                    del task
                else:  # split this process's segments while the workers split theirs
                    packed = compact(here.counts(check=reporter.check))
                    here = None  # its chunk strings go before `expand` makes their keys
                    trim_heap()
                    add_counts(counts, expand(*packed))
                    del packed
            tick()
        counts.pop("", None)  # a pattern that can match nothing (say `\w*`) yields empty matches
        return counts, log

    def _deal(self, w: _Worker, todo: deque[list[Piece]]) -> None:
        """Top the worker up to `AHEAD` tasks; once none is left, every worker finishes."""
        while w.held < AHEAD and todo:  # a finishing worker is only told so once todo is empty
            _send(w, ("task", todo.popleft()))
            w.held += 1
        if not todo:
            self._finish()

    def _finish(self) -> None:
        """Send "finish" to every worker as soon as no task is left, behind the tasks it holds: it
        then splits its segments while this process counts or splits, instead of waiting for this
        process to read its last replies (the worker would idle until this process had split its
        own segments)."""
        for w in self.workers:
            if not w.finishing:
                _send(w, ("finish",))
                w.finishing = True

    def close(self) -> None:
        """End every worker: closing its task pipe lets it leave; terminate makes that immediate."""
        for w in self.workers:
            w.tasks.close()
        for w in self.workers:
            if w.process.is_alive():
                w.process.terminate()
        for w in self.workers:
            w.process.join()
            w.results.close()
            w.process.close()
        self.workers = []


def _read_tasks(tasks: Connection, inbox: queue.SimpleQueue[Any]) -> None:
    """Hand tasks to the counting thread; when the parent is gone, leave at once."""
    try:
        while True:
            inbox.put(tasks.recv())
    except BaseException:
        os._exit(0)


def _serve(tasks: Connection, results: Connection, pattern: str | None, non_utf8: NonUtf8) -> None:
    ignore_ctrl_c()  # Ctrl-C reaches the whole group: the parent ends us
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    threading.Thread(target=_read_tasks, args=(tasks, inbox), daemon=True).start()
    try:
        compiled = compile_pattern(pattern)
        counter = ChunkCounter(compiled)
        send = results.send
        while True:
            message: Any = inbox.get()
            if message[0] == "task":
                send(("log", count_pieces(message[1], counter, non_utf8, lambda n: send(("bytes", n)))))
            else:  # "finish": split the distinct segments, send the chunk counts
                chunks = counter.counts()
                del counter
                packed = compact(chunks)
                del chunks
                trim_heap()
                send(("chunks", packed))
                return
    except (OSError, EOFError):
        os._exit(0)  # the parent is gone (a broken pipe): nobody to tell


def _send(w: _Worker, message: tuple[Any, ...]) -> None:
    """Send to a worker; one that died is a TrainingError (not a BrokenPipeError, which the CLI
    would take for its own output's reader gone)."""
    try:
        w.tasks.send(message)
    except OSError as e:  # BrokenPipeError: the worker's end is closed
        raise _died(w) from e


def _died(w: _Worker) -> TrainingError:
    w.process.join(1)
    return TrainingError(f"a counting process ended unexpectedly (exit code {w.process.exitcode})")
