"""Fetch the catalog's vocabularies from the window: a progress bar, a cancel button, and a pane
for each vocabulary as it arrives (what `tokviz vocabs fetch` does, via `tokviz.core.fetch`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from tokviz.core import catalog
from tokviz.gui.work.worker import Job, Throttle, Worker

if TYPE_CHECKING:  # imported when a fetch runs: the window rarely needs its archive modules' memory
    from tokviz.core.fetch import FetchResult

THROTTLE_S = 0.05  # at most one progress signal per 50 ms (except the terminal ones)


def fetch_entries(job: Job, names: Sequence[str] | None) -> list[FetchResult]:
    """`fetch` on a `Worker`'s thread, reporting (entry, message, done, total) at most every
    THROTTLE_S (a new entry and "done" always)."""
    from tokviz.core.fetch import fetch

    throttle = Throttle(THROTTLE_S)
    current: str | None = None

    def progress(name: str, message: str, done: int, total: int) -> None:
        nonlocal current
        new, current = name != current, name
        if throttle.ready(force=new or message == "done"):
            job.report((name, message, done, total))

    return fetch(names, progress=progress, cancel=job.abort)


class FetchBar(QWidget):
    """A strip above the panes: what is missing, a Fetch button, then progress and Cancel;
    `arrived` names each vocabulary fetched."""

    arrived = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(objectName="warningLabel", wordWrap=True)
        self.bar = QProgressBar(visible=False)
        self.fetch_button = QPushButton("Fetch vocabularies", clicked=lambda: self.start(None))
        self.cancel_button = QPushButton("Cancel", visible=False, clicked=self.cancel)
        self.close_button = QPushButton("Hide", clicked=self.hide)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 4, 2)
        row.addWidget(self.label, 1)
        row.addWidget(self.bar, 1)
        for button in (self.fetch_button, self.cancel_button, self.close_button):
            row.addWidget(button)
        self._worker: Worker | None = None
        self.results: list | None = None
        self.offer()

    def offer(self) -> None:
        """Say which catalog vocabularies are missing on this machine."""
        try:
            missing = [e.name for e in catalog.entries() if not e.available]
        except Exception as e:
            missing, note = [], f"catalog unreadable: {e}"
        else:
            note = (f"Not on this machine yet: {', '.join(missing)}. Fetch them (the catalog's "
                    f"files, checked against their sha256)?" if missing else "Every catalog vocabulary is here.")
        self.label.setText(note)
        self.fetch_button.setEnabled(bool(missing))

    @property
    def running(self) -> bool:
        return self._worker is not None

    def start(self, names: Sequence[str] | None) -> None:
        """Fetch `names` (None: every catalog vocabulary), unless a fetch is running."""
        if self.running:
            return
        chosen = None if names is None else list(names)
        self._worker = Worker(partial(fetch_entries, names=chosen), owner=self, name="tokviz-fetch")
        self._worker.yielded.connect(self._on_progress)
        self._worker.returned.connect(self._on_finished)
        self._worker.errored.connect(self._on_failed)
        self._worker.aborted.connect(self._on_cancelled)
        self.bar.setRange(0, 0)
        self._show_running(True)
        self.show()
        self._worker.start()

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.abort()

    def _show_running(self, running: bool) -> None:
        self.bar.setVisible(running)
        self.cancel_button.setVisible(running)
        self.fetch_button.setVisible(not running)

    def _on_progress(self, report: tuple[str, str, int, int]) -> None:
        name, message, done, total = report
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
        self.label.setText(f"{name}: {message} ({done}/{total})" if name else message)

    def _on_finished(self, results: list[FetchResult]) -> None:
        self.results = results
        for r in results:
            if r.ok:
                self.arrived.emit(r.name)
        bad = [f"{r.name}: {r.message}" for r in results if not r.ok]
        ok = sum(r.ok for r in results)
        self._end(f"Fetched {ok} of {len(results)}." + (" Failed: " + "; ".join(bad) if bad else ""))

    def _on_failed(self, error: Exception) -> None:  # network, disk, a broken catalog: a message
        self._end(f"Fetch failed: {type(error).__name__}: {error}")

    def _on_cancelled(self) -> None:
        self._end("Fetch cancelled; files are complete or absent.")

    def _end(self, message: str) -> None:
        self.stop()
        self._show_running(False)
        self.label.setText(message)

    def stop(self) -> None:
        """Abort the fetch and wait for it (on close, or when a run ended)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
