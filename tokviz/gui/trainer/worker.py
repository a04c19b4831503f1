"""Training off the GUI thread: a worker `QObject` on a `QThread`, and the controller that owns both.

`TrainerWorker.run(job)` runs `tokviz.training.trainer.train` for the job in a child process
(`tokviz.training.process`: the merge loop would otherwise starve the GUI thread of the GIL) and waits for
its messages on the worker's thread, relaying them as signals. Every run ends in exactly one
terminal signal: `finished(TrainingResult)`, `failed(str)` or `cancelled()`. `cancel()` is a plain
method setting a `threading.Event` (a queued slot would only run once training is over); the
worker passes it on to the child within `POLL_S`, and the trainer stops within ~100 ms.

Progress reaches the GUI at most every `THROTTLE_S` as a `TrainerProgress`: the newest counters
plus every merge learned since the previous signal, so a live table loses nothing. The last merges
are flushed before `finished`.

`TrainerController` creates the thread, moves the worker, starts it and keeps both alive until the
thread's own `finished` (a running QThread that is garbage-collected aborts the process); it also
keeps itself in a module-level set until then, so a panel deleted mid-run cannot drop it.

`RecutWorker` counts a text's tokens with only the first k merges on a daemon thread (tiktoken
releases the GIL while it encodes); the newest request wins.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QThread, Signal, Slot

from tokviz.training.process import TrainingJob, serve_training
from tokviz.training.curve import default_ks
from tokviz.training.events import Progress
from tokviz.training.trainer import TrainingResult
from tokviz.training.vocabfile import trained_tokenizer

__all__ = ["RecutWorker", "TrainerController", "TrainerProgress", "TrainerWorker", "TrainingJob"]

THROTTLE_S = 0.05  # at most one progress signal per 50 ms (a phase change and the last flush excepted)
POLL_S = 0.05  # how often the waiting worker looks at its cancel flag and the child's health
CANCEL_GRACE_S = 5.0  # a cancelled child that has not answered by then is terminated


@dataclass(frozen=True)
class TrainerProgress(Progress):
    """The trainer's progress event, plus the curve points since the last signal."""

    curve_points: tuple[tuple[int, int], ...] = ()  # (merges learned, corpus tokens)


@dataclass
class _Batch:
    merges: list[tuple[int, int, int]] = field(default_factory=list)
    points: list[tuple[int, int]] = field(default_factory=list)
    latest: Progress | None = None


class TrainerWorker(QObject):
    """Runs `train` for one `TrainingJob`; each run ends in one of finished / failed / cancelled."""

    progress = Signal(object)  # TrainerProgress
    finished = Signal(object)  # TrainingResult
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._cancel = threading.Event()
        self._batch = _Batch()
        self._last_emit = 0.0

    def cancel(self) -> None:
        """Plain method, called from the GUI thread: the trainer stops within ~100 ms."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @Slot(object)
    def run(self, job: TrainingJob) -> None:
        try:
            reply = self._run_child(job)
        except Exception as e:  # cannot start a process, a broken pipe: a message, not a crash
            reply = ("failed", f"cannot run the trainer: {type(e).__name__}: {e}")
        if reply[0] == "finished":
            self._flush()
            if self._cancel.is_set():  # cancelled after the last merge: still nothing is kept
                self.cancelled.emit()
            else:
                self.finished.emit(reply[1])
        elif reply[0] == "failed":
            self.failed.emit(reply[1])
        else:
            self.cancelled.emit()

    def _run_child(self, job: TrainingJob) -> tuple:
        """Start the child, relay its progress, return its terminal message."""
        ctx = multiprocessing.get_context("spawn")  # never fork a process that runs Qt
        conn, child_conn = ctx.Pipe()
        process = ctx.Process(target=serve_training, args=(child_conn, job), name=f"tokviz-train-{job.name}")
        process.start()
        child_conn.close()
        cancel_sent: float | None = None
        try:
            while True:
                if self._cancel.is_set() and cancel_sent is None:
                    cancel_sent = time.monotonic()
                    try:
                        conn.send("cancel")
                    except OSError:
                        pass
                if cancel_sent is not None and time.monotonic() - cancel_sent > CANCEL_GRACE_S:
                    return ("cancelled",)  # the finally below terminates it
                if conn.poll(POLL_S):
                    try:
                        message = conn.recv()
                    except (EOFError, OSError):
                        message = None
                    if message is None:
                        process.join(1)
                        return ("failed", f"the training process ended unexpectedly (exit code {process.exitcode})")
                    if message[0] == "progress":
                        self._on_progress(message[1])
                        continue
                    return message
                if not process.is_alive() and not conn.poll(0):
                    return ("failed", f"the training process ended unexpectedly (exit code {process.exitcode})")
        finally:
            conn.close()  # a child still running sees EOF: it cancels and ends
            process.join(2)  # it has answered: only exiting is left
            if process.is_alive():
                process.terminate()
                process.join(2)

    def _on_progress(self, event: Progress) -> None:
        latest = self._batch.latest
        new_phase = latest is not None and latest.phase != event.phase
        if new_phase:
            self._flush()  # the previous phase's last counters, then the new phase at once
        batch = self._batch
        batch.merges.extend(event.new_merges)
        if event.corpus_tokens is not None:
            batch.points.append((event.done, event.corpus_tokens))
        batch.latest = event
        if new_phase or time.monotonic() - self._last_emit >= THROTTLE_S:
            self._flush()

    def _flush(self) -> None:
        batch, event = self._batch, self._batch.latest
        if event is None:
            return
        self._batch = _Batch()
        self._last_emit = time.monotonic()
        self.progress.emit(TrainerProgress(
            event.phase, event.done, event.total, event.rate, event.eta, event.files_read,
            event.files_skipped, event.bytes_read, tuple(batch.merges), event.corpus_tokens,
            tuple(batch.points),
        ))


_LIVE: set[TrainerController] = set()  # controllers whose thread still runs


class TrainerController(QObject):
    """One training run: its thread and worker, kept until the thread has finished.

    Re-emits the worker's signals; `ended(str)` follows the terminal one once the thread is done
    ("finished", "failed" or "cancelled"). `stop()` cancels and waits (for closing).
    """

    progress = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    ended = Signal(str)
    _start = Signal(object)

    def __init__(self, job: TrainingJob, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.outcome: str | None = None
        self.thread: QThread | None = QThread()
        self.thread.setObjectName(f"tokviz-train-{job.name}")
        self.worker: TrainerWorker | None = TrainerWorker()
        self.worker.moveToThread(self.thread)
        self._start.connect(self.worker.run)
        self.worker.progress.connect(self.progress)
        # bound slots of this object (not lambdas): queued to the GUI thread, in the order emitted
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        # the terminal signal is queued before the thread can finish (its quit() comes from
        # _terminal), so it always arrives before _on_thread_finished
        self.thread.finished.connect(self._on_thread_finished)
        self.thread.finished.connect(self.worker.deleteLater)  # runs in the ending thread (Qt's idiom)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.isRunning()

    def start(self) -> None:
        _LIVE.add(self)
        self.thread.start()
        self._start.emit(self.job)

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def stop(self, timeout_ms: int = 10_000) -> bool:
        """Cancel, end the thread's loop and wait for it; True when the thread is gone."""
        if self.thread is None:
            return True
        self.cancel()
        self.thread.quit()  # queued behind `run`: the loop ends once the run returns
        done = self.thread.wait(timeout_ms)
        if done:
            if self.outcome is None:  # the worker's own signal is still queued: it is dropped
                self.outcome = "cancelled"
            self._release()
        return done

    @Slot(object)
    def _on_finished(self, result: TrainingResult) -> None:
        self._terminal("finished", self.finished, result)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._terminal("failed", self.failed, message)

    @Slot()
    def _on_cancelled(self) -> None:
        self._terminal("cancelled", self.cancelled)

    def _terminal(self, outcome: str, signal, *args) -> None:
        if self.outcome is None:
            self.outcome = outcome
            signal.emit(*args)
        if self.thread is not None:
            self.thread.quit()

    @Slot()
    def _on_thread_finished(self) -> None:
        self._release()

    def _release(self) -> None:
        thread = self.thread
        if thread is None:
            return
        # `finished` is emitted from the ending thread, which then deletes the worker (deleteLater)
        # and exits: wait for that before the last references go, or both threads delete it
        thread.wait()
        self.thread = self.worker = None
        thread.deleteLater()
        _LIVE.discard(self)
        self.ended.emit(self.outcome or "cancelled")


class RecutWorker(QObject):
    """Token counts of a text with only the first k merges, computed on a daemon thread.

    Not a QThread: these jobs are short and a Python thread cannot abort the process when its
    owner is deleted mid-job. Only the newest request of each kind is kept (a dragged slider
    asks many times); counts go before curves. Results are signals of this object (which lives
    on the GUI thread), so they arrive queued; each carries its request's `gen`.
    """

    counted = Signal(int, int, int)  # gen, k, tokens
    curve = Signal(int, object, object)  # gen, ks, token counts
    failed = Signal(int, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._pending: dict[str, tuple] = {}
        self._closed = False
        self._thread: threading.Thread | None = None
        self._cache: dict[int, object] = {}
        self._result_id: int | None = None

    def request_count(self, gen: int, result: TrainingResult, text: str, k: int) -> None:
        self._submit("count", (gen, result, text, k))

    def request_curve(self, gen: int, result: TrainingResult, text: str) -> None:
        self._submit("curve", (gen, result, text))

    def close(self) -> None:
        """Drop pending requests and let the thread end (it finishes the job at hand first)."""
        with self._cond:
            self._closed = True
            self._pending.clear()
            self._cond.notify_all()

    def _submit(self, kind: str, args: tuple) -> None:
        with self._cond:
            if self._closed:
                return
            self._pending[kind] = args
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, daemon=True, name="tokviz-recut")
                self._thread.start()
            self._cond.notify_all()

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                kind = "count" if "count" in self._pending else "curve"
                args = self._pending.pop(kind)
            try:
                if kind == "count":
                    gen, result, text, k = args
                    self.counted.emit(gen, k, self.count_tokens(result, text, k))
                else:
                    self._make_curve(*args)
            except RuntimeError:  # this object was deleted while we worked: nobody listens
                return
            except Exception as e:
                try:
                    self.failed.emit(args[0], f"{type(e).__name__}: {e}")
                except RuntimeError:
                    return

    def _superseded(self, kind: str) -> bool:
        with self._cond:
            return self._closed or kind in self._pending

    def _encoding(self, result: TrainingResult, k: int):
        if self._result_id != id(result):
            self._cache.clear()
            self._result_id = id(result)
        enc = self._cache.get(k)
        if enc is None:
            if len(self._cache) > 64:
                self._cache.clear()
            enc = self._cache[k] = trained_tokenizer(result, num_merges=k).encoding
        return enc

    def count_tokens(self, result: TrainingResult, text: str, k: int) -> int:
        """Tokens of `text` with the first k merges (special-token text counted as plain text)."""
        k = max(0, min(int(k), len(result.merges)))
        return len(self._encoding(result, k).encode_ordinary(text))

    def _make_curve(self, gen: int, result: TrainingResult, text: str) -> None:
        ks = default_ks(len(result.merges), 32)
        counts = []
        for k in ks:
            if self._superseded("curve"):
                return
            counts.append(self.count_tokens(result, text, k))
            time.sleep(0.002)  # hand the GIL to the GUI thread between points (no convoy)
        self.curve.emit(gen, ks, counts)
