"""First start and fetching vocabularies from the window (no network: provisioned entries only)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from tests.gui.conftest import TIMEOUT_MS, wait_ready
from tokviz.gui.app import build_window
from tokviz.gui.compare.fetch_bar import FetchBar, fetch_entries
from tokviz.gui.work.worker import Worker


def test_first_start_with_nothing_provisioned_opens_and_offers_fetch(
    qtbot, settings, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path / "empty"))
    window = build_window(settings=settings, restore=False, text="hello 안녕")
    qtbot.addWidget(window)
    # only the vocabulary tokviz trained on its own samples ships with the package
    assert [p.spec for p in window.panes] == ["tokviz-samples"]
    assert window.fetch_bar.isVisibleTo(window)
    assert "cl100k_base" in window.fetch_bar.label.text() and window.fetch_bar.fetch_button.isEnabled()
    wait_ready(qtbot, window)
    pane = window.panes[0]
    assert pane.error is None and pane.result.tokens and pane.result.text == "hello 안녕"


def test_fetch_of_provisioned_entries_ends_in_finished_and_adds_panes(qtbot, make_window) -> None:
    window = make_window(["cl100k_base"], "hello")
    bar = window.fetch_bar
    with qtbot.waitSignal(bar.arrived, timeout=TIMEOUT_MS) as arrived:
        bar.start(["qwen"])  # already here: checked against its sha256, no download
    assert arrived.args == ["qwen"]
    qtbot.waitUntil(lambda: not bar.running, timeout=TIMEOUT_MS)
    assert [r.ok for r in bar.results] == [True] and "already here" in bar.results[0].message
    assert [p.spec for p in window.panes] == ["cl100k_base", "qwen"]


def test_cancelled_fetch_ends_in_cancelled(qtbot) -> None:
    worker = Worker(partial(fetch_entries, names=["cl100k_base"]))
    worker.abort()
    with qtbot.waitSignals([worker.aborted, worker.finished], order="strict", timeout=TIMEOUT_MS), \
            qtbot.assertNotEmitted(worker.returned):
        worker.start()


def test_fetch_bar_stops_cleanly(qtbot) -> None:
    bar = FetchBar()
    qtbot.addWidget(bar)
    bar.start(["cl100k_base"])
    bar.stop()
    assert not bar.running
