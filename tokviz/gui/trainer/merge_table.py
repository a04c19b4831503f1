"""The live table of learned merges: a model appended in batches as progress arrives.

One row per merge: its id (256 + rank), the left and right tokens, the token they make (as text
and as hex bytes) and the pair count when it was merged. Rows hold only the merge triples; text
and hex are made when a cell is shown, from an `events.TokenTable` grown with each batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFontDatabase

from tokviz.core.tokens import display_text, hex_bytes
from tokviz.training.events import TokenTable

COLUMNS = ("id", "left", "right", "result", "bytes", "count")
_Index = QModelIndex | QPersistentModelIndex


class MergeTableModel(QAbstractTableModel):
    """Merges in rank order; `append(batch)` adds rows with one insert notification."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._merges: list[tuple[int, int, int]] = []
        self._table = TokenTable()
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    # -- data --------------------------------------------------------------------------------
    def clear(self) -> None:
        self.beginResetModel()
        self._merges = []
        self._table = TokenTable()
        self.endResetModel()

    def append(self, merges: Sequence[tuple[int, int, int]]) -> None:
        if not merges:
            return
        first = len(self._merges)
        self.beginInsertRows(QModelIndex(), first, first + len(merges) - 1)
        self._merges.extend(merges)
        self._table.add(merges)
        self.endInsertRows()

    def sync(self, merges: Sequence[tuple[int, int, int]]) -> None:
        """Make the rows equal `merges` (a finished result): append what the live batches missed."""
        if list(self._merges) != list(merges[: len(self._merges)]):
            self.clear()
        self.append(merges[len(self._merges):])

    def merge(self, row: int) -> tuple[int, int, int]:
        return self._merges[row]

    def token_bytes(self, token_id: int) -> bytes:
        return self._table[token_id]

    @property
    def merges(self) -> list[tuple[int, int, int]]:
        return self._merges

    # -- QAbstractTableModel -----------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._merges)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            return ("token id (256 + merge rank)", "left token", "right token", "the merged token",
                    "its UTF-8 bytes", "how often the pair occurred when it was merged")[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        left, right, count = self._merges[row]
        new_id = 256 + row
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return f"{new_id:,}"
            if col == 1:
                return display_text(self._table[left])
            if col == 2:
                return display_text(self._table[right])
            if col == 3:
                return display_text(self._table[new_id])
            if col == 4:
                return hex_bytes(self._table[new_id])
            return f"{count:,}"
        if role == Qt.ItemDataRole.ToolTipRole and col in (1, 2, 3):
            token = (left, right, new_id)[col - 1]
            data = self._table[token]
            return f"id {token}: {display_text(data)!r} ({len(data)} bytes: {hex_bytes(data)})"
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 5):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and col in (1, 2, 3, 4):
            return self._mono
        return None
