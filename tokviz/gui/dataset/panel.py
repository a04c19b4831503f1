"""The Dataset tab: a file or folder counted in each of the window's tokenizers, as `tokviz dataset`
counts it; a histogram of example lengths, the summary table and the examples.

A run is one `Worker` (`run.count`, the CLI's own counting in worker processes); Cancel sets its
abort flag, which the counting watches while a worker process counts (and then stops the
processes). Double-clicking an example reads it again (a second `Worker`) and hands it to the
window: a text to the Text tab's editor, a conversation to the Chat tab (`open_text`,
`open_chat`). The path, field, template choice, context and sort are kept in the window's
QSettings under `dataset/`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QSettings, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.chat_sources import BUILTIN, TemplateSourceError
from tokviz.core.records import SUFFIXES, Example, Skip
from tokviz.gui.dataset.histogram import LengthHistogram, histogram
from tokviz.gui.dataset.models import ExampleModel, SummaryModel
from tokviz.gui.dataset.run import (
    SHARD_BYTES,
    DatasetRequest,
    DatasetResult,
    RunProgress,
    count,
    read_example,
    skips_text,
    summary_rows,
)
from tokviz.gui.widgets.charts import SERIES_COLORS
from tokviz.gui.work.worker import Worker, message_of

OWN_TEMPLATE = "each model's own template"
#: the sort choices: label -> what `sort_by` does (a tokenizer column, spread, findings or input order)
SORTS = ("longest first", "most disagreement", "most findings", "input order")


def default_jobs() -> int:
    """Worker processes for a run: one per core, at most four (the window's own work goes on)."""
    return max(1, min(os.cpu_count() or 1, 4))


class DatasetPanel(QWidget):
    message = Signal(str)  # for the status bar
    open_text = Signal(str)  # a text example, for the Text tab
    open_chat = Signal(object, object)  # a conversation's messages and tools, for the Chat tab
    finished = Signal()  # a run ended (counted, failed or cancelled); tests wait on it

    def __init__(self, *, settings: QSettings | None = None, context_limit: int | None = None,
                 restore: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.specs: tuple[str, ...] = ()
        self.jobs = default_jobs()
        self.shard_bytes = SHARD_BYTES
        self.result: DatasetResult | None = None
        self.error: str | None = None
        self.worker: Worker | None = None
        self.opener: Worker | None = None
        self.last_progress: RunProgress | None = None
        self._build_ui()
        self.context.setValue(context_limit or 0)
        if restore:
            self.restore()

    # -- layout ------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.path = QLineEdit(placeholderText="a dataset file or folder: JSONL, JSON, Parquet, CSV, Arrow, text")
        self.path.returnPressed.connect(self.start)
        open_file = QPushButton("Open file…")
        open_file.clicked.connect(self.choose_file)
        open_folder = QPushButton("Folder…")
        open_folder.clicked.connect(self.choose_folder)
        self.field = QLineEdit(placeholderText="auto")
        self.field.setToolTip("The field holding the text or messages (dotted: a.b.0); empty: messages, "
                              "conversations, prompt + completion or text, whichever a row has")
        self.field.setMaximumWidth(110)
        self.template = QComboBox()
        self.template.addItems([OWN_TEMPLATE, *sorted(BUILTIN)])
        self.template.setToolTip("The chat template conversations are rendered with, as `tokviz dataset --template`")
        self.count_button = QPushButton("Count")
        self.count_button.setToolTip("Count every example in each pane's tokenizer (Enter in the path)")
        self.count_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        top = QHBoxLayout()
        top.addWidget(self.path, 1)
        top.addWidget(open_file)
        top.addWidget(open_folder)
        top.addWidget(QLabel("field"))
        top.addWidget(self.field)
        top.addWidget(self.template)
        top.addWidget(self.count_button)
        top.addWidget(self.cancel_button)

        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(240)
        self.progress.setMaximumHeight(14)
        self.progress.hide()
        self.state = QLabel("Open a dataset to count it in each pane's tokenizer.")
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel(objectName="warningLabel", wordWrap=True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        self.context = QSpinBox(minimum=0, maximum=10_000_000, singleStep=1024, specialValueText="none")
        self.context.setToolTip("Context limit in tokens: marked in the histogram, counted in the table (0: none)")
        self.context.setGroupSeparatorShown(True)
        self.context.valueChanged.connect(self._on_context)
        self.sort = QComboBox()
        self.sort.addItems(SORTS)
        self.sort.setToolTip("How the examples are listed (or click a column's header)")
        self.sort.currentIndexChanged.connect(self._apply_sort)
        status = QHBoxLayout()
        status.addWidget(self.progress)
        status.addWidget(self.state, 1)
        status.addWidget(QLabel("context"))
        status.addWidget(self.context)
        status.addWidget(QLabel("sort"))
        status.addWidget(self.sort)

        self.histogram = LengthHistogram()
        self.summary_model = SummaryModel()
        self.summary_view = QTableView()
        self.summary_view.setModel(self.summary_model)
        self.summary_view.verticalHeader().hide()
        self.summary_view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.summary_view.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.summary_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.summary_view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.summary_view.setSizeAdjustPolicy(QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
        self.summary_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)

        self.example_model = ExampleModel()
        self.examples = QTableView()
        self.examples.setModel(self.example_model)
        self.examples.setSortingEnabled(True)
        self.examples.verticalHeader().hide()
        self.examples.setWordWrap(False)
        self.examples.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.examples.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.examples.doubleClicked.connect(self._on_double_click)
        self.examples.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.skips = QLabel(objectName="paneSubheader", wordWrap=True)
        self.skips.hide()
        lower = QWidget()
        lbox = QVBoxLayout(lower)
        lbox.setContentsMargins(0, 0, 0, 0)
        self.examples_title = QLabel("<b>Examples</b>")
        lbox.addWidget(self.examples_title)
        lbox.addWidget(self.examples, 1)
        lbox.addWidget(self.skips)

        # the summary on the full width (its figures come first), then the lengths over the examples
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.histogram)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([2000, 3000])

        box = QVBoxLayout(self)
        box.setContentsMargins(6, 4, 6, 0)
        box.addLayout(top)
        box.addLayout(status)
        box.addWidget(self.error_label)
        box.addWidget(self.summary_view)
        box.addWidget(splitter, 1)

    # -- the tokenizers: the window's panes ---------------------------------------------------------
    def set_specs(self, specs: Sequence[str]) -> None:
        self.specs = tuple(dict.fromkeys(specs))
        self.count_button.setEnabled(bool(self.specs) and not self.busy)
        if self.result is not None and self.result.request.specs != self.specs and not self.busy:
            self.state.setText(self._done_text(self.result) + " · the panes changed: Count again for theirs")

    # -- a run -------------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.worker is not None and self.worker.is_running

    def request(self) -> DatasetRequest:
        template = self.template.currentText()
        return DatasetRequest((self.path.text().strip(),), self.specs, field=self.field.text().strip() or None,
                              template=None if template == OWN_TEMPLATE else template, jobs=self.jobs,
                              shard_bytes=self.shard_bytes)

    def open_path(self, path: str) -> None:
        """Count `path` (a file or folder) at once."""
        self.path.setText(path)
        self.start()

    def start(self) -> bool:
        """Count the path in every pane's tokenizer; False (and why, in the tab) when it cannot start."""
        if self.busy:
            return False
        request = self.request()
        if not request.paths[0]:
            self._show_error("choose a dataset file or folder first")
            return False
        if not request.specs:
            self._show_error("the window has no tokenizer pane to count with")
            return False
        self.error = None
        self.error_label.hide()
        self.last_progress = None
        worker = Worker(lambda job: count(request, job.abort, job.report), owner=self, name="tokviz-dataset")
        worker.yielded.connect(self._on_progress)
        worker.returned.connect(self._on_done)
        worker.errored.connect(self._on_error)
        worker.aborted.connect(self._on_aborted)
        worker.finished.connect(self._on_finished)
        self.worker = worker
        self.count_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setRange(0, 0)  # busy until the first shard is counted
        self.histogram.set_note("counting…")
        self.progress.show()
        self.state.setText(f"counting {request.paths[0]} in {len(request.specs)} tokenizer"
                           f"{'s' * (len(request.specs) != 1)}…")
        worker.start()
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.abort()
            self.state.setText("cancelling…")

    def _on_progress(self, p: object) -> None:
        if not isinstance(p, RunProgress):
            return
        self.last_progress = p
        if p.total_bytes:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * p.done_bytes / p.total_bytes))
        self.state.setText(progress_text(p))

    def _on_done(self, result: object) -> None:
        assert isinstance(result, DatasetResult)
        self.result = result
        self.show_result(result)

    def _on_error(self, error: object) -> None:
        text = message_of(error) if isinstance(error, BaseException) else str(error)
        if isinstance(error, TemplateSourceError):  # "pass --template FILE or ...": the CLI's words
            text = text.split(": pass --template", 1)[0] + ": choose a template beside Count"
            if (builtins := sorted(BUILTIN)):
                text += f" ({', '.join(builtins)})"
        self._show_error(text)
        self.state.setText("nothing counted" + (" · the tables show the last run" if self.result else ""))

    def _on_aborted(self) -> None:
        p = self.last_progress
        done = f" after {p.examples:,} examples" if p is not None else ""
        self.state.setText(f"cancelled{done}" + (" · the table shows the last whole run" if self.result else ""))
        self.message.emit(f"dataset: cancelled{done}")

    def _on_finished(self) -> None:
        self.worker = None
        self.histogram.set_note(None)
        self.progress.hide()
        self.count_button.setEnabled(bool(self.specs))
        self.cancel_button.setEnabled(False)
        self.finished.emit()

    def _show_error(self, text: str) -> None:
        self.error = text
        self.error_label.setText(text)
        self.error_label.show()
        self.message.emit(f"dataset: {text}")

    # -- showing a result ------------------------------------------------------------------------------
    def show_result(self, result: DatasetResult) -> None:
        table = result.table
        colors = [SERIES_COLORS[k % len(SERIES_COLORS)] for k in range(len(table.names))]
        self.histogram.set_data(histogram(table.names, table.tokens), colors)
        self.example_model.set_table(table)
        self._on_context(self.context.value())
        self._apply_sort()
        self.examples.resizeColumnsToContents()
        self.examples.setColumnWidth(2, min(max(self.examples.columnWidth(2), 200), 420))
        self.examples.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        summary = result.summary
        if summary.skipped:
            self.skips.setText(f"{summary.skipped:,} record{'s' * (summary.skipped != 1)} skipped (not counted): "
                               + "; ".join(str(s) for s in summary.skips[:3])
                               + (" …" if summary.skipped > 3 else ""))
            self.skips.setToolTip(skips_text(summary.skips, summary.skipped))
        self.skips.setVisible(bool(summary.skipped))
        self.examples_title.setText(f"<b>Examples</b> ({len(table):,}) — double-click one to open it "
                                    "in the Text or Chat tab")
        self.state.setText(self._done_text(result))
        self.message.emit(f"dataset: {self._done_text(result)}")

    def _done_text(self, result: DatasetResult) -> str:
        s = result.summary
        skipped = f", {s.skipped:,} skipped" if s.skipped else ""
        return (f"{s.examples:,} examples ({s.chats:,} conversations{skipped}), {s.chars:,} chars, "
                f"in {result.seconds:.1f} s")

    def _on_context(self, value: int) -> None:
        limit = value or None
        self.histogram.set_limit(limit)
        self.example_model.set_limit(limit)
        if self.result is not None:
            self.summary_model.set_rows(summary_rows(self.result.summary, limit))
            self.summary_view.resizeColumnsToContents()

    def _apply_sort(self) -> None:
        choice = self.sort.currentText()
        model = self.example_model
        column = {"longest first": len(model.FIXED), "most disagreement": model.spread_column,
                  "most findings": model.findings_column}.get(choice, 0)
        order = Qt.SortOrder.AscendingOrder if column == 0 else Qt.SortOrder.DescendingOrder
        self.examples.sortByColumn(column, order)

    # -- opening one example --------------------------------------------------------------------------
    def _on_double_click(self, index: QModelIndex) -> None:
        self.open_example(self.example_model.row_of(index.row()))

    def open_example(self, row: int) -> None:
        """Read the example of table row `row` again and send it to the Text or Chat tab."""
        result = self.result
        if result is None or (self.opener is not None and self.opener.is_running):
            return
        request, example = result.request, int(result.table.index[row])
        self.opener = Worker(lambda job: read_example(request.paths, example, field=request.field), owner=self,
                             name="tokviz-dataset-open")
        self.opener.returned.connect(self._on_example)
        self.opener.errored.connect(lambda e: self._show_error(f"example {example}: {message_of(e)}"))
        self.message.emit(f"dataset: opening example {example}…")
        self.opener.start()

    def _on_example(self, record: object) -> None:
        if isinstance(record, Skip):
            self._show_error(f"{record}")
        elif isinstance(record, Example) and record.messages is not None:
            self.open_chat.emit(record.messages, record.tools)
            self.message.emit(f"dataset: {record.source} opened in the Chat tab")
        elif isinstance(record, Example):
            self.open_text.emit(record.text or "")
            self.message.emit(f"dataset: {record.source} opened in the Text tab")

    # -- remembered between runs -------------------------------------------------------------------------
    def restore(self) -> None:
        s = self.settings
        if s is None:
            return
        path, field = s.value("dataset/path", ""), s.value("dataset/field", "")
        template = s.value("dataset/template", "")
        self.path.setText(path if isinstance(path, str) else "")
        self.field.setText(field if isinstance(field, str) else "")
        if isinstance(template, str) and (i := self.template.findText(template)) >= 0:
            self.template.setCurrentIndex(i)
        if self.path.text():
            self.state.setText(f"Count (or Enter in the path) counts {self.path.text()} in each pane's tokenizer.")
        if s.contains("dataset/context"):
            self.context.setValue(_as_int(s.value("dataset/context", 0)))
        sort = s.value("dataset/sort", "")
        if isinstance(sort, str) and (i := self.sort.findText(sort)) >= 0:
            with QSignalBlocker(self.sort):
                self.sort.setCurrentIndex(i)

    def save(self) -> None:
        s = self.settings
        if s is None:
            return
        s.setValue("dataset/path", self.path.text().strip())
        s.setValue("dataset/field", self.field.text().strip())
        s.setValue("dataset/template", self.template.currentText())
        s.setValue("dataset/context", self.context.value())
        s.setValue("dataset/sort", self.sort.currentText())

    def shutdown(self) -> None:
        """Stop a run and an opening (their worker processes with them); idempotent."""
        for worker in (self.worker, self.opener):
            if worker is not None:
                worker.stop()

    # -- files ----------------------------------------------------------------------------------------
    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a dataset", os.path.dirname(self.path.text()),
            f"Datasets ({' '.join('*' + suffix for suffix in SUFFIXES)});;All files (*)")
        if path:
            self.open_path(path)

    def choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a dataset folder", self.path.text())
        if path:
            self.open_path(path)


def progress_text(p: RunProgress) -> str:
    """`12,345 examples · 40.1 of 120.0 MB · 3.2 MB/s · about 25 s left`.

    >>> progress_text(RunProgress(12345, 2, 40_100_000, 120_000_000, 12.5))
    '12,345 examples, 2 skipped · 40.1 of 120.0 MB · 3.2 MB/s · about 25 s left'
    """
    skipped = f", {p.skipped:,} skipped" if p.skipped else ""
    left = (p.total_bytes - p.done_bytes) / p.rate if p.rate > 0 else None
    eta = f" · about {left:,.0f} s left" if left is not None and p.done_bytes < p.total_bytes else ""
    return (f"{p.examples:,} examples{skipped} · {p.done_bytes / 1e6:,.1f} of {p.total_bytes / 1e6:,.1f} MB · "
            f"{p.rate / 1e6:,.1f} MB/s{eta}")


def _as_int(value: Any) -> int:
    try:
        return int(value) if isinstance(value, (int, str)) else 0
    except ValueError:
        return 0
