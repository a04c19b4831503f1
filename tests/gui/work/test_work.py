"""The background-work primitive: exactly one terminal signal, aborts, keep-alive, owners."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable

import pytest
from PySide6.QtCore import SIGNAL, QCoreApplication, QObject, Signal

from tokviz.core.cancel import Cancelled
from tokviz.gui.work.child import ChildDied, ChildProcess
from tokviz.gui.work.inbox import Inbox
from tokviz.gui.work.worker import Job, Worker, live_workers

from . import child_targets

WAIT_MS = 30_000


class Recorder(QObject):
    """Records every signal of a worker through bound methods (slots on the GUI thread)."""

    done = Signal()

    def __init__(self, worker: Worker) -> None:
        super().__init__()
        self.seen: list[tuple[str, object]] = []
        self.threads: set[int] = set()
        worker.yielded.connect(self.on_yielded)
        worker.returned.connect(self.on_returned)
        worker.errored.connect(self.on_errored)
        worker.aborted.connect(self.on_aborted)
        worker.finished.connect(self.on_finished)

    def _note(self, name: str, value: object = None) -> None:
        self.threads.add(threading.get_ident())
        self.seen.append((name, value))

    def on_yielded(self, value: object) -> None:
        self._note("yielded", value)

    def on_returned(self, value: object) -> None:
        self._note("returned", value)

    def on_errored(self, error: object) -> None:
        self._note("errored", error)

    def on_aborted(self) -> None:
        self._note("aborted")

    def on_finished(self) -> None:
        self._note("finished")
        self.done.emit()

    def names(self) -> list[str]:
        return [name for name, _ in self.seen]


def test_a_return_is_one_returned_then_finished(qtbot) -> None:
    worker = Worker(lambda job: 6 * 7)
    rec = Recorder(worker)
    with qtbot.waitSignals([worker.returned, worker.finished], order="strict", timeout=WAIT_MS):
        worker.start()
    assert rec.seen == [("returned", 42), ("finished", None)]
    assert rec.threads == {threading.get_ident()} and worker.outcome == "returned"
    assert not worker.is_running


def test_a_raise_is_one_errored_with_the_exception(qtbot) -> None:
    def work(job: Job) -> None:
        raise ValueError("bad input")

    worker = Worker(work)
    rec = Recorder(worker)
    with qtbot.waitSignals([worker.errored, worker.finished], order="strict", timeout=WAIT_MS):
        worker.start()
    assert rec.names() == ["errored", "finished"]
    assert isinstance(rec.seen[0][1], ValueError) and str(rec.seen[0][1]) == "bad input"


def test_an_abort_is_one_aborted_even_when_the_work_returns(qtbot) -> None:
    started = threading.Event()

    def work(job: Job) -> str:
        started.set()
        job.abort.wait(WAIT_MS / 1000)
        return "ignored"  # the work may ignore the flag: its result is dropped all the same

    worker = Worker(work)
    rec = Recorder(worker)
    worker.start()
    assert started.wait(WAIT_MS / 1000)
    with qtbot.waitSignals([worker.aborted, worker.finished], order="strict", timeout=WAIT_MS):
        worker.abort()
    assert rec.names() == ["aborted", "finished"]


def test_a_result_that_arrives_after_the_abort_is_stale(qtbot) -> None:
    worker = Worker(lambda job: "done")
    rec = Recorder(worker)
    worker.start()
    worker._thread.wait()  # the result is posted, not delivered: this thread has not run its events
    worker.abort()
    with qtbot.waitSignals([worker.aborted, worker.finished], order="strict", timeout=WAIT_MS):
        pass
    assert rec.names() == ["aborted", "finished"]


def test_a_generator_reports_its_yields_and_stops_between_them(qtbot) -> None:
    go = threading.Event()
    closed = threading.Event()

    def work(job: Job):
        try:
            yield 1
            go.wait(WAIT_MS / 1000)
            yield 2  # the abort is noticed here: 2 is never reported
            yield 3
        finally:
            closed.set()

    worker = Worker(work)
    rec = Recorder(worker)
    with qtbot.waitSignal(worker.yielded, timeout=WAIT_MS):
        worker.start()
    with qtbot.waitSignals([worker.aborted, worker.finished], order="strict", timeout=WAIT_MS):
        worker.abort()
        go.set()
    assert rec.seen == [("yielded", 1), ("aborted", None), ("finished", None)]
    assert closed.is_set()


def test_a_generator_return_value_is_returned(qtbot) -> None:
    def work(job: Job):
        for i in range(3):
            job.check()
            yield i
        return "sum"

    worker = Worker(work)
    rec = Recorder(worker)
    with qtbot.waitSignals([worker.returned, worker.finished], order="strict", timeout=WAIT_MS):
        worker.start()
    assert rec.seen == [("yielded", 0), ("yielded", 1), ("yielded", 2), ("returned", "sum"), ("finished", None)]


def test_report_from_a_callback_is_yielded(qtbot) -> None:
    worker = Worker(lambda job: [job.report(n) for n in (1, 2)] and "ok")
    rec = Recorder(worker)
    with qtbot.waitSignals([worker.returned, worker.finished], order="strict", timeout=WAIT_MS):
        worker.start()
    assert rec.names() == ["yielded", "yielded", "returned", "finished"]


def test_a_running_worker_keeps_itself_alive_without_a_reference(qtbot) -> None:
    release = threading.Event()
    worker = Worker(lambda job: release.wait(WAIT_MS / 1000))
    rec = Recorder(worker)
    worker.start()
    before = live_workers()
    del worker
    gc.collect()  # a collected running QThread would abort the whole test process here
    assert live_workers() == before
    with qtbot.waitSignal(rec.done, timeout=WAIT_MS):
        release.set()
    assert rec.names() == ["returned", "finished"]


def test_the_owner_destroyed_stops_the_worker_silently(qtbot) -> None:
    started, saw_abort = threading.Event(), threading.Event()

    def work(job: Job) -> None:
        started.set()
        if job.abort.wait(WAIT_MS / 1000):
            saw_abort.set()

    owner = QObject()
    worker = Worker(work, owner=owner)
    rec = Recorder(worker)
    worker.start()
    assert started.wait(WAIT_MS / 1000)
    del owner  # destroyed at once: the worker aborts and waits for its thread
    assert saw_abort.is_set() and not worker.is_running and worker.outcome == "aborted"
    assert rec.seen == []


def test_a_finished_worker_lets_go_of_its_owner(qtbot) -> None:
    """An owner running many short works (a chat pane renders per edit) outlives them: a finished
    worker waiting for the garbage collector must not be called when the owner goes later."""
    owner = QObject()
    destroyed = SIGNAL("destroyed(QObject*)")
    baseline = owner.receivers(destroyed)
    worker = Worker(lambda job: 1, owner=owner)
    assert owner.receivers(destroyed) == baseline + 1
    with qtbot.waitSignal(worker.finished, timeout=WAIT_MS):
        worker.start()
    assert owner.receivers(destroyed) == baseline
    del owner  # nothing is called on the finished worker


def test_a_finished_worker_and_its_owner_need_no_cyclic_collection(qtbot) -> None:
    """The owner holds its worker and the work reads the owner (a dialog's lambda): once the run
    is over, dropping the owner frees both at once. A cycle left for the collector would have it
    tear down live Qt objects at an arbitrary moment (the suite once died in such a collection)."""
    owner = QObject()
    owner.setObjectName("dialog")
    owner.worker = Worker(lambda job, dialog=owner: [job.report(1), dialog.objectName()], owner=owner)
    with qtbot.waitSignal(owner.worker.finished, timeout=WAIT_MS):
        owner.worker.start()
    assert owner.worker.outcome == "returned"
    owner_ref, worker_ref = weakref.ref(owner), weakref.ref(owner.worker)
    gc.disable()
    try:
        del owner
        assert owner_ref() is None and worker_ref() is None
    finally:
        gc.enable()


def test_stop_aborts_waits_and_ends_at_once(qtbot) -> None:
    worker = Worker(lambda job: job.abort.wait(WAIT_MS / 1000))
    rec = Recorder(worker)
    worker.start()
    worker.stop()
    assert rec.names() == ["aborted", "finished"] and not worker.is_running
    QCoreApplication.processEvents()  # the work's own (stale) outcome is still queued: it must not add a signal
    assert rec.names() == ["aborted", "finished"]
    with pytest.raises(RuntimeError, match="runs once"):
        worker.start()


def test_the_inbox_raises_aborted_for_a_waiting_worker() -> None:
    job = Job(print)
    job.abort.set()
    with pytest.raises(Cancelled):
        Inbox(("encode",)).get(job)


def _aborted_while_waiting(wait: Callable[[Job], object]) -> BaseException | None:
    """Run `wait(job)` on a thread, set the abort flag once the wait has registered its wake-up, and
    return what the wait raised. The waits have no timeout: only the wake-up can end them."""
    job, raised = Job(print), []

    def run() -> None:
        try:
            wait(job)
        except BaseException as e:  # noqa: BLE001
            raised.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_MS / 1000
    while not job.abort._wakes and time.monotonic() < deadline:  # noqa: SLF001
        time.sleep(0.001)
    job.abort.set()
    thread.join(WAIT_MS / 1000)
    assert not thread.is_alive(), "the abort did not wake the wait"
    return raised[0] if raised else None


def test_an_abort_wakes_an_inbox_that_waits() -> None:
    assert isinstance(_aborted_while_waiting(Inbox(("encode",)).get), Cancelled)


def test_an_abort_wakes_a_receive_from_a_silent_child() -> None:
    with ChildProcess(child_targets.echo, what="echo", name="tokviz-test-silent", goodbye=None) as child:
        assert isinstance(_aborted_while_waiting(child.receive), Cancelled)
        child.send("still there")  # the child was not disturbed
        assert child.receive(Job(print)) == ("echo", "still there")


def test_a_child_process_answers_and_stops() -> None:
    job = Job(print)
    with ChildProcess(child_targets.echo, what="echo", name="tokviz-test-echo", goodbye=None) as child:
        child.send("hi")
        assert child.receive(job) == ("echo", "hi")
        process = child.process
    assert process.exitcode == 0


def test_a_child_that_makes_a_semaphore_works() -> None:
    with ChildProcess(child_targets.semaphore, what="test", name="tokviz-test-lock", goodbye=None) as child:
        assert child.receive(Job(print)) == ("locked", True)


def test_a_dead_child_is_an_error_with_its_exit_code() -> None:
    with (
        ChildProcess(child_targets.die, 3, what="test", name="tokviz-test-die") as child,
        pytest.raises(ChildDied, match=r"the test process ended unexpectedly \(exit code 3\)"),
    ):
        child.receive(Job(print))


def test_an_aborted_child_is_sent_its_cancel_message() -> None:
    job = Job(print)
    with ChildProcess(child_targets.cancellable, what="test", name="tokviz-test-cancel") as child:
        assert child.receive(job) == "ready"
        job.abort.set()
        assert child.receive(job, cancel="cancel") == ("cancelled",)
        with pytest.raises(Cancelled):
            child.receive(job)


def test_a_child_that_does_not_answer_its_cancel_is_given_up_after_the_grace() -> None:
    job = Job(print)
    job.abort.set()
    with ChildProcess(child_targets.deaf, what="test", name="tokviz-test-deaf", goodbye=None) as child:
        began = time.monotonic()
        with pytest.raises(Cancelled, match="did not answer"):
            child.receive(job, cancel="cancel", grace_s=0.2)
        with pytest.raises(Cancelled, match="did not answer"):  # the grace ran from the one cancel sent
            child.receive(job, cancel="cancel", grace_s=0.2)
        assert time.monotonic() - began < WAIT_MS / 1000


def test_no_thread_or_process_is_set_up_outside_gui_work() -> None:
    import re
    from pathlib import Path

    import tokviz.gui

    gui = Path(tokviz.gui.__file__).parent
    pattern = re.compile(r"\b(QThread|QThreadPool|moveToThread|threading\.Thread|multiprocessing)\b")
    offenders = [
        f"{path.relative_to(gui)}:{n}"
        for path in gui.rglob("*.py") if path.parent.name != "work"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line.split("#")[0])
    ]
    assert offenders == [], "background work goes through tokviz.gui.work: " + ", ".join(offenders)
