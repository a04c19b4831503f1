"""The trainer panel's inputs: what to train on and how, turned into a `TrainingJob`.

Sources are folders and files (walked by the trainer) and an optional word-count file. The split
pattern is a preset or a custom regex, compiled as the user types (the error is shown under it and
Start stays disabled while it does not compile). Everything else is checked by the trainer, which
says what is wrong in a `TrainingError` the panel shows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from tokviz.training.events import TrainingError
from tokviz.training.pretokenize import PRESETS, compile_pattern
from tokviz.training.process import TrainingJob
from tokviz.training.trainer import TrainOptions

CUSTOM = "custom regex"
PRESET_TITLES = {
    "gpt2": "gpt2 (GPT-2)", "cl100k": "cl100k (GPT-4)", "o200k": "o200k (GPT-4o)", "none": "none (no split)"
}
MAX_VOCAB = 1 << 20


def split_list(text: str) -> list[str]:
    """Globs or tokens typed into one line, separated by spaces or commas.

    >>> split_list("*.py, *.md  docs/*")
    ['*.py', '*.md', 'docs/*']
    """
    return [part for part in re.split(r"[\s,]+", text.strip()) if part]


def default_name(paths: Sequence[str], vocab_size: int) -> str:
    """A file-safe name from the first source and the size: `python3.11-8k`.

    >>> default_name(["/usr/lib/python3.11/"], 8000)
    'python3.11-8k'
    """
    stem = Path(paths[0].rstrip("/\\")).name if paths else "trained"
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "trained"
    size = f"{vocab_size // 1000}k" if vocab_size % 1000 == 0 else str(vocab_size)
    return f"{stem}-{size}"


class TrainerForm(QWidget):
    """The inputs; `job()` gives a `TrainingJob` or raises `TrainingError` saying what to fix."""

    validity_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._valid = True
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._sources_box())
        layout.addWidget(self._options_box())
        self._on_pattern_changed()

    # -- building ----------------------------------------------------------------------------
    def _sources_box(self) -> QGroupBox:
        box = QGroupBox("Train on")
        col = QVBoxLayout(box)
        self.paths_list = QListWidget()
        self.paths_list.setToolTip("Folders are walked recursively; .git folders are never entered")
        self.paths_list.setMaximumHeight(84)
        col.addWidget(self.paths_list)
        row = QHBoxLayout()
        self.add_folder_button = QPushButton("Folder…")
        self.add_folder_button.clicked.connect(self._choose_folder)
        self.add_files_button = QPushButton("Files…")
        self.add_files_button.clicked.connect(self._choose_files)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self._remove_selected)
        for b in (self.add_folder_button, self.add_files_button, self.remove_button):
            row.addWidget(b)
        col.addLayout(row)
        form = QFormLayout()
        words = QHBoxLayout()
        self.word_counts_edit = QLineEdit(placeholderText="optional: chunk<TAB>count lines")
        browse = QPushButton("…")
        browse.setFixedWidth(28)
        browse.clicked.connect(self._choose_word_counts)
        words.addWidget(self.word_counts_edit)
        words.addWidget(browse)
        form.addRow("Word counts", words)
        self.include_edit = QLineEdit(placeholderText="all files; e.g. *.py *.md")
        self.exclude_edit = QLineEdit(placeholderText="e.g. tests/* *.min.js")
        for edit in (self.include_edit, self.exclude_edit):
            edit.setToolTip("Globs separated by spaces or commas, matched against the path relative "
                            "to the folder or the file name")
        form.addRow("Include", self.include_edit)
        form.addRow("Exclude", self.exclude_edit)
        self.gitignore_check = QCheckBox("honour .gitignore")
        self.non_utf8_combo = QComboBox()
        self.non_utf8_combo.addItem("skip non-UTF-8 files", "skip")
        self.non_utf8_combo.addItem("decode with U+FFFD", "replace")
        form.addRow(self.gitignore_check)
        form.addRow("Non-UTF-8", self.non_utf8_combo)
        col.addLayout(form)
        return box

    def _options_box(self) -> QGroupBox:
        box = QGroupBox("Vocabulary")
        form = QFormLayout(box)
        self.pattern_combo = QComboBox()
        for key in PRESETS:
            self.pattern_combo.addItem(PRESET_TITLES.get(key, key), key)
        self.pattern_combo.addItem(CUSTOM, CUSTOM)
        self.pattern_combo.setCurrentIndex(list(PRESETS).index("cl100k"))
        self.pattern_combo.currentIndexChanged.connect(self._on_pattern_changed)
        form.addRow("Split pattern", self.pattern_combo)
        self.pattern_edit = QLineEdit(placeholderText=r"a regex, e.g. \w+|\s+|[^\w\s]+")
        self.pattern_edit.textChanged.connect(self._on_pattern_changed)
        form.addRow("", self.pattern_edit)
        self.pattern_error = QLabel(objectName="patternError", wordWrap=True)
        self.pattern_error.setStyleSheet("color: #c0392b;")
        self.pattern_error.hide()
        form.addRow("", self.pattern_error)
        self.vocab_spin = QSpinBox(minimum=257, maximum=MAX_VOCAB, value=8000, singleStep=1000)
        self.vocab_spin.setGroupSeparatorShown(True)
        self.vocab_spin.setToolTip("Ids wanted, the 256 bytes and the special tokens included; "
                                   "training stops earlier when no pair is frequent enough")
        form.addRow("Vocabulary size", self.vocab_spin)
        self.special_edit = QLineEdit(placeholderText="e.g. <|endoftext|> <|pad|>")
        self.special_edit.setToolTip("Special tokens, separated by spaces or commas; "
                                     "they take the ids after the merges")
        form.addRow("Special tokens", self.special_edit)
        self.min_freq_spin = QSpinBox(minimum=1, maximum=1_000_000, value=2)
        self.min_freq_spin.setToolTip("Stop when no pair occurs this often")
        form.addRow("Min frequency", self.min_freq_spin)
        self.jobs_spin = QSpinBox(minimum=0, maximum=max(os.cpu_count() or 1, 1) * 2, value=0)
        self.jobs_spin.setSpecialValueText("auto")
        self.jobs_spin.setToolTip("Processes that count the corpus, this one included; auto: one below "
                                  "64 MB, the cores (at most 4) above")
        form.addRow("Workers", self.jobs_spin)
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("from the folder and size")
        form.addRow("Name", self.name_edit)
        return box

    # -- sources -----------------------------------------------------------------------------
    def paths(self) -> list[str]:
        return [self.paths_list.item(i).text() for i in range(self.paths_list.count())]

    def set_paths(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        self.paths_list.clear()
        self.add_paths(paths)

    def add_paths(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        have = set(self.paths())
        for p in map(str, paths):
            if p and p not in have:
                self.paths_list.addItem(p)
                have.add(p)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Train on a folder")
        if folder:
            self.add_paths([folder])

    def _choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Train on files")
        self.add_paths(files)

    def _choose_word_counts(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Word-count file", "", "Text (*.txt *.tsv);;All files (*)")
        if path:
            self.word_counts_edit.setText(path)

    def _remove_selected(self) -> None:
        for item in self.paths_list.selectedItems():
            self.paths_list.takeItem(self.paths_list.row(item))

    # -- pattern -----------------------------------------------------------------------------
    def pattern(self) -> str:
        key = self.pattern_combo.currentData()
        return self.pattern_edit.text() if key == CUSTOM else key

    def set_pattern(self, spec: str) -> None:
        """A preset name, or a regex (switches to the custom entry)."""
        if spec in PRESETS:
            self.pattern_combo.setCurrentIndex(list(PRESETS).index(spec))
        else:
            self.pattern_combo.setCurrentIndex(self.pattern_combo.count() - 1)
            self.pattern_edit.setText(spec)

    def pattern_problem(self) -> str | None:
        if self.pattern_combo.currentData() != CUSTOM:
            return None
        text = self.pattern_edit.text()
        if not text:
            return "type a regex, or choose a preset"
        try:
            compile_pattern(text)
        except TrainingError as e:
            return str(e)
        return None

    def _on_pattern_changed(self) -> None:
        custom = self.pattern_combo.currentData() == CUSTOM
        self.pattern_edit.setVisible(custom)
        problem = self.pattern_problem()
        self.pattern_error.setText(problem or "")
        self.pattern_error.setVisible(problem is not None)
        if (problem is None) != self._valid:
            self._valid = problem is None
            self.validity_changed.emit(self._valid)

    @property
    def valid(self) -> bool:
        return self._valid

    # -- the job -----------------------------------------------------------------------------
    def job(self) -> TrainingJob:
        problem = self.pattern_problem()
        if problem is not None:
            raise TrainingError(f"split pattern: {problem}")
        paths = self.paths()
        word_counts = self.word_counts_edit.text().strip() or None
        if not paths and word_counts is None:
            raise TrainingError("nothing to train on: add a folder or files (or a word-count file)")
        vocab_size = self.vocab_spin.value()
        name = self.name_edit.text().strip() or default_name(paths or [word_counts or "trained"], vocab_size)
        if re.search(r"[\\/]", name) or name in (".", ".."):
            raise TrainingError(f"the name {name!r} cannot hold a path separator")
        return TrainingJob(tuple(paths), TrainOptions(
            vocab_size=vocab_size, name=name, pattern=self.pattern(),
            include=split_list(self.include_edit.text()), exclude=split_list(self.exclude_edit.text()),
            gitignore=self.gitignore_check.isChecked(), non_utf8=self.non_utf8_combo.currentData(),
            special_tokens=split_list(self.special_edit.text()),
            min_frequency=self.min_freq_spin.value(), jobs=self.jobs_spin.value() or None,
            word_counts=word_counts,
        ))

    def set_running(self, running: bool) -> None:
        self.setEnabled(not running)
