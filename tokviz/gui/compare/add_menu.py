"""The Add-pane menu: a search box, the catalog by the model names people know, "On this machine"
(what `tokviz.core.discovery` finds, scanned on a Worker when the menu first opens) and a file.
The search matches an item's text and the names behind it (`gpt4o`, `qwen 2.5`, `ollama`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import QFileDialog, QLineEdit, QMenu, QWidget, QWidgetAction

from tokviz.core import catalog, discovery, model_names
from tokviz.gui.widgets.theme import icon
from tokviz.gui.work.worker import Worker, message_of

MAX_NOTES_SHOWN = 5


def _is_main(entry: catalog.CatalogEntry) -> bool:
    """A vocabulary of known models, listed in the menu itself (the rest is under "More")."""
    return entry.format != "gguf" and bool(model_names.names_for(entry.name))


class AddMenu(QMenu):
    """Tokenizers ▸ Add: a chosen item calls `add_pane(spec)`; `can_load(entry)` says whether a
    catalog item is enabled; "From a file…" calls `choose_file()`."""

    scanned = Signal(object)  # the discovery.Scan shown (for tests and the status bar)

    def __init__(self, add_pane: Callable[[str], object], can_load: Callable[[catalog.CatalogEntry], bool],
                 choose_file: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__("&Add", parent)
        self.setIcon(icon("add"))
        self.setObjectName("addMenu")
        self._add_pane = add_pane
        self._worker: Worker | None = None
        self.scan: discovery.Scan | None = None
        self.search = QLineEdit(placeholderText="Search: gpt-4o, llama 3, qwen, ollama…", clearButtonEnabled=True,
                                minimumWidth=320, textChanged=self.apply_filter)
        box = QWidgetAction(self)
        box.setDefaultWidget(self.search)
        self.addAction(box)
        #: (action, the texts a search matches, its section heading, shown only while a search matches it)
        self._items: list[tuple[QAction, tuple[str, ...], QAction, bool]] = []
        self._headings: list[QAction] = []
        self._more_action: QAction | None = None
        self._build_catalog(can_load)
        self._local_heading = self._heading("On this machine")
        self._status = self.addAction("(not scanned yet)")
        self._status.setEnabled(False)
        self._rescan = self.addAction("Scan again", self.start_scan)
        self.addAction("Add a folder to scan…", self._choose_folder)
        self.addSeparator()
        self.addAction(icon("open"), "From a &file…", choose_file)
        self.aboutToShow.connect(self._on_show)
        self.apply_filter("")

    # -- building ---------------------------------------------------------------------------------
    def _heading(self, text: str) -> QAction:
        action = self.addAction(text)
        font = QFont(action.font())
        font.setBold(True)
        action.setFont(font)
        action.setEnabled(False)
        self._headings.append(action)
        return action

    def _build_catalog(self, can_load: Callable[[catalog.CatalogEntry], bool]) -> None:
        """The vocabularies of known models in the menu; the others (llama.cpp's test vocabularies,
        small test models) in a submenu, and in the menu too while the search matches them."""
        heading = self._heading("Models and vocabularies")
        try:
            entries = catalog.entries()
        except Exception as e:  # a broken user catalog: say so in the menu
            self.addAction(f"(catalog unreadable: {e})").setEnabled(False)
            return
        more = [e for e in entries if not _is_main(e)]
        for entry in [e for e in entries if _is_main(e)] + more:
            action = self.addAction(model_names.label(entry.name, entry.title), partial(self._add_pane, entry.name))
            action.setEnabled(can_load(entry))
            action.setToolTip(entry.title if action.isEnabled() else f"{entry.title} (not fetched yet)")
            texts = (entry.name, entry.title, *entry.aliases, *model_names.names_for(entry.name))
            self._items.append((action, texts, heading, not _is_main(entry)))
        if more:
            self.more = self.addMenu("More vocabularies")
            for entry in more:
                action = self.more.addAction(
                    model_names.label(entry.name, entry.title), partial(self._add_pane, entry.name)
                )
                action.setEnabled(can_load(entry))
            self._more_action = self.more.menuAction()

    def _fill_local(self, scan: discovery.Scan) -> None:
        for action, _, heading, _ in self._items:
            if heading is self._local_heading:
                self.removeAction(action)
        self._items = [item for item in self._items if item[2] is not self._local_heading]
        for found in scan.found:
            size = f" · {found.vocab_size:,} ids" if found.vocab_size else ""
            text = f"{found.label} — {discovery.SOURCE_TITLES[found.source]}{size}"
            action = QAction(text, self, toolTip=f"{found.spec}\n{found.detail}\n{found.path}")
            action.triggered.connect(partial(self._add_pane, found.spec))
            self.insertAction(self._status, action)
            texts = (text, found.spec, found.source, found.detail, str(found.path))
            self._items.append((action, texts, self._local_heading, False))
        if scan.found:
            self._status.setText(f"{len(scan.found)} found" + (f", {len(scan.notes)} skipped" if scan.notes else ""))
        else:
            self._status.setText("none found in " + ", ".join(
                sorted({discovery.SOURCE_TITLES[s] for s, _ in scan.roots})))
        self._status.setToolTip("\n".join(scan.notes[:MAX_NOTES_SHOWN]))
        self.apply_filter(self.search.text())

    # -- scanning ---------------------------------------------------------------------------------
    def _on_show(self) -> None:
        if self.scan is None and self._worker is None:
            self.start_scan()
        self.search.setFocus(Qt.FocusReason.PopupFocusReason)

    def start_scan(self) -> None:
        """Scan (again): a scan still running is superseded, and delivers nothing."""
        if self._worker is not None:
            self._worker.abort()
        self._status.setText("scanning…")
        self._rescan.setEnabled(False)
        # job.check raises between models once the scan is aborted
        self._worker = Worker(lambda job: discovery.scan(check=job.check), owner=self, name="tokviz-discovery")
        self._worker.returned.connect(self._on_scanned)
        self._worker.errored.connect(self._on_scan_failed)
        self._worker.start()

    def _on_scanned(self, scan: discovery.Scan) -> None:
        self.scan = scan
        self._rescan.setEnabled(True)
        self._fill_local(scan)
        self.scanned.emit(scan)

    def _on_scan_failed(self, error: Exception) -> None:
        self._rescan.setEnabled(True)
        self._status.setText(f"scan failed: {message_of(error)}")

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.parentWidget(), "Add a folder to scan for tokenizers")
        if folder:
            self.add_folder(folder)

    def add_folder(self, folder: str) -> None:
        """Add `folder` to the places scanned, and scan again (or say why it cannot be added)."""
        try:
            discovery.add_folder(folder)
        except Exception as e:
            self._status.setText(message_of(e))
            return
        self.start_scan()

    # -- searching --------------------------------------------------------------------------------
    def apply_filter(self, query: str) -> None:
        """Show the items `query` matches and their sections' headings ("On this machine" always)."""
        searching = bool(query.split())
        if self._more_action is not None:
            self._more_action.setVisible(not searching)
        shown = {id(self._local_heading)}
        for action, texts, heading, search_only in self._items:
            visible = model_names.matches(query, action.text(), *texts) and (searching or not search_only)
            action.setVisible(visible)
            if visible:
                shown.add(id(heading))
        for heading in self._headings:
            heading.setVisible(not searching or id(heading) in shown)

    def visible_items(self) -> list[str]:
        """The texts of the items the search leaves (for tests)."""
        return [action.text() for action, *_ in self._items if action.isVisible()]

    def shutdown(self) -> None:
        """Stop a scan under way and wait for it."""
        if self._worker is not None:
            self._worker.stop()
