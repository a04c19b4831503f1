"""The Dataset tab's two tables: the summary (one row per tokenizer, `tokviz dataset`'s figures) and
the examples (one row per example, sorted in numpy: a model over the run's columns, so a dataset of
a million rows is a million indices, not a million items)."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from tokviz.gui.dataset.run import ExampleTable
from tokviz.gui.widgets.charts import SERIES_COLORS

OVER_COLOR = QColor("#fde2e2")
FINDING_COLOR = QColor("#b45309")

#: the summary's columns: (header, key of `TokenizerSummary.to_dict()`, format)
SUMMARY_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("tokenizer", "name", "s"),
    ("examples", "examples", ",d"),
    ("tokens", "tokens", ",d"),
    ("mean", "mean", ",.1f"),
    ("median", "median", ",.0f"),
    ("p90", "p90", ",.0f"),
    ("p99", "p99", ",.0f"),
    ("max", "max", ",d"),
    ("chars/token", "chars_per_token", ".2f"),
    ("over context", "over_context", ",d"),
    ("× first", "ratio_to_first", ".3f"),
    ("template/ex", "template_overhead_mean", ",.1f"),
    ("findings", "findings", ",d"),
)

Index = QModelIndex | QPersistentModelIndex


def fmt(value: Any, spec: str) -> str:
    """A figure as the CLI prints it; `—` where there is none.

    >>> fmt(None, ",d"), fmt(1234, ",d"), fmt(3.14159, ".2f"), fmt(12.0, ",.0f")
    ('—', '1,234', '3.14', '12')
    """
    if value is None:
        return "—"
    return format(value, spec)


class SummaryModel(QAbstractTableModel):
    """One row per tokenizer: `summary_rows`' dicts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(SUMMARY_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return SUMMARY_COLUMNS[section][0]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return _SUMMARY_TIPS.get(SUMMARY_COLUMNS[section][1])
        return None

    def text(self, row: int, column: int) -> str:
        _, key, spec = SUMMARY_COLUMNS[column]
        value = self.rows[row][key]
        if key == "findings" and value:
            return f"{value:,} in {self.rows[row]['examples_with_findings']:,}"
        return fmt(value, spec)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column)
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            return QColor(SERIES_COLORS[row % len(SERIES_COLORS)])
        if role == Qt.ItemDataRole.TextAlignmentRole and column > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            return self.rows[row]["name"]
        return None


_SUMMARY_TIPS = {
    "examples": "examples counted", "tokens": "tokens in the whole dataset", "mean": "mean tokens per example",
    "median": "median tokens per example", "p90": "90th percentile of tokens per example",
    "p99": "99th percentile of tokens per example", "max": "the longest example",
    "chars_per_token": "characters per token over the whole dataset",
    "over_context": "examples longer than the context limit",
    "ratio_to_first": "tokens relative to the first tokenizer",
    "template_overhead_mean": "tokens the chat template adds per conversation, on average",
    "findings": "special-token text in message content: notes, in how many examples",
}


class ExampleModel(QAbstractTableModel):
    """The examples: #, where, preview, a count per tokenizer, spread (largest / smallest), findings."""

    FIXED = ("#", "where", "preview")

    def __init__(self) -> None:
        super().__init__()
        self.table = ExampleTable([])
        self.order = np.zeros(0, np.int64)  # view row -> table row
        self.spread = np.zeros(0)
        self.limit: int | None = None
        self.sorted_by: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        self.one_file = False  # every example from one file: "where" is the line or row alone

    def set_table(self, table: ExampleTable) -> None:
        self.beginResetModel()
        self.table = table
        self.one_file = len(table.sources.files) == 1
        self.spread = table.spread
        self.order = np.arange(len(table), dtype=np.int64)
        self.endResetModel()

    def set_limit(self, limit: int | None) -> None:
        self.limit = limit or None
        if self.rowCount():
            k = len(self.table.names)
            self.dataChanged.emit(self.index(0, 3), self.index(self.rowCount() - 1, 3 + k - 1))

    @property
    def spread_column(self) -> int:
        return len(self.FIXED) + len(self.table.names)

    @property
    def findings_column(self) -> int:
        return self.spread_column + 1

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.order)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.FIXED) + len(self.table.names) + 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal:
            return None
        names = self.table.names
        if role == Qt.ItemDataRole.DisplayRole:
            if section < len(self.FIXED):
                return self.FIXED[section]
            if section < self.spread_column:
                return names[section - len(self.FIXED)]
            return "spread" if section == self.spread_column else "findings"
        if role == Qt.ItemDataRole.ToolTipRole:
            if section == self.spread_column:
                return "the largest count over the smallest: where the tokenizers disagree"
            if section == self.findings_column:
                return "special-token text in message content (notes over every tokenizer)"
            if len(self.FIXED) <= section < self.spread_column:
                return f"tokens in {names[section - len(self.FIXED)]}"
        if role == Qt.ItemDataRole.ForegroundRole and len(self.FIXED) <= section < self.spread_column:
            return QBrush(QColor(SERIES_COLORS[(section - len(self.FIXED)) % len(SERIES_COLORS)]))
        return None

    def row_of(self, view_row: int) -> int:
        """The table row (input order) shown at `view_row`."""
        return int(self.order[view_row])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        t, column = self.table, index.column()
        row = int(self.order[index.row()])
        k = column - len(self.FIXED)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return f"{int(t.index[row]):,}"
            if column == 1:
                place = t.sources.place(row)
                if self.one_file and place:
                    return place
                name = t.sources.file(row).replace("\\", "/").rsplit("/", 1)[-1]
                return f"{name}:{place}" if place else name
            if column == 2:
                return t.previews[row]
            if 0 <= k < len(t.names):
                return f"{int(t.tokens[row, k]):,}"
            if column == self.spread_column:
                return f"{self.spread[row]:.2f}"
            return f"{int(t.findings[row]):,}" if t.findings[row] else ""
        if role == Qt.ItemDataRole.TextAlignmentRole and column != 2 and column != 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and 0 <= k < len(t.names) and self.limit is not None:
            return OVER_COLOR if t.tokens[row, k] > self.limit else None
        if role == Qt.ItemDataRole.ForegroundRole and column == self.findings_column:
            return FINDING_COLOR
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [t.sources[row], f"{int(t.chars[row]):,} characters" + (" · a conversation" if t.chat[row] else "")]
            lines += [f"{name}: {int(n):,} tokens" for name, n in zip(t.names, t.tokens[row])]
            lines += list(t.notes[row])
            lines.append("double-click: open it in the " + ("Chat" if t.chat[row] else "Text") + " tab")
            return "\n".join(lines)
        return None

    def sort_key(self, column: int) -> np.ndarray:
        t = self.table
        k = column - len(self.FIXED)
        if 0 <= k < len(t.names):
            return t.tokens[:, k]
        if column == self.spread_column:
            return self.spread
        if column == self.findings_column:
            return t.findings
        if column == 2:
            return np.array(list(t.previews), dtype=object)
        return t.index

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Stable: examples that tie keep their input order, whichever way the sort goes."""
        if column < 0 or column >= self.columnCount():
            return
        key = self.sort_key(column)
        self.layoutAboutToBeChanged.emit()
        if order == Qt.SortOrder.DescendingOrder:
            # reverse the ascending order of the reversed rows: ties stay in input order
            n = len(key)
            self.order = (n - 1 - np.argsort(key[::-1], kind="stable"))[::-1].astype(np.int64)
        else:
            self.order = np.argsort(key, kind="stable").astype(np.int64)
        self.sorted_by = (column, order)
        self.layoutChanged.emit()
