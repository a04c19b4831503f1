"""The vocabulary browser: every id of a tokenizer in a filterable, sortable table.

`VocabBrowser` loads the tokenizer named by a spec and builds `tokviz.analysis.vocabulary`'s
`VocabularyTable` on a worker thread (seconds, for a large vocabulary), then shows it through
`VocabTableModel`, a `QAbstractTableModel` that reads cells lazily: its rows cost one numpy index
array, no widget or item per row. The details area shows the selected token, the two tokens it is merged from
(byte-level BPE vocabularies) as buttons, and where it occurs in the window's current text;
clicking an occurrence emits `jump_to(start, end)` (character offsets) for the window to highlight.

This module does not tokenize in the GUI thread and does not edit vocabularies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

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
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.oddities import CATEGORIES, LABELS, Oddities, find_oddities
from tokviz.analysis.vocabulary import (
    COLUMNS,
    KINDS,
    SCRIPTS,
    Column,
    VocabFilter,
    VocabularyTable,
    looks_like_hex,
    occurrences,
)
from tokviz.core import catalog
from tokviz.core.encoding import Encoding
from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import Token, TokenKind
from tokviz.gui.widgets.dialogs import WorkDialog
from tokviz.gui.widgets.labels import busy_page, error_label, plain_text_labels
from tokviz.gui.widgets.theme import token_colors
from tokviz.gui.work.worker import Worker, message_of

DEBOUNCE_MS = 150
MAX_OFFSETS_SHOWN = 500
ROW_HEIGHT_PAD = 6


# -- background work ------------------------------------------------------------------------------


# -- the model ------------------------------------------------------------------------------------

_COLUMN_INDEX = {name: k for k, (name, _) in enumerate(COLUMNS)}
_NUMERIC = frozenset(_COLUMN_INDEX[c] for c in ("id", "length"))
_MONO = frozenset(_COLUMN_INDEX[c] for c in ("piece", "hex"))
_TIP = frozenset(_COLUMN_INDEX[c] for c in ("piece", "text"))
_DISPLAY, _BACKGROUND, _ALIGN, _FONT, _TOOLTIP, _USER = (
    int(r) for r in (
        Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.UserRole,
    )
)
_ROLES = frozenset({_DISPLAY, _BACKGROUND, _ALIGN, _FONT, _TOOLTIP, _USER})
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def _shown(value: str | int | bool) -> str:
    if isinstance(value, bool):  # the one boolean column, whole UTF-8
        return "yes" if value else "fragment"
    return value if isinstance(value, str) else str(value)


class VocabTableModel(QAbstractTableModel):
    """The rows of a `VocabularyTable` a filter keeps, in the order a sort gives; cells are read
    from the table only when the view asks for them."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.table: VocabularyTable | None = None
        self.rows = np.zeros(0, dtype=np.int64)
        self.sort_column: str | None = None
        self.descending = False
        colors = token_colors()
        fragment = QColor(colors.kinds.get(TokenKind.FRAGMENT, QColor("#ff8a80")))
        special = QColor(colors.kinds.get(TokenKind.SPECIAL, QColor("#b39ddb")))
        fragment.setAlpha(110)
        special.setAlpha(110)
        self._backgrounds = {"fragment": fragment, "special": special}
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._row_cache: dict[int, tuple[tuple[str, ...], QColor | None, str]] = {}

    def set_table(self, table: VocabularyTable) -> None:
        self.beginResetModel()
        self.table = table
        self._row_cache.clear()
        self.rows = np.arange(len(table), dtype=np.int64)
        self.sort_column, self.descending = None, False
        self.endResetModel()

    def set_rows(self, rows: np.ndarray) -> None:
        """Show `rows` (table row indices), in the current sort order."""
        self.beginResetModel()
        self.rows = self._sorted(np.asarray(rows, dtype=np.int64))
        self.endResetModel()

    def _sorted(self, rows: np.ndarray) -> np.ndarray:
        if self.table is None or self.sort_column is None:
            return rows
        return self.table.sort(rows, self.sort_column, descending=self.descending)  # type: ignore[arg-type]

    def table_row(self, view_row: int) -> int:
        return int(self.rows[view_row])

    def token_id(self, view_row: int) -> int:
        return int(self.table.ids[self.rows[view_row]])  # type: ignore[union-attr]

    def view_row_of(self, token_id: int) -> int | None:
        """Where `token_id` is shown, or None when the filter hides it (or no such id)."""
        if self.table is None or (row := self.table.row_of(token_id)) is None:
            return None
        found = np.flatnonzero(self.rows == row)
        return int(found[0]) if len(found) else None

    # -- QAbstractTableModel ----------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][1]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        # called ~7 times per visible cell per repaint: unhandled roles return first, and a row's
        # strings are formatted once and kept while it is likely to be repainted
        if role not in _ROLES or self.table is None:
            return None
        row = int(self.rows[index.row()])
        column = index.column()
        if role == _USER:
            return int(self.table.ids[row])
        cached = self._row_cache.get(row)
        if cached is None:
            cached = self._row_values(row)
        if role == _DISPLAY:
            return cached[0][column]
        if role == _BACKGROUND:
            return cached[1]
        if role == _ALIGN:
            return _RIGHT if column in _NUMERIC else None
        if role == _FONT:
            return self._mono if column in _MONO else None
        if column in _TIP:  # tooltip of the text and piece columns
            return cached[2]
        return None

    def _row_values(self, row: int) -> tuple[tuple[str, ...], QColor | None, str]:
        table = self.table
        if len(self._row_cache) > 4096:
            self._row_cache.clear()
        display = tuple(_shown(table.cell(row, column)) for column, _ in COLUMNS)  # type: ignore[union-attr]
        background = None
        if not table.whole_utf8[row]:  # type: ignore[union-attr]
            background = self._backgrounds["fragment"]
        elif KINDS[table.kinds[row]] in (TokenKind.SPECIAL, TokenKind.UNKNOWN):  # type: ignore[union-attr]
            background = self._backgrounds["special"]
        values = (display, background, f"{display[3]}  ({display[4]} bytes)")
        self._row_cache[row] = values
        return values

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if self.table is None:
            return
        self.layoutAboutToBeChanged.emit()
        self.sort_column = COLUMNS[column][0]
        self.descending = order == Qt.SortOrder.DescendingOrder
        self.rows = self._sorted(self.rows)
        self.layoutChanged.emit()


# -- the widget -----------------------------------------------------------------------------------


def _load_table(spec: str, tokenizer: Tokenizer | None, text: str, tokens: Sequence[Token] | None):
    tok = tokenizer if tokenizer is not None else catalog.load(spec)
    table = VocabularyTable.from_tokenizer(tok)
    if tokens is None:
        tokens = tok.encode(text) if text else []
    return tok, table, _token_columns(tokens)


def _token_columns(tokens: Sequence[Token]) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Ids and character spans; an `Encoding` (a pane's tokens) gives them without building a
    `Token` per element."""
    if isinstance(tokens, Encoding):
        return tokens.ids.tolist(), tokens.starts.astype(np.int64), tokens.ends.astype(np.int64)
    return (
        [t.id for t in tokens],
        np.fromiter((t.start for t in tokens), dtype=np.int64, count=len(tokens)),
        np.fromiter((t.end for t in tokens), dtype=np.int64, count=len(tokens)),
    )


_SPIN_MAX = 2**31 - 1  # the largest value a QSpinBox holds


class VocabBrowser(QWidget):
    """A tokenizer's whole vocabulary: filter bar, table, and the selected token's details."""

    jump_to = Signal(int, int)  # character span of an occurrence in the current text
    loaded = Signal()  # the table is shown
    load_failed = Signal(str)

    def __init__(self, spec: str, *, text: str = "", tokens: Sequence[Token] | None = None,
                 tokenizer: Tokenizer | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.tokenizer: Tokenizer | None = None
        self.table: VocabularyTable | None = None
        self.error: str | None = None
        self._ids: list[int] = []
        self._starts = self._ends = np.zeros(0, dtype=np.int64)
        self._shown_id: int | None = None
        self.oddities: Oddities | None = None
        self._odd_call: Worker | None = None
        #: filter states to go back to, pushed when showing a token clears the filters
        self._back: list[tuple[dict, int | None]] = []
        self._also_hex = ""  # a Text search that also reads as hex: the bytes it also finds
        self.model = VocabTableModel(self)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.apply_filter)
        self._build_ui()
        self._call = Worker(lambda job: _load_table(spec, tokenizer, text, tokens), owner=self,
                            name="tokviz-vocabulary")
        self._call.returned.connect(self._on_loaded)
        self._call.errored.connect(self._on_error)
        self._call.start()

    # -- UI ---------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.stack = QStackedWidget()
        self.stack.addWidget(busy_page(f"Building the vocabulary table of {self.spec}…"))
        self.error_label = error_label()
        error_page = QWidget()
        QVBoxLayout(error_page).addWidget(self.error_label, 0, Qt.AlignmentFlag.AlignTop)
        self.stack.addWidget(error_page)
        self.stack.addWidget(self._build_browser())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.stack)
        plain_text_labels(self)

    def _build_filter_bar(self) -> QHBoxLayout:
        self.search_mode = QComboBox()
        self.search_mode.addItems(["Text", "Hex"])
        self.search_mode.setToolTip("Text: decoded text, readable text or piece; Hex: bytes, e.g. e6 a0")
        self.search = QLineEdit(placeholderText="search text, or bytes in hex (e6 a0)", clearButtonEnabled=True)
        self.fragments_only = QCheckBox("Fragments only")
        self.special_only = QCheckBox("Special only")
        self.script_combo = QComboBox()
        self.script_combo.addItem("any script", None)
        for script in SCRIPTS:
            self.script_combo.addItem(script, script)
        self.id_min, self.id_max = QSpinBox(), QSpinBox()
        for box, name in ((self.id_min, "min"), (self.id_max, "max")):
            box.setRange(-1, 10_000_000)
            box.setValue(-1)
            box.setSpecialValueText(f"id {name}")  # -1: no bound
            box.setMinimumWidth(90)
        self.odd_combo = QComboBox()
        self.odd_combo.setToolTip(
            "odd tokens: unreachable (its text alone does not encode to it), a fragment alone (not "
            "whole UTF-8), duplicate bytes (another id has the same bytes), control-looking (spelled "
            "like a control token, or holding a control character, yet not special)"
        )
        self.odd_combo.addItem("all tokens", None)
        for category in CATEGORIES:
            self.odd_combo.addItem(f"{LABELS[category]} (counting…)", category)
            self.odd_combo.model().item(self.odd_combo.count() - 1).setEnabled(False)  # type: ignore[attr-defined]
        self.back_button = QPushButton("← Back")
        self.back_button.setToolTip("back to the search and filters before showing that token")
        self.back_button.clicked.connect(self.go_back)
        self.back_button.hide()
        self.count_label = QLabel("", objectName="paneSubheader")
        for signal in (
            self.search.textChanged, self.search_mode.currentIndexChanged, self.fragments_only.toggled,
            self.special_only.toggled, self.script_combo.currentIndexChanged, self.id_min.valueChanged,
            self.id_max.valueChanged, self.odd_combo.currentIndexChanged,
        ):
            signal.connect(self._schedule_filter)
        bar = QHBoxLayout()
        for widget, stretch in (
            (self.back_button, 0), (self.search_mode, 0), (self.search, 3), (self.fragments_only, 0),
            (self.special_only, 0), (self.script_combo, 0), (self.odd_combo, 0), (self.id_min, 0),
            (self.id_max, 0), (self.count_label, 0),
        ):
            bar.addWidget(widget, stretch)
        return bar

    def _build_browser(self) -> QWidget:
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSortingEnabled(True)
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setWordWrap(False)
        self.view.setAlternatingRowColors(False)
        vertical = self.view.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform rows: no per-row sizing
        vertical.setDefaultSectionSize(self.fontMetrics().height() + ROW_HEIGHT_PAD)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in enumerate((64, 120, 110, 170, 56, 76, 96, 70)):
            header.resizeSection(column, width)
        header.setStretchLastSection(True)
        self.view.selectionModel().currentRowChanged.connect(self._on_current_row)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.view)
        splitter.addWidget(self._build_details())
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([760, 300])
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._build_filter_bar())
        self.filter_message = error_label()
        self.filter_message.hide()
        layout.addWidget(self.filter_message)
        layout.addWidget(splitter, 1)
        return page

    def _build_details(self) -> QWidget:
        frame = QFrame(objectName="tokenPane")
        frame.setMinimumWidth(240)
        layout = QVBoxLayout(frame)
        self.details_title = QLabel("Select a token", objectName="paneHeader", wordWrap=True)
        self.details_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        self.details_fields: dict[Column, QLabel] = {}
        fields: tuple[tuple[Column, str], ...] = (
            ("piece", "Piece"), ("hex", "Bytes"), ("kind", "Kind"), ("script", "Script")
        )
        for key, label in fields:
            value = QLabel("", wordWrap=True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.details_fields[key] = value
            form.addRow(label, value)
        self.parents_caption = QLabel("Merged from", objectName="paneSubheader")
        self.parent_buttons = (QPushButton(), QPushButton())
        parents = QHBoxLayout()
        for button in self.parent_buttons:
            button.setToolTip("Show this token")
            button.clicked.connect(self._on_parent_clicked)
            parents.addWidget(button)
        self.parents_note = QLabel("", objectName="paneSubheader", wordWrap=True)
        self.occurrence_label = QLabel("", objectName="paneSubheader", wordWrap=True)
        self.occurrence_list = QListWidget()
        self.occurrence_list.itemActivated.connect(self._on_occurrence)
        self.occurrence_list.itemClicked.connect(self._on_occurrence)
        for widget in (self.details_title,):
            layout.addWidget(widget)
        layout.addLayout(form)
        layout.addWidget(self.parents_caption)
        layout.addLayout(parents)
        layout.addWidget(self.parents_note)
        layout.addWidget(self.occurrence_label)
        layout.addWidget(self.occurrence_list, 1)
        self._show_details(None)
        return frame

    # -- loading ----------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.table is None and self.error is None

    def _on_loaded(self, result: tuple) -> None:
        self.tokenizer, self.table, (self._ids, self._starts, self._ends) = result
        self.model.set_table(self.table)
        for box in (self.id_min, self.id_max):  # a spin box holds a 32-bit int: ids past it have no bound here
            box.setMaximum(min(int(self.table.ids.max()), _SPIN_MAX) if len(self.table) else 0)
        self.stack.setCurrentIndex(2)
        self._update_count()
        self.loaded.emit()
        tokenizer = self.tokenizer
        self._odd_call = Worker(
            lambda job: find_oddities(tokenizer, progress=lambda done, total: job.report((done, total)),
                                      cancelled=lambda: job.aborted),
            owner=self, name="tokviz-oddities",
        )
        self._odd_call.yielded.connect(self._on_odd_progress)
        self._odd_call.returned.connect(self._on_oddities)
        self._odd_call.errored.connect(self._on_odd_error)
        self._odd_call.start()

    def _on_odd_progress(self, value: tuple[int, int]) -> None:
        done, total = value
        share = f"{done / total:.0%}" if total else ""
        for k, category in enumerate(CATEGORIES, start=1):
            self.odd_combo.setItemText(k, f"{LABELS[category]} (counting… {share})")

    def _on_oddities(self, odd: Oddities) -> None:
        self.oddities = odd
        counts = odd.counts()
        for k, category in enumerate(CATEGORIES, start=1):
            self.odd_combo.setItemText(k, f"{LABELS[category]} ({counts[category]:,})")
            self.odd_combo.model().item(k).setEnabled(True)  # type: ignore[attr-defined]

    def _on_odd_error(self, error: Exception) -> None:
        for k, category in enumerate(CATEGORIES, start=1):
            self.odd_combo.setItemText(k, f"{LABELS[category]} (not counted: {message_of(error)})")

    def _on_error(self, error: Exception) -> None:
        self._on_failed(message_of(error))

    def _on_failed(self, message: str) -> None:
        self.error = message
        self.error_label.setText(f"Cannot show the vocabulary of {self.spec}: {message}")
        self.stack.setCurrentIndex(1)
        self.load_failed.emit(message)

    def set_text(self, text: str, tokens: Sequence[Token] | None = None) -> None:
        """The window's current text (and its tokens, when the pane has them) for occurrences."""
        if tokens is None:
            tokens = self.tokenizer.encode(text) if self.tokenizer is not None and text else []
        self._ids, self._starts, self._ends = _token_columns(tokens)
        self._show_details(self._shown_id)

    def shutdown(self) -> None:
        self._debounce.stop()
        self._call.stop()
        if self._odd_call is not None:
            self._odd_call.stop()

    def closeEvent(self, event) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)

    # -- filtering --------------------------------------------------------------------------------
    def _schedule_filter(self, *_args: object) -> None:
        self._debounce.start()

    def current_filter(self) -> VocabFilter:
        """The filter bar as a `VocabFilter`. A text search keeps its spaces (` the` is not `the`);
        a hex search ignores them."""
        query = self.search.text()
        hex_mode = self.search_mode.currentText() == "Hex"
        category = self.odd_combo.currentData()
        only = None
        if category is not None and self.oddities is not None:
            only = tuple(self.oddities.ids[category].tolist())
        return VocabFilter(
            text="" if hex_mode else query,
            hex=query.strip() if hex_mode else "",
            only_ids=only,
            fragments_only=self.fragments_only.isChecked(),
            special_only=self.special_only.isChecked(),
            script=self.script_combo.currentData(),
            id_min=self.id_min.value() if self.id_min.value() >= 0 else None,
            id_max=self.id_max.value() if self.id_max.value() >= 0 else None,
        )

    def apply_filter(self) -> None:
        """Filter now (the filter bar calls this after a short pause in typing)."""
        self._debounce.stop()
        if self.table is None:
            return
        spec = self.current_filter()
        self._also_hex = ""
        try:
            rows = self.table.filter(spec)
            if spec.text and looks_like_hex(spec.text.strip()):
                # the placeholder invites hex: in Text mode a query that reads as bytes finds them too
                self._also_hex = spec.text.strip()
                rows = np.union1d(rows, self.table.filter(dataclasses.replace(spec, text="", hex=self._also_hex)))
        except ValueError as e:  # a half-typed hex query: keep the rows, say what is wrong
            self.filter_message.setText(str(e))
            self.filter_message.show()
            return
        self.filter_message.hide()
        keep = self._shown_id
        self.model.set_rows(rows)
        self._update_count()
        if keep is not None and (view_row := self.model.view_row_of(keep)) is not None:
            self._select_view_row(view_row)
        else:
            self._show_details(None)

    def _filter_widgets(self) -> tuple[QWidget, ...]:
        return (self.search, self.search_mode, self.fragments_only, self.special_only,
                self.script_combo, self.odd_combo, self.id_min, self.id_max)

    def filter_state(self) -> dict:
        """The filter bar's values (what `go_back` restores)."""
        return {
            "search": self.search.text(), "mode": self.search_mode.currentIndex(),
            "fragments": self.fragments_only.isChecked(), "special": self.special_only.isChecked(),
            "script": self.script_combo.currentIndex(), "odd": self.odd_combo.currentIndex(),
            "id_min": self.id_min.value(), "id_max": self.id_max.value(),
        }

    def set_filter_state(self, state: dict) -> None:
        for widget in self._filter_widgets():
            widget.blockSignals(True)
        self.search.setText(state["search"])
        self.search_mode.setCurrentIndex(state["mode"])
        self.fragments_only.setChecked(state["fragments"])
        self.special_only.setChecked(state["special"])
        self.script_combo.setCurrentIndex(state["script"])
        self.odd_combo.setCurrentIndex(state["odd"])
        self.id_min.setValue(state["id_min"])
        self.id_max.setValue(state["id_max"])
        for widget in self._filter_widgets():
            widget.blockSignals(False)
        self.apply_filter()

    def clear_filters(self) -> None:
        self.set_filter_state({"search": "", "mode": 0, "fragments": False, "special": False, "script": 0,
                               "odd": 0, "id_min": -1, "id_max": -1})

    def go_back(self) -> None:
        """Restore the search and filters a jump to a hidden token cleared, and its selection."""
        if not self._back:
            return
        state, token_id = self._back.pop()
        self.set_filter_state(state)
        if token_id is not None and (view_row := self.model.view_row_of(token_id)) is not None:
            self._select_view_row(view_row)
        self.back_button.setVisible(bool(self._back))

    def _update_count(self) -> None:
        total = len(self.table) if self.table is not None else 0
        also = f" · text or bytes {self._also_hex}" if self._also_hex else ""
        self.count_label.setText(f"{self.model.rowCount():,} of {total:,}{also}")

    # -- selection and details --------------------------------------------------------------------
    def selected_id(self) -> int | None:
        return self._shown_id

    def select_token(self, token_id: int) -> bool:
        """Select `token_id` in the table, clearing the filters when they hide it."""
        if self.table is None or self.table.row_of(token_id) is None:
            return False
        view_row = self.model.view_row_of(token_id)
        if view_row is None:  # hidden by the filters: clear them, and offer the way back
            self._back.append((self.filter_state(), self._shown_id))
            self.back_button.show()
            self.clear_filters()
            view_row = self.model.view_row_of(token_id)
        if view_row is None:
            return False
        self._select_view_row(view_row)
        return True

    def _select_view_row(self, view_row: int) -> None:
        index = self.model.index(view_row, 0)
        self.view.setCurrentIndex(index)
        self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self._show_details(self.model.token_id(view_row))

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self._show_details(self.model.token_id(current.row()))

    def _show_details(self, token_id: int | None) -> None:
        self._shown_id = token_id
        table = self.table
        row = table.row_of(token_id) if table is not None and token_id is not None else None
        if row is None or token_id is None:
            self.details_title.setText("Select a token")
            for value in self.details_fields.values():
                value.setText("")
            for widget in (self.parents_caption, *self.parent_buttons, self.parents_note):
                widget.hide()
            self.occurrence_label.setText("")
            self.occurrence_list.clear()
            return
        self.details_title.setText(f"{table.cell(row, 'text')}   id {token_id}")
        for key, value in self.details_fields.items():
            value.setText(str(table.cell(row, key)))
        if not table.whole_utf8[row]:
            self.details_fields["kind"].setText(f"{table.cell(row, 'kind')} (not whole UTF-8)")
        self._show_parents(token_id)
        self._show_occurrences(token_id)

    def _show_parents(self, token_id: int) -> None:
        table = self.table
        self.parents_caption.show()
        pair = table.parents(token_id) if table is not None else None
        if pair is None:
            for button in self.parent_buttons:
                button.hide()
            self.parents_note.setText(
                "not a byte-level BPE vocabulary: no merge ranks" if table is None or table.merges is None
                else "not made by a merge (a single byte or a special token)"
            )
            self.parents_note.show()
            return
        self.parents_note.hide()
        for button, parent_id in zip(self.parent_buttons, pair):
            row = table.row_of(parent_id)
            label = "?"
            if row is not None:  # a fragment's text is mostly U+FFFD: its bytes say which
                label = str(table.cell(row, "text"))
                if not table.whole_utf8[row]:
                    label += f" [{table.cell(row, 'hex')}]"
            button.setText(f"{label}  ·  id {parent_id}")
            button.setProperty("token_id", parent_id)
            button.show()

    def _on_parent_clicked(self) -> None:
        button = self.sender()
        token_id = button.property("token_id") if button is not None else None
        if token_id is not None:
            self.select_token(int(token_id))

    def _show_occurrences(self, token_id: int) -> None:
        self.occurrence_list.clear()
        if not self._ids:
            self.occurrence_label.setText("No current text: occurrences appear when the window has text")
            return
        found = occurrences(self._ids, token_id)
        self.occurrence_label.setText(
            f"{len(found):,} occurrence{'s' * (len(found) != 1)} in the current text"
            + (f" (first {MAX_OFFSETS_SHOWN} listed)" if len(found) > MAX_OFFSETS_SHOWN else "")
        )
        for k in found[:MAX_OFFSETS_SHOWN].tolist():
            start, end = int(self._starts[k]), int(self._ends[k])
            item = QListWidgetItem(f"chars {start:,}–{end:,}  (token {k:,})")
            item.setData(Qt.ItemDataRole.UserRole, (start, end))
            self.occurrence_list.addItem(item)

    def occurrence_spans(self) -> list[tuple[int, int]]:
        """The character spans listed for the selected token."""
        items = (self.occurrence_list.item(k) for k in range(self.occurrence_list.count()))
        return [item.data(Qt.ItemDataRole.UserRole) for item in items]

    def _on_occurrence(self, item: QListWidgetItem) -> None:
        start, end = item.data(Qt.ItemDataRole.UserRole)
        self.jump_to.emit(start, end)


MIN_ASIDE_WIDTH = 420  # px: beside the window only where the dialog still reads


class ContentDialog(WorkDialog):
    """The dialog around one vocabulary browser; closing it (Esc included) stops the browser's
    background work."""

    def __init__(self, content: VocabBrowser, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.content = content
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(content)

    def shutdown(self) -> None:
        self.content.shutdown()

    @property
    def browser(self) -> VocabBrowser:
        return self.content

    def step_aside(self, *_span: object) -> None:
        """Move off the parent window, whose panes just highlighted something: beside it where the
        screen has room, else over the lower third of the screen (the highlight scrolls into the
        upper part of the panes)."""
        parent = self.parentWidget()
        screen = self.screen()
        if parent is None or screen is None:
            return
        area, host, me = screen.availableGeometry(), parent.window().frameGeometry(), self.frameGeometry()
        if not me.intersects(host):
            return
        right, left = area.right() - host.right(), host.left() - area.left()
        if max(right, left) >= MIN_ASIDE_WIDTH:
            width = min(me.width(), max(right, left))
            x = host.right() + 1 if right >= left else host.left() - width
            self.resize(width - (me.width() - self.width()), self.height())
            self.move(x, max(area.top(), min(me.top(), area.bottom() - me.height())))
            return
        height = max(area.height() // 3, 240)
        self.resize(self.width(), height - (me.height() - self.height()))
        self.move(me.left(), area.bottom() + 1 - height)


def open_vocab_browser(parent: QWidget | None, spec: str, text: str = "",
                       tokens: Sequence[Token] | None = None) -> ContentDialog:
    """Open (show) a non-modal vocabulary browser for `spec`; connect `dialog.browser.jump_to`.

    >>> dialog = open_vocab_browser(window, pane.spec, window.text(), pane.result.tokens)  # doctest: +SKIP
    >>> dialog.browser.jump_to.connect(window.highlight_chars)  # doctest: +SKIP
    """
    browser = VocabBrowser(spec, text=text, tokens=tokens)
    dialog = ContentDialog(browser, f"Vocabulary — {spec}", parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    browser.jump_to.connect(dialog.step_aside)  # never cover the occurrence just highlighted
    dialog.resize(1180, 720)
    dialog.show()
    return dialog


__all__ = [
    "ContentDialog", "VocabBrowser", "VocabTableModel", "open_vocab_browser",
]
