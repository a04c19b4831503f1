"""Vocabulary extension (issue 7): learn the merges that make given words single tokens of a base BPE.

`open_extend_dialog(parent, base_spec)` shows an `ExtendDialog`. The user picks a byte-level BPE
base (a catalog `tiktoken` entry or a `.tiktoken` file), words (typed, `word<TAB>frequency` or
`word frequency` per line, or a word list file) and an optional start id; "Learn merges" runs
`tokviz.training.extend.learn_extension` on a `Worker` (`dialog.run`: one terminal signal per run,
`returned`, `errored` or `aborted`) and lists every merge and warning. "Save"
writes the extra `.tiktoken` and its sidecar with `save_extension` and emits
`extension_saved(path)`: `catalog.load(path)` then gives the extended tokenizer, so the main window
can add `path` as a pane spec. Bad input is a message in the dialog and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tokviz.core import catalog
from tokviz.core.files import SaveError
from tokviz.core.tokens import display_text, hex_bytes
from tokviz.gui.tools.tokenizers import load_tokenizer
from tokviz.gui.widgets.dialogs import WorkDialog
from tokviz.gui.widgets.theme import icon
from tokviz.gui.work.worker import Job, Worker, message_of
from tokviz.training.extend import (
    Extension,
    learn_extension,
    read_word_list,
    save_extension,
)
from tokviz.training.extend import parse_words as parse_core_words

EXAMPLE = "我是一只猫\t20\n你是一只猫\t10\n一只猫 100"
COLUMNS = ("Id", "Left", "Right", "Result", "Hex", "Frequency")


def parse_words(text: str) -> dict[str, int]:
    """Typed words: `word<TAB>frequency`, or `word frequency` (see the core's `parse_words`)."""
    return parse_core_words(text, spaces=True)


# -- the worker ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LearnJob:
    base: str  # a catalog name or a .tiktoken path
    typed: str | None  # typed words, or None to read `word_file`
    word_file: str | None
    start_id: int | None


@dataclass
class LearnOutcome:
    job: LearnJob
    base_name: str
    base_spec: str  # what the sidecar names: the catalog name, or the resolved file path
    base_sha256: str
    base_path: Path | None
    words: int
    extension: Extension


def learn(work: Job, job: LearnJob) -> LearnOutcome:
    """Learn the extension, on a `Worker`'s thread (ExtensionError, TokenizerError, OSError end it as `errored`)."""
    words = parse_words(job.typed) if job.typed is not None else read_word_list(job.word_file or "")
    base = load_tokenizer(job.base)
    extension = learn_extension(base, words, start_id=job.start_id)
    entry = catalog.find(job.base)
    if entry is not None:
        spec, sha, path = entry.name, entry.sha256, entry.path
    else:
        path = Path(job.base).expanduser().resolve()
        spec, sha = str(path), catalog.file_sha256(path)
    return LearnOutcome(job, base.name, spec, sha, path, len(words), extension)


# -- the dialog ----------------------------------------------------------------------------------


class ExtendDialog(WorkDialog):
    """Choose a base and words, learn the merges, look at them, save the extra vocabulary."""

    extension_saved = Signal(str)  # the saved extra .tiktoken: a pane spec for `catalog.load`
    learned = Signal(object)  # Extension
    learn_failed = Signal(str)

    def __init__(self, base_spec: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("tokviz — extend a vocabulary with new words")
        self.setWindowIcon(icon("tokviz"))
        self.outcome: LearnOutcome | None = None
        self.saved_path: Path | None = None
        self.run: Worker | None = None  # the learning run under way (or the last one)
        self._build_ui(base_spec)
        self.resize(980, 720)

    # -- layout ----------------------------------------------------------------------------
    def _build_ui(self, base_spec: str | None) -> None:
        self.base_box = QComboBox()
        self.base_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for e in catalog.entries():
            if e.format == "tiktoken" and e.available:
                self.base_box.addItem(e.name, e.name)
        note = ""
        if base_spec:
            entry = catalog.find(base_spec)
            if entry is not None and entry.format != "tiktoken":
                note = f"{base_spec} is not a byte-level BPE; choose a .tiktoken base."
            else:
                self.set_base(entry.name if entry is not None else base_spec)
        base_browse = QPushButton(icon("open"), "File…")
        base_browse.clicked.connect(self._choose_base_file)
        base_row = QHBoxLayout()
        base_row.addWidget(self.base_box, 1)
        base_row.addWidget(base_browse)

        self.typed_radio = QRadioButton("Typed words")
        self.file_radio = QRadioButton("Word list file")
        self.typed_radio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.typed_radio)
        group.addButton(self.file_radio)
        self.words_edit = QPlainTextEdit()
        self.words_edit.setPlaceholderText("One word per line with its frequency, e.g.\n" + EXAMPLE)
        self.words_edit.setMaximumHeight(130)
        self.word_file_edit = QLineEdit()
        self.word_file_edit.setPlaceholderText("word<TAB>frequency per line (.tsv)")
        file_browse = QPushButton(icon("open"), "Browse…")
        file_browse.clicked.connect(self._choose_word_file)
        file_row = QHBoxLayout()
        file_row.addWidget(self.file_radio)
        file_row.addWidget(self.word_file_edit, 1)
        file_row.addWidget(file_browse)
        self.start_edit = QLineEdit()
        self.start_edit.setPlaceholderText("auto: right after the base's ranks and special tokens")
        self.output_edit = QLineEdit()
        self.output_edit.setPlaceholderText("where to save the extra ranks (EXTRA.tiktoken)")
        out_browse = QPushButton("Browse…")
        out_browse.clicked.connect(self._choose_output)
        out_row = QHBoxLayout()
        out_row.addWidget(self.output_edit, 1)
        out_row.addWidget(out_browse)

        form = QFormLayout()
        form.addRow("Base vocabulary", base_row)
        form.addRow(self.typed_radio, self.words_edit)
        form.addRow(file_row)
        form.addRow("Start id", self.start_edit)
        form.addRow("Output", out_row)

        self.learn_button = QPushButton("Learn merges")
        self.learn_button.setDefault(True)
        self.learn_button.clicked.connect(self.learn)
        self.save_button = QPushButton("Save")
        self.save_button.clicked.connect(lambda: self.save())
        self.save_button.setEnabled(False)
        close_button = QPushButton("Close")
        close_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.learn_button)
        buttons.addWidget(self.save_button)
        buttons.addStretch(1)
        buttons.addWidget(close_button)

        self.message = QLabel(note)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary = QLabel()
        self.merges_table = QTableWidget(0, len(COLUMNS))
        self.merges_table.setHorizontalHeaderLabels(COLUMNS)
        self.merges_table.verticalHeader().hide()
        self.merges_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.merges_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.merges_table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.warnings_list = QListWidget()
        results = QSplitter(Qt.Orientation.Vertical)
        results.addWidget(self.merges_table)
        warn_side = QWidget()
        lay = QVBoxLayout(warn_side)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("Warnings (words skipped)"))
        lay.addWidget(self.warnings_list)
        results.addWidget(warn_side)
        results.setSizes([320, 110])

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(self.summary)
        layout.addWidget(results, 1)
        for signal in (self.base_box.currentIndexChanged, self.words_edit.textChanged,
                       self.word_file_edit.textChanged, self.start_edit.textChanged, self.typed_radio.toggled):
            signal.connect(self._invalidate)
        self.word_file_edit.textEdited.connect(lambda: self.file_radio.setChecked(True))

    def set_base(self, spec: str) -> None:
        """Select a base by catalog name or `.tiktoken` path (added to the list when new)."""
        index = self.base_box.findData(spec)
        if index < 0:
            self.base_box.addItem(spec, spec)
            index = self.base_box.count() - 1
        self.base_box.setCurrentIndex(index)

    def _choose_base_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Base vocabulary", "", "tiktoken ranks (*.tiktoken);;All files (*)")
        if path:
            self.set_base(path)

    def _choose_word_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Word list", "", "Word lists (*.tsv *.txt);;All files (*)")
        if path:
            self.word_file_edit.setText(path)
            self.file_radio.setChecked(True)

    def _choose_output(self) -> str:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save the extra ranks", "extra.tiktoken", "tiktoken ranks (*.tiktoken)"
        )
        if path:
            self.output_edit.setText(path)
        return path

    # -- learning --------------------------------------------------------------------------
    def _error(self, text: str) -> None:
        self.message.setText(f"<span style='color:#c62828'>{text}</span>")

    def _invalidate(self) -> None:
        if self.outcome is not None:
            self.outcome = None
            self.save_button.setEnabled(False)
            self.summary.setText(self.summary.text() + " — inputs changed: learn again to save")

    def learn(self) -> Worker | None:
        """Start learning in the worker; `learned` or `learn_failed` tells the end."""
        start_text = self.start_edit.text().strip()
        try:
            start_id = int(start_text) if start_text else None
        except ValueError:
            self._error(f"start id {start_text!r} is not a whole number")
            return None
        base = self.base_box.currentData()
        if not base:
            self._error("choose a base vocabulary")
            return None
        typed = self.words_edit.toPlainText() if self.typed_radio.isChecked() else None
        word_file = self.word_file_edit.text().strip() or None
        if typed is None and word_file is None:
            self._error("choose a word list file")
            return None
        if self.run is not None:
            self.run.abort()
        job = LearnJob(base, typed, word_file, start_id)
        self.run = Worker(partial(learn, job=job), owner=self, name="tokviz-extend")
        self.run.returned.connect(self._on_finished)
        self.run.errored.connect(self._on_failed)
        self.run.aborted.connect(self._on_cancelled)
        self.outcome = None
        self.save_button.setEnabled(False)
        self.learn_button.setEnabled(False)
        self.message.setText(f"Learning merges on {base}…")
        return self.run.start()

    def _on_finished(self, outcome: LearnOutcome) -> None:
        self.learn_button.setEnabled(True)
        self.outcome = outcome
        ext = outcome.extension
        self._fill(ext)
        ids = f", ids {ext.merges[0].id}..{ext.merges[-1].id}" if ext.merges else ""
        self.summary.setText(
            f"<b>{len(ext.merges)} new merges</b>{ids} on {outcome.base_name} from {outcome.words} words; "
            f"{len(ext.warnings)} warnings"
        )
        self.save_button.setEnabled(bool(ext.merges))
        self.message.setText("" if ext.merges else "No new merges to learn (every word was skipped): nothing to save.")
        self.learned.emit(ext)

    def _on_failed(self, error: Exception) -> None:
        message = message_of(error)
        self.learn_button.setEnabled(True)
        self._fill(Extension())
        self.summary.clear()
        self._error(message)
        self.learn_failed.emit(message)

    def _on_cancelled(self) -> None:
        self.learn_button.setEnabled(True)

    def _fill(self, ext: Extension) -> None:
        t = self.merges_table
        t.setRowCount(len(ext.merges))
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        for row, m in enumerate(ext.merges):
            values = (str(m.id), display_text(m.left), display_text(m.right), display_text(m.token),
                      hex_bytes(m.token), f"{m.frequency:,}")
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                if col in (0, 5):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == 4:
                    item.setFont(mono)
                t.setItem(row, col, item)
        self.warnings_list.clear()
        self.warnings_list.addItems([f"⚠ {w}" for w in ext.warnings])

    def merges(self) -> list[tuple[int, str]]:
        """(id, result text) per listed merge, as shown."""
        t = self.merges_table
        return [(int(t.item(r, 0).text()), t.item(r, 3).text()) for r in range(t.rowCount())]

    # -- saving ----------------------------------------------------------------------------
    def save(self, path: str | Path | None = None) -> Path | None:
        """Write the learned extension to `path` (or the output field, or a chosen file)."""
        if self.outcome is None or not self.outcome.extension.merges:
            self._error("nothing to save: learn merges first")
            return None
        raw = str(path) if path else self.output_edit.text().strip() or self._choose_output()
        if not raw:
            return None
        target = Path(raw).expanduser()
        if target.suffix != ".tiktoken":
            target = target.with_name(target.name + ".tiktoken")
        base = self.outcome.base_path
        resolved = target.resolve()
        if base is not None and resolved in (base.resolve(), base.with_suffix(".json").resolve()):
            self._error(f"{target} is the base vocabulary itself: choose another file")
            return None
        try:
            saved = save_extension(
                self.outcome.extension, target, base_spec=self.outcome.base_spec,
                base_sha256=self.outcome.base_sha256,
            )
        except SaveError as e:  # names the file and the cause, and says nothing was changed
            self._error(str(e))
            return None
        except OSError as e:
            self._error(f"cannot write {target}: {e.strerror or e}")
            return None
        self.saved_path = saved
        self.output_edit.setText(str(saved))
        self.message.setText(
            f"Saved {saved} (+ {saved.with_suffix('.json').name}); it loads as {saved.stem} with its base."
        )
        self.extension_saved.emit(str(saved))
        return saved

    # -- closing ---------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Abort the run under way and wait for it (idempotent)."""
        if self.run is not None:
            self.run.stop()
        self.learn_button.setEnabled(True)


def open_extend_dialog(parent: QWidget | None, base_spec: str | None) -> ExtendDialog:
    """Show a non-modal extension dialog, the base preselected when it is a byte-level BPE."""
    dialog = ExtendDialog(base_spec, parent)
    dialog.show()
    return dialog
