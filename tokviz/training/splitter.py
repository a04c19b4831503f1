"""Count the chunks found in distinct segments, here or in a helper process that shares the work.

`count_found` adds the chunks found in segments seen `n` times each to a `Counter`.
`SplitHelper` is one helper process that does the same for the batches it is sent and gives
its counts back when told to finish: splitting a corpus's distinct segments is the larger part
of counting a corpus of some MB (`pretokenize.split_table`), and with a helper it runs on two
cores. The helper imports `re` and `regex` only (this module imports nothing of tokviz's and
no numpy), so it is up within a few tens of milliseconds; it is started before the corpus is
read (`corpus.count_corpus`), and its start-up is hidden behind the reading. While the corpus
is read, it already splits the segments found so far (`pretokenize.ChunkCounter`), so that it
does not wait for the end of the reading; a segment seen again afterwards is split again for
its new occurrences only (`segcount.SegmentTable.share`).

A batch is sent only while the helper holds fewer than `AHEAD` unanswered ones; otherwise this
process splits it itself, so a helper that is slow (a busy machine) or late takes less, and the
two finish together.

The batches are small (`BATCH` segments) and the task pipe is made large where the system
allows (`_widen`), so that `send` finds room in the pipe rather than waiting for the helper to
read. (A thread reading the pipe in the helper would not do: it waits for the GIL, which the
splitting thread holds, at every read, and the sender waits with it.)

The helper is `python -m tokviz.training.splitter` run by `subprocess`, not a `multiprocessing`
process: a spawned one would also start multiprocessing's resource tracker, a third interpreter
that lives as long as this process (tens of ms of CPU and some MB for nothing: the helper shares
no semaphore or memory). It runs in the folder holding this process's tokviz, which also leads
its PYTHONPATH, so it imports the same tokviz. Lifetime, as the
counting pool's workers (`pool`): never forked; the helper ignores SIGINT, and leaves at once
(`os._exit`) when its task pipe reports the parent gone (it reads the pipe between batches, each
a few milliseconds of work).

Protocol: the frozen dataclasses below, pickled over one-way pipes (the pipes' descriptors are
the helper's arguments), each side receiving through `_receive`, which checks the kind:
  -> Start(pattern, ascii_pattern)
  -> Batch(n, joined)    <- Done()
  -> Finish()            <- Chunks(ascii, text)   last, each as `_pack` gives it
"""

from __future__ import annotations

import multiprocessing
import operator
import os
import re
import signal
import subprocess
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate, repeat
from multiprocessing.connection import Connection
from pathlib import Path
from typing import AnyStr, TypeVar

import regex

from tokviz.core.messages import not_a

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

AHEAD = 2  # batches the helper holds: it never waits for this process between two batches
BATCH = 1 << 11  # segments a batch holds when shared with a helper (some tens of kB)
K = TypeVar("K", str, bytes)
T = TypeVar("T")
M = TypeVar("M")


@dataclass(frozen=True)
class Start:
    """The split pattern, and its `re` translation for ASCII (None: none exact)."""

    pattern: str
    ascii_pattern: str | None


@dataclass(frozen=True)
class Batch:
    """Segments seen `n` times each, joined (`segcount.SegmentTable.batches`' form): answered `Done`."""

    n: int
    joined: list[bytes]


@dataclass(frozen=True)
class Finish:
    """No more batches: answered `Chunks`, the helper's last message."""


@dataclass(frozen=True)
class Done:
    """One `Batch` counted."""


@dataclass(frozen=True)
class Chunks:
    """Every chunk the helper counted: ASCII chunks and the others, each as `_pack` gives it."""

    ascii: tuple[bytes, bytes, bytes]
    text: tuple[str, bytes, bytes]


def _receive(conn: Connection, kind: type[M]) -> M:
    """The next message on `conn`, which must be a `kind` (`ProtocolError` otherwise)."""
    message = conn.recv()
    if not isinstance(message, kind):
        raise not_a(message, f"a {kind.__name__} message of the splitting process")
    return message


def count_found(chunks: Counter[AnyStr], parts: list[list[AnyStr]], n: int) -> None:
    """Add the chunks found in segments seen `n` times each."""
    for found in parts:
        if n == 1:
            chunks.update(found)  # a list: counted in C
        else:
            # weighted: count the group once, then add n times each count, in C
            # (`found * n` would count every occurrence again: corpus-sized work)
            add_scaled(chunks, Counter(found), n)


def add_scaled(into: Counter[AnyStr], other: Counter[AnyStr] | dict[AnyStr, int], n: int) -> None:
    """`into[k] += n * other[k]` for every k, without a Python-level loop."""
    add_pairs(into, list(other), map(n.__mul__, other.values()))


def add_pairs(into: Counter[AnyStr], keys: list[AnyStr], values: Iterable[int]) -> None:
    """`into[k] += v` for every `(k, v)` of `zip(keys, values)`, without a Python-level loop.

    (`dict.update`: `Counter.update` would count the `(key, value)` pairs as elements; `get`
    with a default: the Counter's `__missing__` would be a Python call for every new key.)
    """
    dict.update(into, zip(keys, map(operator.add, map(into.get, keys, repeat(0)), values)))


class SplitFinder:
    """Find and count the chunks of joined segments: ASCII bytes with the pattern's `re`
    translation (`pretokenize.ascii_pattern`, exact on ASCII), the rest as text with `regex`."""

    def __init__(self, pattern: str, ascii_pattern: str | None, chunks: Counter[str] | None = None) -> None:
        self.findall: Callable[[str], list[str]] = regex.compile(pattern).findall
        self.fast = None if ascii_pattern is None else re.compile(ascii_pattern.encode("ascii")).findall
        self.ascii_chunks: Counter[bytes] = Counter()
        self.chunks: Counter[str] = Counter() if chunks is None else chunks

    def add(self, n: int, joined: list[bytes]) -> None:
        """Count the chunks of `joined` (`segcount.SegmentTable.batches`' form), seen `n` times each."""
        if self.fast is None:
            count_found(self.chunks, [self.findall(b"".join(joined).decode("utf-8"))], n)
            return
        count_found(self.ascii_chunks, [self.fast(joined[0])], n)
        if len(joined) > 1:
            count_found(self.chunks, [self.findall(joined[1].decode("utf-8"))], n)


class SplitHelper:
    """One helper process splitting batches of segments; use as a context manager (it ends it)."""

    def __init__(self, pattern: str, ascii_pattern: str | None) -> None:
        task_r, task_w = multiprocessing.Pipe(duplex=False)
        result_r, result_w = multiprocessing.Pipe(duplex=False)
        fds = (task_r.fileno(), result_w.fileno())
        # the tokviz this process runs, not another: `-m` puts the working directory first on
        # sys.path (a checkout there would win), so the helper runs in the folder holding tokviz
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])]))
        try:
            self.process = start_ignoring_ctrl_c(lambda: subprocess.Popen(
                [sys.executable, "-m", __name__, *map(str, fds)], pass_fds=fds, env=env, cwd=root,
                stdin=subprocess.DEVNULL))
        except BaseException:
            for conn in (task_r, task_w, result_r, result_w):
                conn.close()
            raise
        task_r.close()  # this process keeps only its own ends: a dead helper reads as EOF
        result_w.close()
        self.tasks, self.results = task_w, result_r
        _widen(task_w)
        self._send(Start(pattern, ascii_pattern))
        self.held = 0  # batches sent and not yet answered

    def __enter__(self) -> SplitHelper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def room(self, ahead: int = AHEAD) -> bool:
        """Whether the helper holds fewer than `ahead` batches (the answers so far are read)."""
        while self.held and self.results.poll():
            self._result(Done)
        return self.held < ahead

    def offer(self, n: int, joined: list[bytes], ahead: int = AHEAD) -> bool:
        """Send the batch if the helper holds fewer than `ahead`; False: split it here."""
        if not self.room(ahead):
            return False
        self._send(Batch(n, joined))
        self.held += 1
        return True

    def finish(self) -> tuple[tuple[list[bytes], array[int]], tuple[list[str], array[int]]]:
        """Wait for the batches sent; return the helper's ASCII chunk counts and other chunk
        counts, each as `(chunks, counts)`."""
        self._send(Finish())
        while self.held:
            self._result(Done)
        chunks = self._result(Chunks)
        return _unpack(*chunks.ascii), _unpack(*chunks.text)

    def _result(self, kind: type[M]) -> M:
        try:
            message = _receive(self.results, kind)
        except (EOFError, OSError) as e:
            raise self._died() from e
        if isinstance(message, Done):
            self.held -= 1
        return message

    def _send(self, message: Start | Batch | Finish) -> None:
        try:
            self.tasks.send(message)
        except OSError as e:  # BrokenPipeError: not the CLI's own output, which it would take it for
            raise self._died() from e

    def _died(self) -> Exception:
        from tokviz.training.events import TrainingError  # not in the helper, which never gets here

        try:
            code = self.process.wait(1)
        except subprocess.TimeoutExpired:
            code = None
        return TrainingError(f"the splitting process ended unexpectedly (exit code {code})")

    def close(self) -> None:
        """End the helper: closing its task pipe lets it leave; terminate makes that immediate."""
        self.tasks.close()
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait()
        self.results.close()


def start_ignoring_ctrl_c(start: Callable[[], T]) -> T:
    """Start a process (`start()`) with SIGINT blocked, for it to ignore (`ignore_ctrl_c`).

    Ctrl-C reaches the whole process group and it is the parent's to handle (it ends its
    children); a child starting up would otherwise take it as a KeyboardInterrupt in the middle
    of its imports and print a traceback. A blocked signal stays blocked across fork and exec; it
    is blocked in this thread only, and a SIGINT for this process meanwhile waits, not lost.
    """
    block = getattr(signal, "pthread_sigmask", None)
    if block is None:  # Windows: no signal masks
        return start()
    old = block(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return start()
    finally:
        block(signal.SIG_SETMASK, old)


def ignore_ctrl_c() -> None:
    """In a child started by `start_ignoring_ctrl_c`: ignore SIGINT, drop one pending, unblock it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _widen(conn: Connection) -> None:
    """Make the pipe's buffer hold `AHEAD` batches and more (Linux: up to the unprivileged 1 MiB)."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if setpipe is not None:
        try:
            fcntl.fcntl(conn.fileno(), setpipe, 1 << 20)
        except OSError:
            pass  # a smaller limit: `send` may wait for the helper now and then


def _pack(counts: dict[K, int], empty: K) -> tuple[K, bytes, bytes]:
    """Counts as three flat buffers, cheap to pickle: the keys joined, their lengths, the counts."""
    keys = list(counts)
    return empty.join(keys), array("q", map(len, keys)).tobytes(), array("q", counts.values()).tobytes()


def _unpack(joined: K, lengths: bytes, values: bytes) -> tuple[list[K], array[int]]:
    """`_pack`'s buffers back to `(keys, counts)`."""
    sizes, counts = array("q"), array("q")
    sizes.frombytes(lengths)
    counts.frombytes(values)
    ends: list[int] = list(accumulate(sizes))
    return list(map(joined.__getitem__, map(slice, [0, *ends[:-1]], ends, repeat(None)))), counts


def _serve(tasks: Connection, results: Connection) -> None:
    try:
        start = _receive(tasks, Start)
        finder = SplitFinder(start.pattern, start.ascii_pattern)
        send, done = results.send, Done()
        while True:
            message = tasks.recv()
            if isinstance(message, Batch):
                finder.add(message.n, message.joined)
                send(done)
            elif isinstance(message, Finish):
                send(Chunks(_pack(finder.ascii_chunks, b""), _pack(finder.chunks, "")))
                return
            else:
                raise not_a(message, "a Batch or Finish message of the splitting process")
    except (OSError, EOFError):
        os._exit(0)  # the parent is gone (a broken pipe): nobody to tell


def split_with(finder: SplitFinder, batches: Iterable[tuple[int, list[bytes]]], helper: SplitHelper | None) -> None:
    """Count every batch with `finder`, or with `helper` when it takes it; add the helper's counts."""
    for n, joined in batches:
        if helper is None or not helper.offer(n, joined):
            finder.add(n, joined)
        del joined
    if helper is not None:
        ascii_chunks, chunks = helper.finish()
        add_pairs(finder.ascii_chunks, *ascii_chunks)
        add_pairs(finder.chunks, *chunks)


def _main(argv: list[str]) -> None:
    """The helper process: `python -m tokviz.training.splitter TASK_FD RESULT_FD`."""
    ignore_ctrl_c()  # Ctrl-C reaches the whole group: the parent ends us
    _serve(Connection(int(argv[0]), writable=False), Connection(int(argv[1]), readable=False))


if __name__ == "__main__":
    # run from the module under its own name, so the messages pickle as this module's classes
    # (`__main__.Done` would mean nothing to the parent)
    from tokviz.training.splitter import _main as main

    main(sys.argv[1:])
