"""The compare window's diff mode: where the panes cut the text differently.

When on, every time all panes hold a result for the same text, the boundary diff
(`tokviz.analysis.diff`) is computed on a `Worker` and shown: in each pane, a bar on every cut it
makes and some other pane does not; in the editor, an underline under each stretch cut differently
from the reference pane (only those in view, redone on scrolling: every text cursor is built on
the GUI thread); and in a panel, each pane's agreement with the reference pane and, for two panes,
the differing stretches, each a row that jumps there.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial, reduce
from typing import Any

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QAction, QColor, QTextCharFormat
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.diff import diff_cuttings
from tokviz.core.tokens import Token, display_text
from tokviz.gui.compare.cells import ViewOptions, cells_for, join_fragments
from tokviz.gui.work.worker import Job, Worker, message_of

MAX_LISTED = 2000  # differing stretches listed for two panes
MAX_EDITOR_MARKS = 400  # underlines in view in the editor (each is an ExtraSelection)
EDITOR_MARK = QTextCharFormat()  # under a stretch cut differently
EDITOR_MARK.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
EDITOR_MARK.setUnderlineColor(QColor("#c026d3"))


@dataclass
class DiffOutcome:
    """What the diff mode shows for one set of pane results."""

    results: list[Any]  # the PaneResults it was computed from (a newer one makes it stale)
    reference: int
    agreement: list[float]
    identical: list[bool]
    marks: list[np.ndarray]  # per pane: token indices whose start is a cut not all panes make
    editor_ranges: np.ndarray  # (n, 2) character ranges where some pane differs from the reference
    n_stretches: int = 0
    stretches: list[tuple[int, int, list[Token], list[Token]]] = field(default_factory=list)


def compute_diff(job: Job | None, results: Sequence[Any], reference: int) -> DiffOutcome:
    """The diff of the panes' results (Qt-free work; runs on a Worker)."""
    diff = diff_cuttings([r.tokens for r in results], results[0].n_chars, reference)
    if job is not None:
        job.check()
    shared = reduce(partial(np.intersect1d, assume_unique=True), diff.cuts)
    marks = [np.searchsorted(r.starts, cuts[~np.isin(cuts, shared, assume_unique=True)], side="left")
             for r, cuts in zip(results, diff.cuts)]
    ranges = [diff.stretch_ranges(reference, i) for i in range(len(results)) if i != reference]
    editor = _merge_ranges(np.concatenate(ranges) if ranges else np.zeros((0, 2), np.int64))
    identical = [diff.identical(reference, i) for i in range(len(results))]
    outcome = DiffOutcome(list(results), reference, list(diff.agreement), identical, marks, editor)
    if len(results) == 2:
        a, b = reference, 1 - reference
        outcome.n_stretches = diff.count_stretches(a, b)
        outcome.stretches = [(s.start, s.end, s.left, s.right)
                             for s in itertools.islice(diff.stretches(a, b), MAX_LISTED)]
    return outcome


def _merge_ranges(ranges: np.ndarray) -> np.ndarray:
    """Overlapping or touching `[start, end)` ranges merged, in order.

    >>> _merge_ranges(np.array([[5, 8], [0, 2], [2, 3], [6, 9]])).tolist()
    [[0, 3], [5, 9]]
    """
    if not len(ranges):
        return ranges.reshape(0, 2)
    ranges = ranges[np.argsort(ranges[:, 0], kind="stable")]
    reach = np.maximum.accumulate(ranges[:, 1])  # the furthest end so far: a group's end at its last row
    new = np.concatenate(([True], ranges[1:, 0] > reach[:-1]))
    last = np.append(np.flatnonzero(new)[1:] - 1, len(ranges) - 1)
    return np.stack([ranges[new, 0], reach[last]], axis=1)


def shown(tokens: Sequence[Token], options: ViewOptions = ViewOptions()) -> str:  # noqa: B008 (frozen)
    """A stretch's tokens as the panes draw them, each in brackets, with their ids after them.

    The labels are the panes' cells: a character cut across fragment tokens is written once, in
    the token holding its first byte, and every fragment keeps its bytes in hex.

    >>> from tokviz.core.tokens import TokenKind; F = TokenKind.FRAGMENT
    >>> shown([Token(1, b"\\xeb", 0, 1, 0, 1, F, ""), Token(2, b"\\x8c\\x80", 1, 3, 0, 1, F, ""),
    ...        Token(3, b" a", 3, 5, 1, 3, TokenKind.NORMAL, "")])
    '[대⟨eb⟩][⟨8c 80⟩][·a]  1 2 3'
    """
    cells = cells_for(tokens, options)
    fragments = [i for i, cell in enumerate(cells) if cell.hex]
    for i, cell in join_fragments(tokens, cells, fragments, options).items():
        cells[i] = cell
    labels = (f"{c.label}⟨{c.hex}⟩" if c.hex else c.label for c in cells)
    return "".join(f"[{label}]" for label in labels) + "  " + " ".join(str(t.id) for t in tokens)


class DiffPanel(QWidget):
    """Agreement per pane, the reference choice and (two panes) the differing stretches."""

    def __init__(self, jump: Callable[[int, int], None], reference_changed: Callable[[int], None]) -> None:
        super().__init__()
        self._jump = jump
        self.summary = QLabel("diff: waiting for every pane", wordWrap=True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reference = QComboBox(toolTip="the pane the others are compared with", activated=reference_changed)
        # a few stretches readable without dragging the splitter
        self.stretch_list = QListWidget(minimumHeight=120, itemActivated=self._on_item, itemClicked=self._on_item)
        top = QHBoxLayout()
        top.addWidget(QLabel("Reference:"))
        top.addWidget(self.reference)
        top.addWidget(self.summary, 1)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 2, 4, 2)
        box.addLayout(top)
        box.addWidget(self.stretch_list, 1)

    def set_names(self, names: list[str], reference: int) -> None:
        """List the panes to choose the reference from, `reference` chosen (`activated`, the only
        signal listened to, is the user's choice alone)."""
        self.reference.clear()
        self.reference.addItems(names)
        self.reference.setCurrentIndex(reference)

    def show_waiting(self, message: str) -> None:
        """Say `message` instead of an outcome."""
        self.summary.setText(message)
        self.stretch_list.clear()
        self.stretch_list.hide()

    def show_outcome(self, outcome: DiffOutcome, names: list[str], text: str,
                     options: ViewOptions = ViewOptions()) -> None:  # noqa: B008 (frozen)
        """Show the agreement and, for two panes, the differing stretches in the panes' notation
        (`options`: the window's, so whitespace reads as in the panes)."""
        ref = outcome.reference
        parts = [f"{name}: {outcome.agreement[i]:.1f}% of boundaries agree with {names[ref]} "
                 f"({'identical ids' if outcome.identical[i] else 'ids differ'})"
                 for i, name in enumerate(names) if i != ref]
        self.summary.setText(" · ".join(parts) or "one pane: nothing to compare")
        self.stretch_list.clear()
        other = 1 - ref
        if len(names) != 2 or outcome.identical[other]:
            if len(names) == 2:
                self.summary.setText(f"identical: {names[0]} and {names[1]} give the same ids for this text")
            self.stretch_list.hide()
            return
        self.stretch_list.show()
        n = outcome.n_stretches
        if not n:
            self.stretch_list.addItem("same cuts everywhere; the ids differ (other numbering)")
            return
        head = QListWidgetItem(f"{n:,} differing stretch{'es' if n != 1 else ''}"
                               + (f" (the first {MAX_LISTED:,} listed)" if n > MAX_LISTED else "")
                               + " — click one to go there")
        head.setFlags(Qt.ItemFlag.NoItemFlags)
        self.stretch_list.addItem(head)
        ws = options.visible_whitespace
        for start, end, left, right in outcome.stretches:
            item = QListWidgetItem(
                f"chars {start}-{end} {display_text(text[start:end], visible_whitespace=ws)}    "
                f"{names[ref]}: {shown(left, options)}    {names[other]}: {shown(right, options)}"
            )
            item.setData(Qt.ItemDataRole.UserRole, (start, end))
            self.stretch_list.addItem(item)

    def _on_item(self, item: QListWidgetItem) -> None:
        span = item.data(Qt.ItemDataRole.UserRole)
        if span:
            self._jump(*span)


class DiffMode:
    """Owns the diff panel and its worker; the window calls `refresh` when a pane changes."""

    def __init__(self, window: Any) -> None:
        self.window = window
        #: the View menu's switch, checked while the mode is on (however it was switched)
        self.action = QAction("&Diff mode (where the panes cut differently)", window, checkable=True)
        self.action.toggled.connect(self.set_on)
        self.reference = 0
        self.outcome: DiffOutcome | None = None
        self._worker: Worker | None = None
        # a stretch's row selects its characters in the editor and scrolls every pane to it
        self.panel = DiffPanel(window.select_chars, self.set_reference)
        self.panel.hide()
        window.editor.verticalScrollBar().valueChanged.connect(self._update_editor_marks)

    @property
    def on(self) -> bool:
        """The mode is on: its action is checked."""
        return self.action.isChecked()

    def set_on(self, on: bool) -> None:
        """Switch the mode on (show the panel, compute) or off (drop every mark)."""
        with QSignalBlocker(self.action):
            self.action.setChecked(on)
        self.panel.setVisible(on)
        if on:
            self.refresh()
            return
        self._stop()
        self.outcome = None
        for pane in self.window.panes:
            pane.view.set_boundary_marks(None)
        self.window.editor.set_marks("diff", [], EDITOR_MARK)

    def set_reference(self, index: int) -> None:
        """Compare the panes with pane `index`."""
        self.reference = index
        self.refresh()

    def refresh(self) -> None:
        """Recompute when every pane holds a result for the current text (else wait for them)."""
        if not self.on:
            return
        panes = self.window.panes
        self.reference = min(self.reference, max(len(panes) - 1, 0))
        self.panel.set_names([p.title.text() for p in panes], self.reference)
        results = [p.result for p in panes]
        if not panes or any(r is None or r.text != self.window.offsets.text for r in results):
            self._stop()
            self.panel.show_waiting("diff: waiting for every pane to cut the text…")
            return
        if self.outcome is not None and self.outcome.reference == self.reference and self._current(self.outcome):
            return  # already shown
        self._stop()
        self.panel.show_waiting("diff: comparing…")
        self._worker = Worker(partial(compute_diff, results=results, reference=self.reference),
                              owner=self.panel, name="tokviz-diff")
        self._worker.returned.connect(self._on_returned)
        self._worker.errored.connect(self._on_errored)
        self._worker.start()

    def _current(self, outcome: DiffOutcome) -> bool:
        """True when `outcome` was computed from the panes' present results."""
        panes = self.window.panes
        return len(panes) == len(outcome.results) and all(p.result is r for p, r in zip(panes, outcome.results))

    def _stop(self) -> None:
        if self._worker is not None:
            self._worker.abort()
            self._worker = None

    def _on_returned(self, outcome: DiffOutcome) -> None:
        self._worker = None
        if not self._current(outcome):
            self.refresh()  # a pane changed meanwhile
            return
        self.outcome = outcome
        for pane, marks in zip(self.window.panes, outcome.marks):
            pane.view.set_boundary_marks(marks)
        self._update_editor_marks()
        self._show(outcome)

    def options_changed(self) -> None:
        """Write the shown stretches again in the window's new notation (visible whitespace)."""
        if self.on and self.outcome is not None and len(self.window.panes) == len(self.outcome.results):
            self._show(self.outcome)

    def _show(self, outcome: DiffOutcome) -> None:
        w = self.window
        self.panel.show_outcome(outcome, [p.title.text() for p in w.panes], w.offsets.text, w.options)

    def _on_errored(self, error: BaseException) -> None:
        self._worker = None
        self.panel.show_waiting(f"diff failed: {message_of(error)}")

    def _update_editor_marks(self, *_args: object) -> None:
        """Underline the differing stretches in the editor's view (and a screen either side)."""
        if not self.on:
            return
        editor, offsets = self.window.editor, self.window.offsets
        ranges = self.outcome.editor_ranges if self.outcome is not None else np.zeros((0, 2), np.int64)
        if len(ranges):
            view = editor.viewport().rect()
            lo = offsets.to_chars(editor.cursorForPosition(view.topLeft()).position())
            hi = offsets.to_chars(editor.cursorForPosition(view.bottomRight()).position())
            span = max(hi - lo, 1)
            first = int(np.searchsorted(ranges[:, 1], lo - span, side="right"))
            last = int(np.searchsorted(ranges[:, 0], hi + span, side="left"))
            ranges = ranges[first:min(last, first + MAX_EDITOR_MARKS)]
        editor.set_marks("diff", (offsets.to_utf16_span(start, end) for start, end in ranges.tolist()), EDITOR_MARK)
