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
    """`fetch` on a `Worker`'s thread: reports (entry, message, done, total) at most every 50 ms
    (a new entry and "done" always)."""
    from tokviz.core.fetch import fetch

    throttle = Throttle(THROTTLE_S)
    current: list[str | None] = [None]

    def progress(name: str, message: str, done: int, total: int) -> None:
        new = name != current[0]
        current[0] = name
        if throttle.ready(force=new or message == "done"):
            job.report((name, message, done, total))

    return fetch(names, progress=progress, cancel=job.abort)


class FetchBar(QWidget):
    """A strip above the panes: what is missing, a Fetch button, then progress and Cancel."""

    arrived = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(objectName="warningLabel", wordWrap=True)
        self.bar = QProgressBar()
        self.bar.hide()
        self.fetch_button = QPushButton("Fetch vocabularies")
        self.fetch_button.clicked.connect(lambda: self.start(None))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.close_button = QPushButton("Hide")
        self.close_button.clicked.connect(self.hide)
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
        if self.running:
            return
        chosen = list(names) if names is not None else None
        self._worker = Worker(partial(fetch_entries, names=chosen), owner=self, name="tokviz-fetch")
        self._worker.yielded.connect(self._on_progress)
        self._worker.returned.connect(self._on_finished)
        self._worker.errored.connect(self._on_failed)
        self._worker.aborted.connect(self._on_cancelled)
        self.bar.setRange(0, 0)
        self.bar.show()
        self.cancel_button.show()
        self.fetch_button.hide()
        self.show()
        self._worker.start()

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.abort()

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
        self.bar.hide()
        self.cancel_button.hide()
        self.fetch_button.show()
        self.label.setText(message)

    def stop(self) -> None:
        """Abort the fetch and wait for it (on close, or when a run ended)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
