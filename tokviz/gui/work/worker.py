"""The one way the GUI runs work off its thread: a `Worker`, on superqt's model.

`Worker(work, owner=...)` runs `work(job)` on a QThread of its own; each run emits exactly one of
`returned(value)`, `errored(exception)` or `aborted()`, then `finished()` once the thread is gone.
`job.abort` is an `AbortFlag` (set by `worker.abort()` from any thread) that can also wake a work
waiting on a pipe or a condition; `job.check()` raises `Cancelled` once it is set, and
`job.report(value)` sends progress. A generator work reports what it yields, and an abort is
noticed between yields.

Guarantees, so callers keep no bookkeeping: every signal is emitted on the GUI thread; once
`abort()` was called there, neither `yielded` nor `returned`/`errored` follows (no stale result);
the worker keeps itself alive while its thread runs (a collected running QThread aborts the
process), and is stopped when its owner is destroyed (silently) and when the application quits.

Why not superqt itself: its workers run in the global QThreadPool, as large as the number of cores,
and a long-lived worker (the recut's, waiting on its `Inbox`) would hold a slot for its owner's
whole life; nor does superqt stop a worker when its owner goes.

>>> worker = Worker(lambda job: catalog.load("qwen"), owner=dialog)  # doctest: +SKIP
>>> worker.returned.connect(dialog.on_loaded); worker.start()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Callable, Generator
from typing import Any, Literal

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from tokviz.core.cancel import AbortFlag, Cancelled, check

Outcome = Literal["returned", "errored", "aborted"]


def message_of(error: BaseException) -> str:
    """A one-line message for an error a run ended with.

    >>> message_of(ValueError("bad size")), message_of(KeyError())
    ('bad size', 'KeyError')
    """
    return str(error) or type(error).__name__


class Job:
    """What a work function gets: its abort flag and a way to report progress."""

    def __init__(self, report: Callable[[object], None]) -> None:
        self.abort = AbortFlag()
        self._report = report

    @property
    def aborted(self) -> bool:
        """The abort flag is set."""
        return self.abort.is_set()

    def check(self) -> None:
        """Raise `Cancelled` if the abort flag is set."""
        check(self.abort, "the work")

    def report(self, value: object) -> None:
        """Send `value` to `Worker.yielded` (callable from the work's thread, e.g. a callback)."""
        self._report(value)

    def _detach(self) -> None:
        self._report = lambda _value: None


class Throttle:
    """True at most every `seconds` (or when forced): for progress callbacks that fire often.

    >>> t = Throttle(3600); t.ready(), t.ready(), t.ready(force=True)
    (True, False, True)
    """

    def __init__(self, seconds: float = 0.05) -> None:
        self.seconds = seconds
        self._last = float("-inf")

    def ready(self, *, force: bool = False) -> bool:
        """True if `seconds` have passed since the last True (or `force`)."""
        now = time.monotonic()
        if force or now - self._last >= self.seconds:
            self._last = now
            return True
        return False


class _Thread(QThread):
    def __init__(self, target: Callable[[], None]) -> None:
        super().__init__()
        self.target: Callable[[], None] | None = target

    def run(self) -> None:
        if self.target is not None:
            self.target()


_LIVE: set[Worker] = set()  # started workers whose thread has not been waited for yet


def live_workers() -> int:
    """How many workers are running (or not yet released)."""
    return len(_LIVE)


class Worker(QObject):
    """`work(job)` on its own QThread; exactly one of returned / errored / aborted, then finished."""

    yielded = Signal(object)
    returned = Signal(object)
    errored = Signal(object)  # the exception; message_of(e) for a one-line message
    aborted = Signal()
    finished = Signal()

    _progress = Signal(object)  # posted from the work's thread
    _ended = Signal(str, object)

    def __init__(self, work: Callable[[Job], Any], *, owner: QObject | None = None,
                 name: str = "tokviz-work") -> None:
        super().__init__()  # no Qt parent: an owner deleting its children must not delete a running thread
        self._work: Callable[[Job], Any] | None = work
        self.job = Job(self._progress.emit)
        self.outcome: Outcome | None = None
        self._state: Literal["new", "running", "done"] = "new"
        self._thread = _Thread(self._execute)
        self._thread.setObjectName(name)
        self._progress.connect(self._on_progress)
        self._ended.connect(self._deliver)
        self._thread.finished.connect(self._release)
        # kept to disconnect once the run is over: a finished worker that something still holds
        # must not be called when its owner goes later
        self._owner_connection = owner.destroyed.connect(self._on_owner_destroyed) if owner is not None else None

    # -- GUI thread --------------------------------------------------------------------------------
    def start(self) -> Worker:
        """Start the run (a worker runs once)."""
        if self._state != "new":
            raise RuntimeError("a Worker runs once; make a new one")
        self._state = "running"
        _LIVE.add(self)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.stop)
        self._thread.start()
        return self

    def abort(self) -> None:
        """Ask the work to stop (a plain method: callable from any thread, returns at once)."""
        self.job.abort.set()

    @property
    def is_running(self) -> bool:
        """Started and not yet released."""
        return self._state == "running"

    def stop(self) -> None:
        """Abort and wait for the thread (the owner is closing); `aborted` and `finished` follow at once."""
        if self._state != "running":
            return
        self.abort()
        self._thread.wait()
        self._release()

    @Slot()
    def _on_owner_destroyed(self) -> None:
        self.blockSignals(True)  # the owner's slots must not run while it is being destroyed
        self.stop()

    @Slot(object)
    def _on_progress(self, value: object) -> None:
        if self.outcome is None and not self.job.abort.is_set():
            self.yielded.emit(value)

    @Slot(str, object)
    def _deliver(self, kind: Outcome, value: object) -> None:
        if self.outcome is not None:
            return
        if self.job.abort.is_set():  # aborted before the result reached this thread: it is stale
            kind, value = "aborted", None
        self.outcome = kind
        if kind == "returned":
            self.returned.emit(value)
        elif kind == "errored":
            self.errored.emit(value)
        else:
            self.aborted.emit()

    @Slot()
    def _release(self) -> None:
        if self._state != "running":
            return
        # QThread.finished is emitted from the thread just before it exits: wait for the exit, or
        # dropping the last reference could destroy a QThread that still runs (an abort)
        self._thread.wait()
        self._state = "done"
        if self.outcome is None:  # stopped: the work's own outcome is still queued, and stale
            self._deliver("aborted", None)
        app = QCoreApplication.instance()
        if app is not None:
            with contextlib.suppress(RuntimeError, TypeError):
                app.aboutToQuit.disconnect(self.stop)
        _LIVE.discard(self)
        connection, self._owner_connection = self._owner_connection, None
        if connection is not None:
            QObject.disconnect(connection)  # a no-op when the owner is already gone
        # let go of the work and of the links back to this worker: the work often holds the owner,
        # which holds the worker, a cycle only the cyclic collector frees, at a moment of its
        # choosing, tearing down live Qt objects on whatever the GUI thread is doing
        self._work = None
        self.job._detach()
        self._thread.target = None
        self.finished.emit()

    # -- the work's thread ---------------------------------------------------------------------------
    def _execute(self) -> None:
        job = self.job
        kind: Outcome
        try:
            job.check()
            assert self._work is not None  # dropped only once the thread is over
            value = self._work(job)
            if inspect.isgenerator(value):
                value = self._drive(value)
            job.check()
        except Exception as e:  # noqa: BLE001 (the boundary: every error ends the run as a signal)
            kind, value = ("aborted", None) if job.abort.is_set() or isinstance(e, Cancelled) else ("errored", e)
        else:
            kind = "returned"
        self._ended.emit(kind, value)

    def _drive(self, generator: Generator[object, Any, Any]) -> Any:
        while True:
            try:
                value = next(generator)
            except StopIteration as stop:
                return stop.value
            if self.job.abort.is_set():
                generator.close()
                raise Cancelled("aborted")
            self._progress.emit(value)
