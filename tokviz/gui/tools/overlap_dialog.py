"""Vocabulary overlap (Tools menu): what the panes' vocabularies share, and what only one has.

`open_overlap_dialog(parent, specs)` shows an `OverlapDialog` for the panes' vocabularies (two or
more, chosen by check boxes) and compares them on a `Worker` (`dialog.run`): it loads each one, then
runs `tokviz.analysis.overlap` (the same numbers `tokviz overlap` prints) with the worker's abort
flag, reporting each step. Large vocabularies take seconds to load and to compare
(bench/bench_overlap.py), so nothing of it runs on the GUI thread.

The result: a summary (sizes, shared by all, each pair's common tokens, same ids and Jaccard), the
breakdowns by script and by length, the tokens only one has in a `QAbstractTableModel` over
`OnlyTable` (200k rows cost a few numpy arrays, no item per row; it sorts and filters in one numpy
pass), and, for a vocabulary beside one that contains it (an extension, a longer training run), the
new merges. Double-clicking a token emits `open_token(spec, id)` (the Tools menu opens it in the
vocabulary browser). The table exports as CSV: the rows shown, in the order shown.

Closing the dialog aborts the run and does not wait for it: loading a 200k vocabulary cannot be
interrupted and takes seconds, and the window must not freeze meanwhile. The aborted worker keeps
itself alive until its thread ends (and is stopped at quit); its result is never delivered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.export import to_csv
from tokviz.analysis.overlap import (
    LENGTH_BUCKETS,
    ONLY_COLUMNS,
    NewMerge,
    OnlyTable,
    Overlap,
    PairStats,
    contained_pairs,
    new_merges,
    only_table,
    overlap_of,
    shown_bytes,
)
from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import hex_bytes
from tokviz.gui.tools.tokenizers import load_tokenizer
from tokviz.gui.widgets.dialogs import WorkDialog
from tokviz.gui.widgets.labels import busy_page, error_label
from tokviz.gui.work.worker import Job, Worker, message_of

DEBOUNCE_MS = 150
ROW_HEIGHT_PAD = 6

# -- the work (a Worker's thread) -------------------------------------------------------------------


@dataclass
class OverlapOutcome:
    """Everything the dialog shows for one comparison."""

    specs: list[str]
    overlap: Overlap
    pairs: list[PairStats]
    by_script: list[tuple[str, list[int], int, list[int]]]
    by_length: list[tuple[str, list[int], int, list[int]]]
    table: OnlyTable
    #: (base index, extended index, the extended one's new tokens) per contained pair
    merges: list[tuple[int, int, list[NewMerge]]] = field(default_factory=list)


def compare(job: Job, *, specs: Sequence[str]) -> OverlapOutcome:
    """Load the vocabularies of `specs` and compare them, reporting each step as a line of text."""
    tokenizers: list[Tokenizer] = []
    for k, spec in enumerate(specs, start=1):
        job.check()
        job.report(f"loading {spec} ({k} of {len(specs)})…")
        tokenizers.append(load_tokenizer(spec))
    job.report("comparing the token sets…")
    overlap = overlap_of(tokenizers, cancel=job.abort)
    job.report("labelling scripts…")
    by_script = overlap.breakdown("script", cancel=job.abort)
    by_length = overlap.breakdown("length", cancel=job.abort)
    job.report("comparing each pair…")
    pairs = []
    for a in range(len(specs)):
        for b in range(a + 1, len(specs)):
            job.check()
            pairs.append(overlap.pair(a, b))
    job.report("listing the tokens only one has…")
    table = only_table(overlap, tokenizers, cancel=job.abort)
    outcome = OverlapOutcome(list(specs), overlap, pairs, by_script, by_length, table)
    for base, extended in contained_pairs(overlap):
        job.report(f"new merges of {specs[extended]}…")
        outcome.merges.append((base, extended, new_merges(overlap.sets[base], tokenizers[extended], cancel=job.abort)))
    return outcome


# -- the models -----------------------------------------------------------------------------------

_DISPLAY, _ALIGN, _FONT, _TOOLTIP = (
    int(r) for r in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole,
                     Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ToolTipRole)
)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_ONLY_NUMERIC = frozenset(k for k, (c, _) in enumerate(ONLY_COLUMNS) if c in ("id", "length"))
_ONLY_MONO = frozenset(k for k, (c, _) in enumerate(ONLY_COLUMNS) if c in ("piece", "hex"))


class OnlyTableModel(QAbstractTableModel):
    """The rows of an `OnlyTable` a filter keeps, in the order a sort gives; cells are read from the
    table only when the view asks for them."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.table: OnlyTable | None = None
        self.rows = np.zeros(0, dtype=np.int64)
        self.sort_column: int | None = None
        self.descending = False
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_table(self, table: OnlyTable) -> None:
        self.beginResetModel()
        self.table = table
        self.rows = np.arange(len(table), dtype=np.int64)
        self.sort_column, self.descending = None, False
        self.endResetModel()

    def set_rows(self, rows: np.ndarray) -> None:
        """Show `rows` (table rows), in the current sort order."""
        self.beginResetModel()
        self.rows = self._sorted(np.asarray(rows, dtype=np.int64))
        self.endResetModel()

    def _sorted(self, rows: np.ndarray) -> np.ndarray:
        if self.table is None or self.sort_column is None:
            return rows
        return self.table.sort(rows, ONLY_COLUMNS[self.sort_column][0], descending=self.descending)

    def table_row(self, view_row: int) -> int:
        return int(self.rows[view_row])

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(ONLY_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY:
            return ONLY_COLUMNS[section][1]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY):
        if self.table is None or role not in (_DISPLAY, _ALIGN, _FONT, _TOOLTIP):
            return None
        column = index.column()
        if role == _ALIGN:
            return _RIGHT if column in _ONLY_NUMERIC else None
        if role == _FONT:
            return self._mono if column in _ONLY_MONO else None
        row = int(self.rows[index.row()])
        if role == _TOOLTIP:
            cell = self.table.cell
            return f"{cell(row, 'text')}  ·  {cell(row, 'piece')}  ({cell(row, 'hex')})"
        value = self.table.cell(row, ONLY_COLUMNS[column][0])
        return value if isinstance(value, str) else str(value)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if self.table is None:
            return
        self.layoutAboutToBeChanged.emit()
        self.sort_column = column
        self.descending = order == Qt.SortOrder.DescendingOrder
        self.rows = self._sorted(self.rows)
        self.layoutChanged.emit()


CHOICES_PER_ROW = 4  # vocabularies to choose from, per row of check boxes
MERGE_COLUMNS = ("Vocabulary", "ID", "Text", "Bytes", "Merged from", "Parent ids")


class MergesModel(QAbstractTableModel):
    """The new merges of the contained pairs, one row each (`(extended name, NewMerge)`)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, NewMerge]] = []

    def set_rows(self, rows: list[tuple[str, NewMerge]]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(MERGE_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == _DISPLAY:
            return MERGE_COLUMNS[section]
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort on a column: text and bytes by the token's bytes, ids as numbers, a row without
        parents after every row with them; ties keep the id order (a stable sort)."""
        def key(row: tuple[str, NewMerge]) -> tuple[object, ...]:
            name, merge = row
            parents, parts = merge.parents, merge.parent_bytes
            return (
                (name, merge.id), (merge.id,), (merge.data,), (merge.data,),
                (parts is None, parts or (b"", b"")), (parents is None, parents or (0, 0)),
            )[column]

        self.layoutAboutToBeChanged.emit()
        self.rows.sort(key=key, reverse=order == Qt.SortOrder.DescendingOrder)
        self.layoutChanged.emit()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY):
        if role == _ALIGN:
            return _RIGHT if index.column() == 1 else None
        if role != _DISPLAY:
            return None
        name, merge = self.rows[index.row()]
        parents, parts = merge.parents, merge.parent_bytes
        return (
            name, str(merge.id), shown_bytes(merge.data), hex_bytes(merge.data),
            f"{shown_bytes(parts[0])} + {shown_bytes(parts[1])}" if parts else "(not a merge)",
            f"{parents[0]} + {parents[1]}" if parents else "",
        )[index.column()]


# -- the dialog -------------------------------------------------------------------------------------


def _table_view(model: QAbstractTableModel, widths: Sequence[int], height: int) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setWordWrap(False)
    vertical = view.verticalHeader()
    vertical.setVisible(False)
    vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform rows: no per-row sizing
    vertical.setDefaultSectionSize(height)
    header = view.horizontalHeader()
    for column, width in enumerate(widths):
        header.resizeSection(column, width)
    header.setStretchLastSection(True)
    return view


def _small_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> QTableWidget:
    """A read-only table of a few rows (the breakdowns, the pairs): numbers right-aligned."""
    table = QTableWidget(len(rows), len(headers))
    table.setHorizontalHeaderLabels(list(headers))
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            item = QTableWidgetItem(f"{value:,}" if isinstance(value, int) else str(value))
            if isinstance(value, int):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()
    return table


class OverlapDialog(WorkDialog):
    """The overlap of the vocabularies of `specs` (the panes'), two or more of them chosen."""

    compared = Signal()  # a comparison is shown
    compare_failed = Signal(str)
    open_token = Signal(str, int)  # spec, id: show this token in the vocabulary browser

    def __init__(self, specs: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Vocabulary overlap")
        self.specs = list(dict.fromkeys(specs))  # two panes of one vocabulary count once
        self.run: Worker | None = None
        self.outcome: OverlapOutcome | None = None
        self.model = OnlyTableModel(self)
        self.merges_model = MergesModel(self)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.apply_filter)
        self._build_ui()
        self.resize(1100, 720)

    # -- UI ---------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.choices: list[QCheckBox] = []
        top = QHBoxLayout()
        top.addWidget(QLabel("Compare:"), 0, Qt.AlignmentFlag.AlignTop)
        # the check boxes in rows of CHOICES_PER_ROW, so six or more panes do not widen the dialog
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        for i, spec in enumerate(self.specs):
            # a trained or opened vocabulary's spec is a path: its file name, the path as the tip
            shown = spec if len(spec) <= 32 else Path(spec).name
            box = QCheckBox(shown.replace("&", "&&"), checked=True, toolTip=spec)
            box.toggled.connect(self._update_compare_button)
            self.choices.append(box)
            grid.addWidget(box, *divmod(i, CHOICES_PER_ROW))
        top.addLayout(grid)
        top.addStretch(1)
        self.compare_button = QPushButton("Compare")
        self.compare_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        top.addWidget(self.compare_button)
        top.addWidget(self.cancel_button)
        self.status = QLabel("", objectName="paneSubheader", wordWrap=True)
        self.stack = QStackedWidget()
        self.busy = busy_page("Comparing…")
        self.stack.addWidget(self.busy)
        self.error = error_label()
        error_page = QWidget()
        QVBoxLayout(error_page).addWidget(self.error, 0, Qt.AlignmentFlag.AlignTop)
        self.stack.addWidget(error_page)
        # the summary stays in view above the tabs: sizes, shared, each pair
        self.results = QWidget()
        self.summary = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tabs = QTabWidget()
        results = QVBoxLayout(self.results)
        results.setContentsMargins(0, 0, 0, 0)
        results.addWidget(self.summary, 0, Qt.AlignmentFlag.AlignTop)
        results.addWidget(self.tabs, 1)
        self.stack.addWidget(self.results)
        self.script_page, self.length_page = QWidget(), QWidget()
        self.breakdowns: dict[str, QTableWidget] = {}  # "script" / "length": the table shown
        for page in (self.script_page, self.length_page):
            QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
        self.tabs.addTab(self.script_page, "By script")
        self.tabs.addTab(self.length_page, "By length")
        self.only_index = self.tabs.addTab(self._build_only_page(), "Only in one")
        row_height = self.fontMetrics().height() + ROW_HEIGHT_PAD
        self.merges_view = _table_view(self.merges_model, (140, 70, 150, 150, 220), row_height)
        self.merges_view.setSortingEnabled(True)
        self.merges_view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.merges_note = QLabel("", objectName="paneSubheader", wordWrap=True)
        merges_page = QWidget()
        box = QVBoxLayout(merges_page)
        box.addWidget(self.merges_note)
        box.addWidget(self.merges_view, 1)
        self.merges_index = self.tabs.addTab(merges_page, "New merges")
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.stack, 1)
        self._update_compare_button()

    def _build_only_page(self) -> QWidget:
        self.search = QLineEdit(placeholderText="search text, spelling, or bytes in hex (e6 a0)",
                                clearButtonEnabled=True)
        self.vocab_combo = QComboBox()
        self.script_combo = QComboBox()
        self.length_combo = QComboBox()
        self.length_combo.addItem("any length", None)
        for bucket in LENGTH_BUCKETS:
            self.length_combo.addItem(f"{bucket} bytes", bucket)
        self.count_label = QLabel("", objectName="paneSubheader")
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("the rows shown, in the order shown")
        self.export_button.clicked.connect(self._choose_export)
        self.search.textChanged.connect(self._schedule_filter)
        for combo in (self.vocab_combo, self.script_combo, self.length_combo):
            combo.currentIndexChanged.connect(self._schedule_filter)
        bar = QHBoxLayout()
        for widget, stretch in ((self.search, 3), (self.vocab_combo, 0), (self.script_combo, 0),
                                (self.length_combo, 0), (self.count_label, 0), (self.export_button, 0)):
            bar.addWidget(widget, stretch)
        self.view = _table_view(self.model, (140, 70, 170, 170, 150, 60), self.fontMetrics().height() + ROW_HEIGHT_PAD)
        self.view.setSortingEnabled(True)
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.doubleClicked.connect(self._on_double_click)
        self.view.setToolTip("double-click a token to show it in the vocabulary browser")
        page = QWidget()
        box = QVBoxLayout(page)
        box.addLayout(bar)
        box.addWidget(self.view, 1)
        return page

    def chosen(self) -> list[str]:
        return [spec for spec, box in zip(self.specs, self.choices) if box.isChecked()]

    def set_chosen(self, specs: Sequence[str]) -> None:
        for spec, box in zip(self.specs, self.choices):
            box.setChecked(spec in specs)

    def _update_compare_button(self) -> None:
        enough = len(self.chosen()) >= 2
        self.compare_button.setEnabled(enough and not self.running)
        if len(self.specs) < 2:
            self.status.setText("An overlap needs two vocabularies or more: add a pane first.")
        elif not enough:
            self.status.setText("Choose two vocabularies or more.")

    # -- the run ----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.run is not None and self.run.is_running

    def start(self) -> Worker | None:
        """Compare the chosen vocabularies (aborting a comparison under way); returns its worker."""
        specs = self.chosen()
        if len(specs) < 2:
            self._update_compare_button()
            return None
        self.cancel()
        self.outcome = None
        # no owner: closing aborts without waiting for an uninterruptible load (see the module)
        run = Worker(partial(compare, specs=specs), name="tokviz-overlap")
        run.yielded.connect(self._on_progress)
        run.returned.connect(self._on_returned)
        run.errored.connect(self._on_errored)
        run.aborted.connect(self._on_aborted)
        self.run = run
        self.status.setText(f"Comparing {', '.join(specs)}…")
        self.stack.setCurrentWidget(self.busy)
        self.compare_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        run.start()
        return run

    def cancel(self) -> None:
        if self.run is not None:
            self.run.abort()

    def shutdown(self) -> None:
        """Abort the comparison (idempotent); its thread ends by itself, its result unseen."""
        self._debounce.stop()
        self.cancel()

    def _on_progress(self, step: str) -> None:
        self.status.setText(step)

    def _on_errored(self, error: Exception) -> None:
        message = message_of(error)
        self.error.setText(f"Cannot compare the vocabularies: {message}")
        self.stack.setCurrentIndex(1)
        self.status.setText("")
        self._idle()
        self.compare_failed.emit(message)

    def _on_aborted(self) -> None:
        self.status.setText("Cancelled.")
        self.error.setText("Cancelled: Compare starts again.")
        self.stack.setCurrentIndex(1)
        self._idle()

    def _idle(self) -> None:
        self.cancel_button.setEnabled(False)
        self.compare_button.setEnabled(len(self.chosen()) >= 2)

    def _on_returned(self, outcome: OverlapOutcome) -> None:
        self.outcome = outcome
        self._idle()
        self.status.setText("")
        self._show_summary(outcome)
        self._show_breakdowns(outcome)
        self._show_table(outcome)
        self._show_merges(outcome)
        self.stack.setCurrentWidget(self.results)
        self.compared.emit()

    # -- showing ----------------------------------------------------------------------------------
    def _show_summary(self, outcome: OverlapOutcome) -> None:
        o, names = outcome.overlap, outcome.overlap.names
        sizes = ["<table cellspacing=4><tr><th align=left>vocabulary</th><th align=right>tokens</th>"
                 "<th align=right>only here</th><th align=right>special</th></tr>"]
        for i, name in enumerate(names):
            sizes.append(f"<tr><td>{name}</td><td align=right>{len(o.sets[i]):,}</td>"
                         f"<td align=right>{len(o.only[i]):,}</td><td align=right>{len(o.specials[i]):,}</td></tr>")
        pairs = ["<table cellspacing=4><tr><th align=left>pair</th><th align=right>common</th>"
                 "<th align=right>same id</th><th align=right>Jaccard</th></tr>"]
        for p in outcome.pairs:
            pairs.append(f"<tr><td>{names[p.a]} &amp; {names[p.b]}</td><td align=right>{p.common:,}</td>"
                         f"<td align=right>{p.same_ids:,}</td><td align=right>{p.jaccard:.4f}</td></tr>")
        lines = [f"<table><tr><td valign=top>{''.join(sizes)}</table></td><td width=24></td>"
                 f"<td valign=top>{''.join(pairs)}</table></td></tr></table>",
                 f"<p><b>Shared by all:</b> {o.shared_count:,} of {o.union_count:,} distinct tokens "
                 "(compared by their bytes, under any id; special tokens left out)</p>"]
        for base, extended, merges in outcome.merges:
            lines.append(f"<p>Every token of {names[base]} is in {names[extended]}, which adds "
                         f"{len(merges):,} (see New merges).</p>")
        self.summary.setText("".join(lines))

    def _show_breakdowns(self, outcome: OverlapOutcome) -> None:
        names = outcome.overlap.names
        headers = ["", *names, "shared by all", *(f"only in {n}" for n in names)]
        for page, rows, title in ((self.script_page, outcome.by_script, "script"),
                                  (self.length_page, outcome.by_length, "bytes")):
            layout = page.layout()
            while layout.count():
                layout.takeAt(0).widget().deleteLater()
            table = _small_table([title, *headers[1:]],
                                 [[label, *totals, shared, *only] for label, totals, shared, only in rows])
            layout.addWidget(table)
            self.breakdowns["script" if page is self.script_page else "length"] = table
        self.script_combo.blockSignals(True)
        self.script_combo.clear()
        self.script_combo.addItem("any script", None)
        for label, *_ in outcome.by_script:
            self.script_combo.addItem(label, "" if label == "(empty)" else label)
        self.script_combo.blockSignals(False)

    def _show_table(self, outcome: OverlapOutcome) -> None:
        self.vocab_combo.blockSignals(True)
        self.vocab_combo.clear()
        self.vocab_combo.addItem("every vocabulary", None)
        for i, name in enumerate(outcome.overlap.names):
            self.vocab_combo.addItem(f"only in {name} ({len(outcome.overlap.only[i]):,})", i)
        self.vocab_combo.blockSignals(False)
        self.model.set_table(outcome.table)
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.tabs.setTabText(self.only_index, f"Only in one ({len(outcome.table):,})")
        self.apply_filter()

    def _show_merges(self, outcome: OverlapOutcome) -> None:
        names = outcome.overlap.names
        rows = [(names[ext], m) for _, ext, merges in outcome.merges for m in merges]
        self.merges_model.set_rows(rows)
        self.tabs.setTabText(self.merges_index, f"New merges ({len(rows):,})")
        self.tabs.setTabEnabled(self.merges_index, bool(outcome.merges))
        self.merges_note.setText(
            " · ".join(f"{names[ext]} adds {len(m):,} tokens to {names[base]}, each with the two tokens "
                       "it is merged from" for base, ext, m in outcome.merges)
            or "No vocabulary here contains another: no new merges to list."
        )

    # -- filtering --------------------------------------------------------------------------------
    def _schedule_filter(self, *_args: object) -> None:
        self._debounce.start()

    def apply_filter(self) -> None:
        """Filter now (the filter bar calls this after a short pause in typing)."""
        self._debounce.stop()
        table = self.model.table
        if table is None:
            return
        rows = table.filter(text=self.search.text(), vocabulary=self.vocab_combo.currentData(),
                            script=self.script_combo.currentData(), length=self.length_combo.currentData())
        self.model.set_rows(rows)
        self.count_label.setText(f"{len(rows):,} of {len(table):,}")

    # -- actions ----------------------------------------------------------------------------------
    def _on_double_click(self, index: QModelIndex) -> None:
        table, outcome = self.model.table, self.outcome
        if table is None or outcome is None or not index.isValid():
            return
        row = self.model.table_row(index.row())
        self.open_token.emit(outcome.specs[int(table.vocab[row])], int(table.ids[row]))

    def _choose_export(self) -> None:
        if self.model.table is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export the tokens only in one", "tokviz-overlap.csv",
                                              "CSV (*.csv)")
        if path:
            self.export_csv(path)

    def export_csv(self, path: str | Path) -> None:
        """The rows shown (filtered, in the order shown) as CSV, written atomically."""
        table = self.model.table
        if table is None:
            raise RuntimeError("nothing to export yet")
        try:
            to_csv(table.csv_rows(self.model.rows), path)
        except OSError as e:
            self.status.setText(f"Cannot write {path}: {e.strerror or e}")
            raise
        self.status.setText(f"Exported {len(self.model.rows):,} rows to {path}")


def open_overlap_dialog(parent: QWidget | None, specs: Sequence[str], *, start: bool = True) -> OverlapDialog:
    """Show a non-modal overlap dialog for the vocabularies of `specs` and compare them all."""
    dialog = OverlapDialog(specs, parent)
    dialog.show()
    if start and len(dialog.chosen()) >= 2:
        dialog.start()
    return dialog


__all__ = ["OnlyTableModel", "OverlapDialog", "OverlapOutcome", "compare", "open_overlap_dialog"]
