"""Fetch the catalog's vocabularies from the window: a progress bar, a cancel button, and a pane
for each vocabulary as it arrives (what `tokviz vocabs fetch` does, via `tokviz.core.fetch`)."""

from __future__ import annotations

import threading
import time
from typing import Sequence

from PySide6.QtCore import QObject, QThread, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from tokviz.core import catalog
from tokviz.core.fetch import FetchCancelled, fetch

THROTTLE_S = 0.05  # at most one progress signal per 50 ms (except the terminal ones)


class FetchWorker(QObject):
    """Runs `fetch` on its own thread; each run ends in one of finished / failed / cancelled."""

    progress = Signal(str, str, int, int)  # entry, message, done, total
    arrived = Signal(str)  # an entry that is now provisioned
    finished = Signal(object)  # list[FetchResult]
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._cancel = threading.Event()
        self._last = 0.0
        self._current: str | None = None

    def cancel(self) -> None:
        """Plain method: a queued slot would only run once the download is over."""
        self._cancel.set()

    @Slot(object)
    def run(self, names: Sequence[str] | None) -> None:
        try:
            results = fetch(names, progress=self._on_progress, cancel=self._cancel)
        except FetchCancelled:
            self.cancelled.emit()
        except Exception as e:  # network, disk, a broken catalog: a message, not a crash
            self.failed.emit(f"{type(e).__name__}: {e}")
        else:
            for r in results:
                if r.ok:
                    self.arrived.emit(r.name)
            self.finished.emit(results)

    def _on_progress(self, name: str, message: str, done: int, total: int) -> None:
        if name != self._current:
            self._current = name
            self._last = 0.0  # always report a new entry
        now = time.monotonic()
        if now - self._last >= THROTTLE_S or message == "done":
            self._last = now
            self.progress.emit(name, message, done, total)


class FetchBar(QWidget):
    """A strip above the panes: what is missing, a Fetch button, then progress and Cancel."""

    arrived = Signal(str)
    _start = Signal(object)

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
        self._thread: QThread | None = None
        self._worker: FetchWorker | None = None
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
        return self._thread is not None

    def start(self, names: Sequence[str] | None) -> None:
        if self.running:
            return
        self._thread = QThread()
        self._worker = FetchWorker()
        self._worker.moveToThread(self._thread)
        self._start.connect(self._worker.run)
        self._worker.progress.connect(self._on_progress)
        self._worker.arrived.connect(self.arrived)
        self._worker.finished.connect(self._on_finished)
        # bound methods, not lambdas: a lambda has no thread of its own, so PySide would call it
        # on the worker's thread, which would then try to wait for itself in stop()
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)
        self._thread.start()
        self.bar.setRange(0, 0)
        self.bar.show()
        self.cancel_button.show()
        self.fetch_button.hide()
        self.show()
        self._start.emit(list(names) if names is not None else None)

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _on_progress(self, name: str, message: str, done: int, total: int) -> None:
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(done)
        self.label.setText(f"{name}: {message} ({done}/{total})" if name else message)

    def _on_finished(self, results: list) -> None:
        self.results = results
        bad = [f"{r.name}: {r.message}" for r in results if not r.ok]
        ok = sum(r.ok for r in results)
        self._end(f"Fetched {ok} of {len(results)}." + (" Failed: " + "; ".join(bad) if bad else ""))

    def _on_failed(self, message: str) -> None:
        self._end(f"Fetch failed: {message}")

    def _on_cancelled(self) -> None:
        self._end("Fetch cancelled; files are complete or absent.")

    def _end(self, message: str) -> None:
        self.stop()
        self.bar.hide()
        self.cancel_button.hide()
        self.fetch_button.show()
        self.label.setText(message)

    def stop(self) -> None:
        """Cancel and wait for the thread (on close, or when a run ended)."""
        if self._thread is None:
            return
        self._worker.cancel()  # type: ignore[union-attr]
        self._thread.quit()
        self._thread.wait()
        self._start.disconnect()
        self._thread = None
        self._worker = None
