"""Fixtures for the compare window: an isolated settings file and a window-building helper."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QSettings

from tokviz.gui.app import build_window
from tokviz.gui.compare.window import MainWindow

TIMEOUT_MS = 120_000  # a bound for a stuck pane, not a race: waits end as soon as the panes are ready


@pytest.fixture(autouse=True)
def free_what_the_test_left(qapp) -> Iterator[None]:
    """After the test's widgets are closed: run their deferred deletes and collect their reference
    cycles now. Left to the collector, a test's windows and dialogs were torn down at a moment of
    its choosing inside a later test, beside that test's worker threads (the suite died once in
    such a collection); here each test frees its own, with none of its threads running."""
    yield
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Each test gets its own INI file: nothing leaks into the user's settings or other tests."""
    return QSettings(str(tmp_path / "tokviz-test.ini"), QSettings.Format.IniFormat)


def wait_ready(qtbot, window: MainWindow, timeout: int = TIMEOUT_MS) -> None:
    """Wait until every pane has loaded, tokenized the current text (or failed) and laid it out."""
    text = window.text()

    def ready() -> bool:
        for pane in window.panes:
            if pane.busy or (pane.tokenizer is None and pane.error is None):
                return False
            if pane.error is None and (pane.result is None or pane.result.text != text):
                return False
            if pane.result is not None and not pane.view.layout_done:
                return False
        return True

    qtbot.waitUntil(ready, timeout=timeout)


@pytest.fixture
def make_window(qtbot, settings) -> Callable[..., MainWindow]:
    def make(specs: Sequence[str] = ("cl100k_base",), text: str = "", **kwargs) -> MainWindow:
        window = build_window(specs=list(specs), text=text, settings=settings, restore=False, **kwargs)
        qtbot.addWidget(window)
        window.resize(1200, 800)
        window.show()
        wait_ready(qtbot, window)
        return window

    return make
