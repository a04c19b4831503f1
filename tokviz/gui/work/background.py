"""Background work for the dialogs: one function on its own QThread, and a cache of loaded tokenizers.

The pattern of the house (superqt's): a worker QObject moved to a QThread, exactly one terminal
signal per run, `cancel()` a plain method setting an Event, a reference kept until the thread has
finished (a running QThread that is garbage-collected aborts the process), and every thread stopped
when the application quits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from tokviz.core import catalog
from tokviz.core.tokenizer import Tokenizer


class _CallWorker(QObject):
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: Callable[[], Any], stop: threading.Event) -> None:
        super().__init__()
        self._fn = fn
        self._stop = stop

    @Slot()
    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as e:  # noqa: BLE001 (the boundary: every error becomes a message)
            if self._stop.is_set():
                self.cancelled.emit()
            else:
                self.failed.emit(str(e) or type(e).__name__)
            return
        if self._stop.is_set():
            self.cancelled.emit()
        else:
            self.finished.emit(result)


_RUNNING: set[BackgroundCall] = set()  # a running QThread that is garbage-collected aborts the process


class BackgroundCall(QObject):
    """Run `fn()` on its own QThread; each run ends in exactly one of finished / failed / cancelled.

    `cancel()` is a plain method (a queued slot would run only after `fn` returns): the function
    cannot be interrupted, but its result is dropped and `cancelled` is emitted instead. The call
    keeps itself alive until its thread has finished.

    >>> call = BackgroundCall(lambda: catalog.load("qwen"))  # doctest: +SKIP
    >>> call.finished.connect(on_loaded); call.start()  # doctest: +SKIP
    """

    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__()
        self._stop = threading.Event()
        self._thread = QThread()
        self._worker = _CallWorker(fn, self._stop)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        for own, theirs in (
            (self.finished, self._worker.finished), (self.failed, self._worker.failed),
            (self.cancelled, self._worker.cancelled),
        ):
            theirs.connect(own)
            theirs.connect(self._thread.quit)
        self._thread.finished.connect(self._release)

    def start(self) -> None:
        _RUNNING.add(self)
        app = QCoreApplication.instance()
        if app is not None:  # a QThread still running when the interpreter exits aborts it
            app.aboutToQuit.connect(self.shutdown)
        self._thread.start()

    def cancel(self) -> None:
        self._stop.set()

    def is_running(self) -> bool:
        return self._thread.isRunning()

    def shutdown(self) -> None:
        """Cancel and wait for the thread (the owner is closing)."""
        self.cancel()
        self._thread.quit()
        self._thread.wait()

    def _release(self) -> None:
        # QThread.finished is emitted from the thread just before it exits: wait for the exit, or
        # dropping the last reference here could destroy a QThread that still runs (an abort)
        self._thread.wait()
        _RUNNING.discard(self)


_CACHE: dict[str, Tokenizer] = {}
_CACHE_LOCK = threading.Lock()


def load_tokenizer(spec: str) -> Tokenizer:
    """`catalog.load(spec)`, cached for catalog names (a file may change between runs)."""
    if catalog.find(spec) is None:
        return catalog.load(spec)
    with _CACHE_LOCK:
        if spec not in _CACHE:
            _CACHE[spec] = catalog.load(spec)
        return _CACHE[spec]


def stopper(thread: QThread, jobs: dict) -> Callable[[], None]:
    """A function that cancels `jobs`, stops `thread` and waits for it; it holds no dialog, so it
    can run when the dialog is being destroyed (a parent window closing) or the application quits."""

    def stop() -> None:
        for job in list(jobs.values()):
            job.cancel.set()
        if thread.isRunning():
            thread.quit()
            thread.wait()

    return stop


def start_worker_thread(owner: QObject, worker: QObject, name: str, jobs: dict) -> QThread:
    """Run `worker` on a new QThread for a dialog `owner`; return the started thread.

    The thread has no Qt parent (a parent window deleting the dialog must not delete a running
    thread); it is stopped, its `jobs` cancelled, when the owner is destroyed or the app quits.
    """
    thread = QThread()
    thread.setObjectName(name)
    stop = stopper(thread, jobs)
    owner.destroyed.connect(stop)
    QCoreApplication.instance().aboutToQuit.connect(stop)
    worker.moveToThread(thread)
    thread.finished.connect(worker.deleteLater)
    thread.start()
    return thread
