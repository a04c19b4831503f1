"""SharedThread: one Worker thread that runs the work of several others (the panes' cells)."""

from __future__ import annotations

import threading
import weakref

import pytest

from tokviz.core.cancel import Cancelled
from tokviz.gui.compare.pane_worker import PREPARING
from tokviz.gui.work.shared_thread import SharedThread
from tokviz.gui.work.worker import Job, Worker, live_workers

WAIT_MS = 30_000


def job() -> Job:
    return Job(lambda _value: None)


def test_calls_of_several_threads_run_on_the_one_shared_thread(qtbot):
    shared = SharedThread(name="tokviz-test-shared")
    before = live_workers()
    key = shared.attach()
    seen: list[tuple[int, int]] = []  # (caller's thread, the thread the work ran on)
    together = threading.Barrier(3, timeout=WAIT_MS / 1000)  # all alive at once: distinct idents

    def caller(work_job: Job) -> None:
        together.wait()
        for _ in range(3):
            ran_on = shared.call(work_job, threading.get_ident, lambda: -1)
            seen.append((threading.get_ident(), ran_on))
        together.wait()

    try:
        workers = [Worker(caller, name=f"tokviz-test-caller-{k}") for k in range(3)]
        with qtbot.waitSignals([w.finished for w in workers], timeout=WAIT_MS):
            for w in workers:
                w.start()
        assert [w.outcome for w in workers] == ["returned"] * 3
    finally:
        shared.detach(key)
    callers, ran_on = {c for c, _ in seen}, {r for _, r in seen}
    assert len(seen) == 9 and len(callers) == 3 and len(ran_on) == 1
    assert not ran_on & (callers | {threading.get_ident(), -1})
    shared.detach(key)  # a second detach of one key is nothing
    assert not shared.running and live_workers() == before


def test_without_the_shared_thread_the_work_runs_in_the_callers_thread():
    shared = SharedThread(name="tokviz-test-shared")
    assert shared.call(job(), lambda: "there", lambda: "here") == "here"


def test_an_error_of_the_work_is_raised_in_the_caller(qtbot):
    shared = SharedThread(name="tokviz-test-shared")
    key = shared.attach()

    def fail() -> None:
        raise ValueError("bad cells")

    try:
        with pytest.raises(ValueError, match="bad cells"):
            shared.call(job(), fail, lambda: None)
        assert shared.call(job(), lambda: 2, lambda: 0) == 2  # and the thread serves on
    finally:
        shared.detach(key)


class Prepared:
    """Stands for a pane's prepared cells and widths: something big the caller lets go of."""


def test_the_thread_keeps_nothing_of_a_call_once_the_caller_has_its_value(qtbot):
    shared = SharedThread(name="tokviz-test-shared")
    key = shared.attach()
    try:
        value = shared.call(job(), Prepared, lambda: None)
        assert isinstance(value, Prepared) and shared.running
        gone = weakref.ref(value)
        del value  # the thread is still serving, waiting for its next call
        assert gone() is None
    finally:
        shared.detach(key)


def test_an_aborted_caller_stops_waiting_and_its_work_is_skipped(qtbot):
    shared = SharedThread(name="tokviz-test-shared")
    key = shared.attach()
    busy, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def block() -> None:
        busy.set()
        release.wait(WAIT_MS / 1000)

    blocker = Worker(lambda work_job: shared.call(work_job, block, lambda: None), name="tokviz-test-blocker")
    with qtbot.waitSignal(blocker.finished, timeout=WAIT_MS):
        blocker.start()
        assert busy.wait(WAIT_MS / 1000)
        waiting = job()
        waiting.abort.set()  # aborted while the shared thread is busy with another's work
        with pytest.raises(Cancelled):
            shared.call(waiting, lambda: ran.append("skipped work"), lambda: None)
        release.set()
    assert shared.call(job(), lambda: "served", lambda: "here") == "served"
    assert ran == []
    shared.detach(key)


def test_each_pane_uses_the_shared_thread_while_it_lives(make_window, qtbot):
    before = PREPARING.users
    window = make_window(specs=["cl100k_base", "o200k_base"], text="日本語と한국어 👋")
    assert PREPARING.running and PREPARING.users == before + 2
    window.shutdown()
    assert PREPARING.users == before
