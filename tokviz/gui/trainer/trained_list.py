"""Saved vocabularies: where finished runs go (`data_dir()/trained`) and the list that reopens them.

Every `NAME.tiktoken` there with its sidecar is listed, newest first; "Add to comparison" (or a
double click) emits `vocabulary_ready(path)`, the same signal a finished run emits, so the window
adds a pane for it. Only the selected entry's sidecar is read (it holds every merge).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from tokviz.core import catalog
from tokviz.core.sidecar import read_sidecar
from tokviz.training import vocabfile

TRAINED_DIR = "trained"


def trained_dir() -> Path:
    """Where finished runs are saved, and listed from: `data_dir()/trained`."""
    return catalog.data_dir() / TRAINED_DIR


def free_base(folder: Path, name: str) -> Path:
    """`folder/name`, or `name-2`, `name-3`… so no earlier vocabulary is overwritten."""
    base, n = folder / name, 1
    while any(p.exists() for p in vocabfile.output_paths(base)[:2]):
        n += 1
        base = folder / f"{name}-{n}"
    return base


def human_bytes(n: float) -> str:
    """A byte count for people, in binary units named as such (it divides by 1024).

    >>> human_bytes(1536), human_bytes(12_345_678)
    ('1.5 KiB', '11.8 MiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def describe(path: Path) -> str:
    """One line about a saved vocabulary, from its sidecar."""
    try:
        meta = read_sidecar(path.with_suffix(".json"))
    except Exception as e:  # a damaged sidecar is shown, not raised
        return f"{path}\n(sidecar unreadable: {e})"
    corpus = meta.get("corpus", {})
    return (f"{path.name}: vocabulary {meta.get('vocab_size', '?')} · pattern "
            f"{meta.get('pattern_preset') or 'custom'} · {corpus.get('files_read', '?')} files, "
            f"{human_bytes(corpus.get('bytes', 0))}")


class TrainedList(QGroupBox):
    """The saved vocabularies, with "Add to comparison"."""

    vocabulary_ready = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Trained vocabularies", parent)
        col = QVBoxLayout(self)
        self.list = QListWidget()
        self.list.setMinimumHeight(80)
        self.list.itemDoubleClicked.connect(lambda _item: self.add_selected())
        self.list.currentItemChanged.connect(self._on_selected)
        col.addWidget(self.list)
        self.details = QLabel(wordWrap=True, objectName="mutedLabel")
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.details)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add to comparison")
        self.add_button.clicked.connect(self.add_selected)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(lambda: self.refresh())
        row.addWidget(self.add_button)
        row.addWidget(self.refresh_button)
        col.addLayout(row)
        self.refresh()

    def refresh(self, select: Path | None = None) -> None:
        """List `data_dir()/trained/*.tiktoken` that have a sidecar, newest first."""
        self.list.clear()
        folder = trained_dir()
        found = []
        if folder.is_dir():
            for p in folder.glob("*.tiktoken"):
                if p.with_suffix(".json").is_file():
                    found.append((p.stat().st_mtime, p))
        for _, p in sorted(found, reverse=True):
            item = QListWidgetItem(p.stem)
            item.setData(Qt.ItemDataRole.UserRole, str(p))
            item.setToolTip(str(p))
            self.list.addItem(item)
            if select is not None and p == select:
                self.list.setCurrentItem(item)
        self._on_selected(self.list.currentItem())

    def paths(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def add_selected(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.vocabulary_ready.emit(item.data(Qt.ItemDataRole.UserRole))

    def _on_selected(self, item: QListWidgetItem | None, _previous=None) -> None:
        self.details.setText(describe(Path(item.data(Qt.ItemDataRole.UserRole))) if item else "")
        self.add_button.setEnabled(item is not None)
