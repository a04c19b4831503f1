"""The panes' preparations run one at a time, each on a Worker; a pane's newer one replaces its
waiting one, and a pane that goes takes its preparations with it."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject
from shiboken6 import isValid

from tokviz.gui.compare.service import Preparer
from tokviz.gui.work.worker import live_workers

WAIT_MS = 60_000


def test_preparations_run_one_at_a_time_and_a_newer_one_replaces_the_waiting_one(qtbot) -> None:
    preparer = Preparer()
    first, second = QObject(), QObject()
    release = threading.Event()
    running: list[int] = []
    at_once: list[int] = []
    done: list[tuple[str, object]] = []

    def work(name: str, value: object, hold: bool = False):
        def run():
            running.append(1)
            at_once.append(len(running))
            if hold:
                release.wait(WAIT_MS / 1000)
            running.pop()
            return value
        return run

    preparer.submit(first, work("first", 1, hold=True), lambda v: done.append(("first", v)), done.append)
    preparer.submit(second, work("second", 2), lambda v: done.append(("second", v)), done.append)
    preparer.submit(second, work("second", 3), lambda v: done.append(("second", v)), done.append)  # replaces 2
    assert preparer.busy
    release.set()
    qtbot.waitUntil(lambda: not preparer.busy, timeout=WAIT_MS)
    assert done == [("first", 1), ("second", 3)] and at_once == [1, 1]


def test_a_pane_that_goes_takes_its_preparations_with_it(qtbot) -> None:
    preparer = Preparer()
    busy, gone = QObject(), QObject()
    release = threading.Event()
    done: list[object] = []
    before = live_workers()

    preparer.submit(busy, lambda: release.wait(WAIT_MS / 1000), done.append, done.append)
    preparer.submit(gone, lambda: "never", done.append, done.append)
    gone.deleteLater()
    qtbot.waitUntil(lambda: not isValid(gone), timeout=WAIT_MS)
    release.set()
    qtbot.waitUntil(lambda: not preparer.busy, timeout=WAIT_MS)
    assert done == [True] and live_workers() == before


def test_an_error_of_a_preparation_goes_to_its_pane(qtbot) -> None:
    preparer = Preparer()
    owner = QObject()
    errors: list[BaseException] = []

    def broken():
        raise ValueError("bad cell")

    preparer.submit(owner, broken, errors.append, errors.append)
    qtbot.waitUntil(lambda: not preparer.busy, timeout=WAIT_MS)
    assert [str(e) for e in errors] == ["bad cell"]


def test_a_pane_that_goes_mid_preparation_holds_up_neither_the_window_nor_the_next_pane(qtbot) -> None:
    """Its run is aborted and ends on its own (its result unseen); the next preparation follows."""
    preparer = Preparer()
    going, staying = QObject(), QObject()
    started, release, ended = threading.Event(), threading.Event(), threading.Event()
    done: list[object] = []
    before = live_workers()

    def slow() -> str:
        started.set()
        release.wait(WAIT_MS / 1000)
        ended.set()
        return "stale"

    preparer.submit(going, slow, done.append, done.append)
    assert started.wait(WAIT_MS / 1000)
    going.deleteLater()  # the pane's own release is not called: the preparer sees the owner go
    qtbot.waitUntil(lambda: not isValid(going), timeout=WAIT_MS)
    assert not ended.is_set()  # the GUI thread did not wait for the run to end
    preparer.submit(staying, lambda: "fresh", done.append, done.append)
    release.set()
    qtbot.waitUntil(lambda: not preparer.busy, timeout=WAIT_MS)
    assert done == ["fresh"] and live_workers() == before
