"""The trainer panel: train a BPE vocabulary from a folder, watch it learn, compare it at once.

Inputs on the left (`TrainerForm`), then Start / Cancel, a progress bar with the phase, files and
bytes read, merges per second and ETA; a live table of merges and the corpus compression curve;
after the run, the skipped-files report and a slider that re-cuts the compare text with only the
first k merges (`RecutBox`).

A finished run is saved at once into `data_dir()/trained/NAME.tiktoken` (+ sidecar; a free name
is picked, so an earlier vocabulary is never overwritten) and announced with
`vocabulary_ready(path)`: panes load a spec in their own process, so the vocabulary must be on
disk to join the comparison. A cancelled or failed run writes nothing. Saved vocabularies are
listed (they reopen in later sessions) and can be added to the comparison again.

Closing the panel (or the application quitting, or the panel being deleted) during a run cancels
it and waits for its `Worker`; the trainer's counting processes are terminated by the trainer itself.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tokviz.gui.trainer.curve_chart import CurveChart, compact
from tokviz.gui.trainer.form import TrainerForm
from tokviz.gui.trainer.merge_table import MergeTableModel
from tokviz.gui.trainer.recut import RecutBox
from tokviz.gui.trainer.trained_list import TrainedList, free_base, human_bytes, trained_dir
from tokviz.gui.trainer.worker import TrainerProgress, failure_message, train_in_child
from tokviz.gui.work.worker import Worker
from tokviz.training import vocabfile
from tokviz.training.events import TrainingError
from tokviz.training.trainer import TrainingResult

BAR_STEPS = 1000
COUNTING_SHARE = 0.4  # of the bar: counting and merging take comparable time on a typical corpus
_PHASES = {"scanning": "Scanning", "counting": "Counting", "merging": "Merging"}


def human_seconds(s: float | None) -> str:
    if s is None:
        return "?"
    if s < 60:
        return f"{s:.0f} s"
    return f"{int(s // 60)} min {int(s % 60):02d} s"


class TrainerPanel(QWidget):
    """Train, watch, save, compare. Wire `vocabulary_ready` to the window's `add_pane`
    (or `run_saved` and the list's own `vocabulary_ready` apart, as the Tools menu does)."""

    vocabulary_ready = Signal(str)  # path of a .tiktoken (with its sidecar) to add as a pane
    run_saved = Signal(str)  # the same, for a run's own auto-save only (its pane replaces the last one's)
    message = Signal(str)  # one line for a status bar
    run_finished = Signal(object)  # TrainingResult, after the auto-save
    run_failed = Signal(str)
    run_cancelled = Signal()
    progressed = Signal(object)  # TrainerProgress, after the views were updated

    def __init__(self, parent: QWidget | None = None, *, compare_text: str = "") -> None:
        super().__init__(parent)
        self.result: TrainingResult | None = None
        self.saved_path: Path | None = None
        self.run: Worker | None = None  # the training run under way
        self.last_progress: TrainerProgress | None = None
        self._corpus_bytes = 0
        self._scan_skipped = 0  # files the scan left out (binary), which counting does not count
        self._build()
        self.recut.set_text(compare_text)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # -- layout ------------------------------------------------------------------------------
    def _build(self) -> None:
        self.form = TrainerForm()
        self.form.validity_changed.connect(self._update_buttons)
        left = QWidget()
        left_col = QVBoxLayout(left)
        left_col.setContentsMargins(0, 0, 4, 0)
        left_col.addWidget(self.form)
        self.trained = TrainedList()
        self.trained.vocabulary_ready.connect(self.vocabulary_ready)
        self.trained_list, self.add_button = self.trained.list, self.trained.add_button
        left_col.addWidget(self.trained, 1)
        scroll = QScrollArea(widgetResizable=True)
        scroll.setWidget(left)
        scroll.setMinimumWidth(330)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.start_button = QPushButton("Start training")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save as…")
        self.save_button.clicked.connect(self._save_as_dialog)
        self.hf_check = QCheckBox("also tokenizer.json")
        self.hf_check.setToolTip("Save as… also writes NAME.tokenizer.json for Hugging Face tokenizers")
        buttons = QHBoxLayout()
        for w in (self.start_button, self.cancel_button):
            buttons.addWidget(w)
        buttons.addStretch(1)
        buttons.addWidget(self.hf_check)
        buttons.addWidget(self.save_button)
        self.progress_bar = QProgressBar(textVisible=True)
        self.phase_label = QLabel("Choose a folder and press Start.")
        self.files_label = QLabel(objectName="mutedLabel")
        self.status_label = QLabel(wordWrap=True, objectName="statusLabel")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status_label.hide()

        self.merges_model = MergeTableModel(self)
        self.merges_view = QTableView()
        self.merges_view.setModel(self.merges_model)
        self.merges_view.verticalHeader().hide()
        self.merges_view.verticalHeader().setDefaultSectionSize(20)
        self.merges_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.merges_view.setAlternatingRowColors(True)
        header = self.merges_view.horizontalHeader()
        for col, width in enumerate((56, 80, 80, 110, 150, 70)):
            header.resizeSection(col, width)
        header.setStretchLastSection(True)
        self.corpus_curve = CurveChart("Corpus: tokens vs vocabulary size")
        self.corpus_curve.placeholder = "the curve grows as merges are learned"
        live = QSplitter(Qt.Orientation.Horizontal)
        live.addWidget(self._titled("Merges, in the order learned", self.merges_view))
        live.addWidget(self.corpus_curve)
        live.setSizes([520, 420])

        self.recut = RecutBox()
        self.skipped_table = QTableWidget(0, 2)
        self.skipped_table.setHorizontalHeaderLabels(["file", "reason"])
        self.skipped_table.verticalHeader().hide()
        self.skipped_table.verticalHeader().setDefaultSectionSize(20)
        self.skipped_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.skipped_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.skipped_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.recut, "Vocabulary size")
        self.tabs.addTab(self.skipped_table, "Skipped files")

        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(4, 0, 0, 0)
        column.addLayout(buttons)
        column.addWidget(self.progress_bar)
        column.addWidget(self.phase_label)
        column.addWidget(self.files_label)
        column.addWidget(self.status_label)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(live)
        body.addWidget(self.tabs)
        body.setSizes([420, 260])
        column.addWidget(body, 1)

        outer = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(scroll)
        outer.addWidget(right)
        outer.setStretchFactor(1, 1)
        outer.setSizes([340, 860])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(outer)
        self._update_buttons()

    @staticmethod
    def _titled(title: str, widget: QWidget) -> QWidget:
        box = QWidget()
        col = QVBoxLayout(box)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        label = QLabel(f"<b>{title}</b>")
        col.addWidget(label)
        col.addWidget(widget)
        return box

    # -- public API --------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.run is not None

    def set_compare_text(self, text: str) -> None:
        """The text the vocabulary-size slider re-cuts (the window's current text)."""
        self.recut.set_text(text)

    def set_paths(self, paths) -> None:
        self.form.set_paths(paths)

    def start(self) -> bool:
        """Start a run with the form's inputs; False (and a message) when they are not usable."""
        if self.running:
            return False
        try:
            job = self.form.job()
        except TrainingError as e:
            self._show(str(e), error=True)
            return False
        self.result = None
        self.saved_path = None
        self.last_progress = None
        self._corpus_bytes = 0
        self.merges_model.clear()
        self.corpus_curve.clear()
        self._scan_skipped = 0
        self.corpus_curve.x_min = 256  # the axis grows with the merges; the bar shows how far to go
        self.skipped_table.setRowCount(0)
        self.tabs.setTabText(1, "Skipped files")
        self.recut.set_result(None)
        self.status_label.hide()
        # owned by the panel: a panel deleted mid-run cancels the run and waits for it
        self.run = Worker(partial(train_in_child, training=job), owner=self, name=f"tokviz-train-{job.options.name}")
        self.run.yielded.connect(self._on_progress)
        self.run.returned.connect(self._on_finished)
        self.run.errored.connect(self._on_failed)
        self.run.aborted.connect(self._on_cancelled)
        self.run.finished.connect(self._on_ended)
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setValue(0)
        self.phase_label.setText(f"Starting {job.options.name}…")
        self.files_label.setText("")
        self.run.start()
        self._update_buttons()
        return True

    def cancel(self) -> None:
        if self.run is not None:
            self.run.abort()
            self.phase_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def shutdown(self) -> None:
        """Cancel any run and wait for it; stop the re-cut worker (on close or quit)."""
        if self.run is not None:
            self.run.stop()  # aborted, then finished: _on_ended forgets the run
        self.recut.shutdown()
        self._update_buttons()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)

    # -- progress ----------------------------------------------------------------------------
    def _on_progress(self, p: TrainerProgress) -> None:
        self.last_progress = p
        if p.phase == "counting":
            self._corpus_bytes = p.bytes_read
        if p.phase == "scanning":
            self._scan_skipped = p.files_skipped
        self._show_bar(p)
        self.phase_label.setText(self._phase_text(p))
        if p.phase != "merging":  # merging events carry no file counters: keep the corpus's
            # counting counts the files it skips itself; the binary ones were left out by the scan
            skipped = p.files_skipped + (self._scan_skipped if p.phase == "counting" else 0)
            self.files_label.setText(
                f"{p.files_read:,} files read · {skipped:,} skipped · {human_bytes(p.bytes_read)}"
            )
        if p.new_merges:
            view = self.merges_view
            at_end = view.verticalScrollBar().value() >= view.verticalScrollBar().maximum() - 2
            self.merges_model.append(p.new_merges)
            if at_end:
                view.scrollToBottom()
        if p.curve_points:
            self.corpus_curve.add_points([(256 + k, t) for k, t in p.curve_points])
            self._note_curve(256 + p.curve_points[-1][0], p.curve_points[-1][1])
        self.progressed.emit(p)

    def _show_bar(self, p: TrainerProgress) -> None:
        """One bar for the whole run: counting fills its first COUNTING_SHARE, merging the rest
        (it used to run to the end for counting and start again from zero for merging). Scanning,
        or a phase of unknown size, is a busy bar."""
        bar = self.progress_bar
        if not p.total or p.phase == "scanning":
            bar.setRange(0, 0)
            return
        share = min(p.done, p.total) / p.total
        start, width = (0.0, COUNTING_SHARE) if p.phase == "counting" else (COUNTING_SHARE, 1 - COUNTING_SHARE)
        bar.setRange(0, BAR_STEPS)
        bar.setValue(max(bar.value(), round((start + share * width) * BAR_STEPS)))

    @staticmethod
    def _phase_text(p: TrainerProgress) -> str:
        name = _PHASES.get(p.phase, p.phase)
        if p.phase == "scanning":
            return f"{name}: {p.done:,} files found"
        if p.phase == "counting":
            total = f" / {human_bytes(p.total)}" if p.total else ""
            return (f"{name}: {human_bytes(p.done)}{total} · {human_bytes(p.rate)}/s"
                    f" · ETA {human_seconds(p.eta)}")
        total = f" / {p.total:,}" if p.total is not None else ""
        return f"{name}: {p.done:,}{total} merges · {p.rate:,.0f} merges/s · ETA {human_seconds(p.eta)}"

    def _note_curve(self, vocab: int, tokens: int) -> None:
        per = f" ({self._corpus_bytes / tokens:.2f} bytes/token)" if tokens and self._corpus_bytes else ""
        self.corpus_curve.note = f"vocabulary {vocab:,}: {compact(tokens)} tokens{per}"

    # -- endings -----------------------------------------------------------------------------
    def _on_finished(self, result: TrainingResult) -> None:
        self.result = result
        self._corpus_bytes = result.corpus.bytes
        self.merges_model.sync(result.merges)
        curve = result.corpus_tokens()
        self.corpus_curve.set_points(range(256, 256 + len(curve)), curve)
        self._note_curve(255 + len(curve), curve[-1])
        self._fill_skipped(result)
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(1)
        short = len(result.merges) < result.requested_vocab_size - 256 - len(result.special_tokens)
        ran_out = (f" (stopped early: no pair occurs {result.params.get('min_frequency', 2)} times more)"
                   if short else "")
        self.phase_label.setText(
            f"Done: {len(result.merges):,} merges, vocabulary {result.vocab_size:,}{ran_out} "
            f"in {human_seconds(result.seconds)}"
        )
        self.files_label.setText(
            f"{result.corpus.files_read:,} files read · {len(result.corpus.files_skipped):,} skipped · "
            f"{human_bytes(result.corpus.bytes)} · {result.corpus.unique_chunks:,} distinct chunks"
        )
        self._auto_save(result)
        # the slider's curve encodes the text ~30 times on the re-cut thread: start it once this
        # handler and the run_finished slots are done, so it does not compete with them for the GIL
        QTimer.singleShot(0, self, lambda: self.recut.set_result(result) if self.result is result else None)
        self.run_finished.emit(result)

    def _auto_save(self, result: TrainingResult) -> None:
        try:
            folder = trained_dir()
            folder.mkdir(parents=True, exist_ok=True)
            written = vocabfile.save(result, free_base(folder, result.name))
        except Exception as e:  # disk full, permissions: the result stays here for Save as…
            self._show(f"Trained, but could not save into {trained_dir()}: {e}. Use Save as….", error=True)
            return
        self.saved_path = written[0]
        self.refresh_trained(select=self.saved_path)
        self._show(f"Saved {self.saved_path.name} in {self.saved_path.parent}.")
        self.run_saved.emit(str(self.saved_path))
        self.vocabulary_ready.emit(str(self.saved_path))

    def _on_failed(self, error: Exception) -> None:
        message = failure_message(error)
        if isinstance(error, TrainingError) and error.skipped:  # say which files and why
            self._fill_skipped_rows([(s.path, s.reason) for s in error.skipped])
            self.files_label.setText(f"0 files read · {len(error.skipped):,} skipped")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.phase_label.setText("Training failed.")
        self._show(message, error=True)
        self.run_failed.emit(message)

    def _on_cancelled(self) -> None:
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.phase_label.setText("Cancelled: nothing was written.")
        self._show("Training cancelled; nothing was written.")
        self.run_cancelled.emit()

    def _on_ended(self) -> None:
        self.run = None
        self._update_buttons()

    def _fill_skipped(self, result: TrainingResult) -> None:
        rows = [(s.path, s.reason) for s in result.corpus.files_skipped]
        rows += [(p, "not UTF-8: decoded with U+FFFD") for p in result.corpus.files_replaced]
        self._fill_skipped_rows(rows)

    def _fill_skipped_rows(self, rows: list[tuple[str, str]]) -> None:
        self.skipped_table.setRowCount(len(rows))
        for i, (path, reason) in enumerate(rows):
            self.skipped_table.setItem(i, 0, QTableWidgetItem(path))
            self.skipped_table.setItem(i, 1, QTableWidgetItem(reason))
        self.tabs.setTabText(1, f"Skipped files ({len(rows)})")

    def skipped_rows(self) -> list[tuple[str, str]]:
        t = self.skipped_table
        return [(t.item(i, 0).text(), t.item(i, 1).text()) for i in range(t.rowCount())]

    # -- saving and the saved list -----------------------------------------------------------
    def save_as(self, path: str | Path, *, hf_json: bool = False) -> list[Path]:
        """Write the finished result to `path` (`NAME` or `NAME.tiktoken`); raises on failure."""
        if self.result is None:
            raise TrainingError("nothing to save: train a vocabulary first")
        return vocabfile.save(self.result, path, hf_json=hf_json)

    def _save_as_dialog(self) -> None:
        if self.result is None:
            return
        start = str(Path.home() / f"{self.result.name}.tiktoken")
        path, _ = QFileDialog.getSaveFileName(self, "Save the vocabulary", start, "tiktoken ranks (*.tiktoken)")
        if not path:
            return
        try:
            written = self.save_as(path, hf_json=self.hf_check.isChecked())
        except Exception as e:
            self._show(f"Could not save: {e}", error=True)
        else:
            self._show("Saved " + ", ".join(p.name for p in written) + f" in {written[0].parent}.")

    def refresh_trained(self, select: Path | None = None) -> None:
        self.trained.refresh(select)

    def trained_paths(self) -> list[str]:
        return self.trained.paths()

    def add_selected(self) -> None:
        self.trained.add_selected()

    # -- helpers -----------------------------------------------------------------------------
    def _show(self, text: str, *, error: bool = False) -> None:
        self.status_label.setText(text)
        self.status_label.setStyleSheet("color: #c0392b;" if error else "color: #2e7d32;")
        self.status_label.show()
        self.message.emit(text)

    def _update_buttons(self, *_args) -> None:
        running = self.running
        self.start_button.setEnabled(not running and self.form.valid)
        self.cancel_button.setEnabled(running)
        self.save_button.setEnabled(not running and self.result is not None)
        self.form.set_running(running)


class TrainerDialog(QDialog):
    """The panel in its own window; closing it cancels a run and waits."""

    def __init__(self, parent: QWidget | None = None, *, compare_text: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("tokviz — train a vocabulary")
        self.panel = TrainerPanel(self, compare_text=compare_text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.panel)
        self.resize(1240, 800)

    def done(self, result: int) -> None:  # Escape and the close button both come here
        self.panel.shutdown()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.panel.shutdown()
        super().closeEvent(event)
