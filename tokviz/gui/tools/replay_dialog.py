"""The merge replay dialog: how a tokenizer cuts a piece of text, chunk by chunk, merge by merge.

`ReplayDialog` loads the tokenizer named by a spec and runs `tokviz.analysis.replay.replay_with` on the
text (or the selected range of it) on a worker thread, then shows the pre-tokenization chunks as
chips and, for the selected chunk, every state from single bytes (or characters, for SentencePiece)
to the final tokens: one row of coloured part boxes per merge, with the merge's rank, and a slider
that scrubs through them. The last line says whether the replay ends in the backend's own ids.

`ChipFlow` (a painted, wrapping row of chips: no widget per chip) is shared with the pipeline view.

This module does not replay anything itself (the core does) and does not highlight text in the
window: `jump_to(start, end)` says which characters the selected chunk covers.
"""

from __future__ import annotations

import html
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from tokviz.analysis.replay import (
    ChunkReplay,
    Replay,
    ReplayNotApplicable,
    algorithm_of,
    replay_with,
)
from tokviz.core import catalog
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import TokenKind, display_text, hex_bytes, is_fragment
from tokviz.gui.widgets.dialogs import WorkDialog
from tokviz.gui.widgets.labels import busy_page, plain_text_labels
from tokviz.gui.widgets.theme import token_colors
from tokviz.gui.work.worker import Worker, message_of

MAX_CHARS = 5_000  # a longer selection is cut, with a message
SYNC_CHARS = 2_000  # up to this many characters a given tokenizer replays in the GUI thread
ALGORITHM_TITLES = {"byte-bpe": "byte-level BPE", "sentencepiece-bpe": "SentencePiece BPE"}


# -- chips ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chip:
    """One box: its label, an optional second line (hex bytes, an id), colour and hover text."""

    label: str
    sub: str = ""
    color: QColor | None = None
    tooltip: str = ""
    marked: bool = False  # outlined: the part a merge just made


def part_color(data: bytes) -> QColor:
    """A part's colour: the fragment colour for partial UTF-8, else one fixed by its bytes (the
    same part has the same colour in every row)."""
    colors = token_colors()
    if is_fragment(data):
        return colors.kinds.get(TokenKind.FRAGMENT, QColor("#ff8a80"))
    return colors.tokens[zlib.crc32(data) % len(colors.tokens)]


def part_chips(parts: Sequence[bytes], marked: int | None = None) -> list[Chip]:
    return [
        Chip(display_text(p), hex_bytes(p) if is_fragment(p) else "", part_color(p), hex_bytes(p), k == marked)
        for k, p in enumerate(parts)
    ]


class ChipFlow(QWidget):
    """Chips laid out left to right, wrapping at the widget's width, painted in one pass."""

    clicked = Signal(int)

    PAD_X, PAD_Y, GAP = 5.0, 4.0, 4.0

    def __init__(self, parent: QWidget | None = None, *, max_chips: int = 3_000, scale: float = 1.0) -> None:
        super().__init__(parent)
        self.max_chips = max_chips
        self.chips: list[Chip] = []
        self.current: int | None = None
        self._more = 0
        self._rects: list[QRectF] = []
        self._laid_width = -1
        self.font_main = QFont(self.font())
        self.font_main.setPointSizeF(self.font_main.pointSizeF() * scale)
        self.font_small = QFont(self.font_main)
        self.font_small.setPointSizeF(max(6.0, self.font_main.pointSizeF() * 0.75))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.setMouseTracking(False)

    def set_chips(self, chips: Sequence[Chip], *, current: int | None = None) -> None:
        self._more = max(0, len(chips) - self.max_chips)
        self.chips = list(chips[: self.max_chips])
        if self._more:
            self.chips.append(Chip(f"… {self._more:,} more", color=QColor("#eef0f3")))
        self.current = current
        self._laid_width = -1
        self.updateGeometry()
        self.update()

    def set_current(self, index: int | None) -> None:
        self.current = index
        self.update()

    # -- layout -----------------------------------------------------------------------------------
    def _chip_height(self) -> float:
        main = QFontMetricsF(self.font_main).height()
        small = QFontMetricsF(self.font_small).height() if any(c.sub for c in self.chips) else 0.0
        return main + small + 2 * self.PAD_Y

    def _layout(self, width: int) -> float:
        """Place every chip for `width`; returns the height used."""
        main, small = QFontMetricsF(self.font_main), QFontMetricsF(self.font_small)
        height = self._chip_height()
        x = y = self.GAP
        rects = []
        for chip in self.chips:
            w = max(main.horizontalAdvance(chip.label), small.horizontalAdvance(chip.sub), 6.0) + 2 * self.PAD_X
            w = min(w, max(20.0, width - 2 * self.GAP))
            if x + w > width - self.GAP and x > self.GAP:
                x, y = self.GAP, y + height + self.GAP
            rects.append(QRectF(x, y, w, height))
            x += w + self.GAP
        self._rects = rects
        self._laid_width = width
        return y + height + self.GAP if self.chips else 2 * self.GAP

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return int(self._layout(width)) + 1

    def sizeHint(self) -> QSize:  # noqa: N802
        width = self.width() if self.width() > 50 else 600
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(60, int(self._chip_height() + 2 * self.GAP))

    def resizeEvent(self, event) -> None:  # noqa: N802
        self._laid_width = -1
        super().resizeEvent(event)

    def chip_rect(self, index: int) -> QRectF:
        if self._laid_width != self.width():
            self._layout(self.width())
        return self._rects[index]

    def chip_at(self, pos: QPoint) -> int | None:
        if self._laid_width != self.width():
            self._layout(self.width())
        for k, rect in enumerate(self._rects):
            if rect.contains(pos.toPointF()):
                return None if self._more and k == len(self._rects) - 1 else k
        return None

    # -- painting and input -----------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        if self._laid_width != self.width():
            self._layout(self.width())
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        main_h = QFontMetricsF(self.font_main).height()
        highlight = token_colors().highlight
        exposed = QRectF(event.rect())
        for k, (chip, rect) in enumerate(zip(self.chips, self._rects)):
            if not rect.intersects(exposed):
                continue
            marked = chip.marked or k == self.current
            painter.setPen(QPen(highlight.darker(130), 2.5) if marked else QPen(QColor("#c3c8d0"), 1))
            painter.setBrush(chip.color or QColor("#eef0f3"))
            painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
            painter.setPen(QColor("#1f2937"))
            painter.setFont(self.font_main)
            top = QRectF(rect.x() + self.PAD_X, rect.y() + self.PAD_Y, rect.width() - 2 * self.PAD_X, main_h)
            painter.drawText(top, Qt.AlignmentFlag.AlignCenter, chip.label)
            if chip.sub:
                painter.setPen(QColor("#4b5563"))
                painter.setFont(self.font_small)
                bottom = QRectF(top.x(), top.bottom(), top.width(), rect.bottom() - top.bottom() - self.PAD_Y)
                painter.drawText(bottom, Qt.AlignmentFlag.AlignCenter, chip.sub)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        index = self.chip_at(event.position().toPoint())
        if index is not None:
            self.clicked.emit(index)
        super().mousePressEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            help_event: QHelpEvent = event  # type: ignore[assignment]
            index = self.chip_at(help_event.pos())
            if index is not None and self.chips[index].tooltip:
                QToolTip.showText(help_event.globalPos(), self.chips[index].tooltip, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


def scrolled(widget: QWidget, *, max_height: int | None = None) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setWidget(widget)
    if max_height is not None:
        area.setMaximumHeight(max_height)
    return area


# -- merge steps ----------------------------------------------------------------------------------


class ChunkStates:
    """The parts of a chunk after step k, for any k, without holding every state: checkpoints plus
    the last state asked for (rows are painted in order, so the next one is one merge away)."""

    def __init__(self, chunk: ChunkReplay) -> None:
        self.chunk = chunk
        self.every = max(32, len(chunk.initial) // 8)
        self._checkpoints: dict[int, list[bytes]] = {0: list(chunk.initial)}
        self._last: tuple[int, list[bytes]] = (0, list(chunk.initial))

    def __len__(self) -> int:
        return len(self.chunk.steps) + 1

    def state(self, k: int) -> list[bytes]:
        last_k, parts = self._last
        if not last_k <= k <= last_k + self.every:
            base = max(c for c in self._checkpoints if c <= k)
            last_k, parts = base, self._checkpoints[base]
        parts = list(parts)
        for step in self.chunk.steps[last_k:k]:
            last_k += 1
            parts[step.index : step.index + 2] = [step.merged]
            if last_k % self.every == 0:
                self._checkpoints.setdefault(last_k, list(parts))
        self._last = (k, parts)
        return parts


def step_caption(chunk: ChunkReplay, k: int) -> str:
    """`step 3 · rank 4896` (byte-level) or `step 3 · id 1234, score -5.20` (SentencePiece)."""
    if k == 0:
        return "bytes" if chunk.steps and chunk.steps[0].score is None else "start"
    step = chunk.steps[k - 1]
    if step.score is not None:
        return f"{k} · id {step.rank} · score {step.score:.2f}"
    return f"{k} · rank {step.rank:,}"


class StepDelegate(QStyledItemDelegate):
    """Paints a step row: its caption, then the chunk's parts after that step as boxes."""

    CAPTION_WIDTH = 170

    def __init__(self, states: ChunkStates | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.states = states

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        return QSize(400, int(option.fontMetrics.height() + 12))

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        if self.states is None:
            return
        k = index.row()
        painter.save()
        rect = QRectF(option.rect)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(option.rect, QColor("#dbe8fb"))
        painter.setPen(QColor("#374151"))
        caption = QRectF(rect.x() + 6, rect.y(), self.CAPTION_WIDTH - 10, rect.height())
        painter.drawText(caption, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         step_caption(self.states.chunk, k))
        marked = self.states.chunk.steps[k - 1].index if k > 0 else None
        metrics = option.fontMetrics
        x, right = rect.x() + self.CAPTION_WIDTH, rect.right() - 4
        highlight = token_colors().highlight.darker(130)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        for j, part in enumerate(self.states.state(k)):
            label = display_text(part) + (f" {hex_bytes(part)}" if is_fragment(part) else "")
            w = metrics.horizontalAdvance(label) + 10
            if x + w > right:
                painter.setPen(QColor("#6b7280"))
                rest = QRectF(x, rect.y(), right - x, rect.height())
                painter.drawText(rest, Qt.AlignmentFlag.AlignVCenter, "…")
                break
            box = QRectF(x, rect.y() + 3, w, rect.height() - 6)
            painter.setPen(QPen(highlight, 2.5) if j == marked else QPen(QColor("#c3c8d0"), 1))
            painter.setBrush(part_color(part))
            painter.drawRoundedRect(box, 3, 3)
            painter.setPen(QColor("#1f2937"))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, label)
            x += w + 3
        painter.restore()


# -- the dialog -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    replay: Replay | None
    message: str = ""  # why there is no replay (not applicable, a disallowed special token)


def _compute(spec: str, tokenizer: Tokenizer | None, text: str, policy: SpecialPolicy) -> _Outcome:
    tok = tokenizer if tokenizer is not None else catalog.load(spec)
    try:
        algorithm_of(tok)
        return _Outcome(replay_with(tok, text, policy))
    except ReplayNotApplicable as e:
        return _Outcome(None, str(e))
    except ValueError as e:  # tiktoken's disallowed-special-token message
        return _Outcome(None, str(e))


def _ids_text(ids: Sequence[int], limit: int = 200) -> str:
    shown = ", ".join(map(str, ids[:limit]))
    return f"[{shown}{', …' if len(ids) > limit else ''}]  ({len(ids):,} ids)"


class ReplayDialog(WorkDialog):
    """Merge replay of `text` (or `text[selection[0]:selection[1]]`) in the tokenizer `spec`.

    The range is replayed as a text of its own (its first and last chunk can differ from the cut
    of the whole text) and cut to `MAX_CHARS` characters, with a message.
    """

    ready = Signal()  # the replay, or the message saying why there is none, is shown
    jump_to = Signal(int, int)  # characters of the selected chunk in the original text

    def __init__(self, spec: str, text: str, *, policy: SpecialPolicy | str = "none",
                 selection: tuple[int, int] | None = None, tokenizer: Tokenizer | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.offset, end = selection if selection is not None else (0, len(text))
        self.offset, end = max(0, self.offset), min(len(text), end)
        self.cut = max(0, end - self.offset - MAX_CHARS)
        self.text = text[self.offset : min(end, self.offset + MAX_CHARS)]
        self.policy = policy if isinstance(policy, SpecialPolicy) else SpecialPolicy.parse(policy)
        self.replay: Replay | None = None
        self.message = ""
        self.chunk: ChunkReplay | None = None
        self.setWindowTitle(f"Merge replay — {spec}")
        self._build_ui()
        self.resize(1000, 720)
        if tokenizer is not None and len(self.text) <= SYNC_CHARS:
            self._call = None
            outcome = self._safe_compute(tokenizer)
            QTimer.singleShot(0, self, lambda: self._show(outcome))  # after the caller connects `ready`
        else:
            self._call = Worker(lambda job: _compute(spec, tokenizer, self.text, self.policy), owner=self,
                                name="tokviz-replay")
            self._call.returned.connect(self._show)
            self._call.errored.connect(self._on_error)
            self._call.start()

    def _safe_compute(self, tokenizer: Tokenizer) -> _Outcome | str:
        try:
            return _compute(self.spec, tokenizer, self.text, self.policy)
        except Exception as e:  # noqa: BLE001 (the boundary: a message in the dialog)
            return f"{type(e).__name__}: {e}"

    # -- UI ---------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.header = QLabel(self.spec, objectName="paneHeader", wordWrap=True)
        self.cut_label = QLabel(
            f"The selection has {self.cut + len(self.text):,} characters: "
            f"the first {MAX_CHARS:,} are replayed.",
            objectName="warningLabel", wordWrap=True,
        )
        self.cut_label.setVisible(self.cut > 0)
        self.stack = QStackedWidget()
        self.stack.addWidget(busy_page(f"Loading {self.spec} and replaying {len(self.text):,} characters…"))
        self.message_label = QLabel("", wordWrap=True, objectName="warningLabel")
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        message_page = QWidget()
        QVBoxLayout(message_page).addWidget(self.message_label, 0, Qt.AlignmentFlag.AlignTop)
        self.stack.addWidget(message_page)
        self.stack.addWidget(self._build_content())
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(self.cut_label)
        layout.addWidget(self.stack, 1)
        plain_text_labels(self, rich=(self.final_ids_label, self.chunk_ids_label))

    def _build_content(self) -> QWidget:
        self.chunk_chips = ChipFlow()
        self.chunk_chips.clicked.connect(self.select_chunk)
        self.chunk_title = QLabel("", objectName="paneHeader", wordWrap=True)
        self.state_chips = ChipFlow(scale=1.3)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setPageStep(1)
        self.slider.valueChanged.connect(self.set_step)
        self.step_label = QLabel("", objectName="paneSubheader")
        self.step_label.setMinimumWidth(240)
        self.steps_list = QListWidget()
        self.steps_list.setUniformItemSizes(True)
        self.delegate = StepDelegate(None, self.steps_list)
        self.steps_list.setItemDelegate(self.delegate)
        self.steps_list.currentRowChanged.connect(self._on_step_row)
        self.chunk_ids_label = QLabel("", wordWrap=True)
        self.chunk_ids_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.final_ids_label = QLabel("", wordWrap=True)
        self.final_ids_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.match_label = QLabel("", wordWrap=True)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(QLabel("Pre-tokenization chunks (click one)", objectName="paneSubheader"))
        top_layout.addWidget(scrolled(self.chunk_chips), 1)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.chunk_title)
        bottom_layout.addWidget(scrolled(self.state_chips, max_height=150))
        scrub = QHBoxLayout()
        scrub.addWidget(self.slider, 1)
        scrub.addWidget(self.step_label)
        bottom_layout.addLayout(scrub)
        bottom_layout.addWidget(self.steps_list, 1)
        bottom_layout.addWidget(self.chunk_ids_label)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        splitter.setSizes([110, 610])
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.final_ids_label)
        layout.addWidget(self.match_label)
        return page

    # -- results ----------------------------------------------------------------------------------
    def _on_error(self, error: Exception) -> None:
        self._on_failed(message_of(error))

    def _on_failed(self, message: str) -> None:
        self._show(f"Cannot replay in {self.spec}: {message}")

    def _show(self, outcome: _Outcome | str) -> None:
        if isinstance(outcome, str) or outcome.replay is None:
            self.message = outcome if isinstance(outcome, str) else outcome.message
            self.message_label.setText(self.message)
            self.header.setText(f"{self.spec} · no merge replay")
            self.stack.setCurrentIndex(1)
            self.ready.emit()
            return
        replay = self.replay = outcome.replay
        self.header.setText(
            f"{replay.tokenizer} · {ALGORITHM_TITLES.get(replay.algorithm, replay.algorithm)} · "
            f"{len(replay.text):,} characters · {len(replay.chunks):,} chunks · {replay.merge_count:,} merges"
        )
        colors = token_colors()
        special = colors.kinds.get(TokenKind.SPECIAL, QColor("#b39ddb"))
        self.chunk_chips.set_chips([
            Chip(
                display_text(c.text) or "∅", color=special if c.special else colors.tokens[k % len(colors.tokens)],
                tooltip=f"chars {self.offset + c.start:,}–{self.offset + c.end:,} · {len(c.steps)} merges · "
                f"ids {list(c.ids)}"
                + (f"\n{c.note}" if c.note else ""),
            )
            for k, c in enumerate(replay.chunks)
        ])
        self.final_ids_label.setText(f"<b>Final ids</b> {_ids_text(replay.ids)}")
        if replay.matches_backend:
            self.match_label.setText("✓ matches the backend's ids")
            self.match_label.setStyleSheet("color: #1b7f3b; font-weight: 600;")
        else:
            self.match_label.setText(f"✗ does not match the backend's ids: {replay.mismatch}")
            self.match_label.setStyleSheet("color: #b3261e; font-weight: 600;")
        self.stack.setCurrentIndex(2)
        first = next((k for k, c in enumerate(replay.chunks) if c.steps), 0)
        if replay.chunks:
            self.select_chunk(first)
        self.ready.emit()

    def select_chunk(self, index: int) -> None:
        """Show chunk `index`'s merges, at the final state."""
        if self.replay is None or not 0 <= index < len(self.replay.chunks):
            return
        chunk = self.chunk = self.replay.chunks[index]
        self.chunk_chips.set_current(index)
        kind = "special token" if chunk.special else "chunk"
        self.chunk_title.setText(
            f"{kind.capitalize()} {index + 1}: “{display_text(chunk.text)}” — {len(chunk.initial)} parts, "
            f"{len(chunk.steps)} merges" + (f" · {chunk.note}" if chunk.note else "")
        )
        self.delegate.states = ChunkStates(chunk)
        self.steps_list.blockSignals(True)
        self.steps_list.clear()
        for k in range(len(chunk.steps) + 1):
            item = QListWidgetItem(self._step_text(chunk, k))
            self.steps_list.addItem(item)
        self.steps_list.blockSignals(False)
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(chunk.steps))
        self.slider.blockSignals(False)
        self.chunk_ids_label.setText(
            f"<b>Chunk ids</b> {_ids_text(list(chunk.ids))} · pieces {html.escape(' '.join(chunk.pieces[:50]))}"
        )
        self.set_step(len(chunk.steps))
        self.jump_to.emit(self.offset + chunk.start, self.offset + chunk.end)

    def _step_text(self, chunk: ChunkReplay, k: int) -> str:
        """The row's text (screen readers, tests): caption and, for a merge, what it joined."""
        if k == 0:
            return f"{step_caption(chunk, 0)}: {len(chunk.initial)} parts"
        merged = chunk.steps[k - 1].merged
        return f"step {step_caption(chunk, k)} · → {display_text(merged)}"

    def set_step(self, k: int) -> None:
        """Show the selected chunk after `k` merges (0: the initial parts)."""
        chunk = self.chunk
        if chunk is None or self.delegate.states is None:
            return
        k = max(0, min(k, len(chunk.steps)))
        for widget, setter in (
            (self.slider, self.slider.setValue), (self.steps_list, self.steps_list.setCurrentRow),
        ):
            widget.blockSignals(True)
            setter(k)
            widget.blockSignals(False)
        self.steps_list.scrollToItem(self.steps_list.item(k))
        marked = chunk.steps[k - 1].index if k > 0 else None
        self.state_chips.set_chips(part_chips(self.delegate.states.state(k), marked))
        caption = step_caption(chunk, k).partition(" · ")[2] if k else step_caption(chunk, 0)
        self.step_label.setText(f"step {k} of {len(chunk.steps)} · {caption}")

    def _on_step_row(self, row: int) -> None:
        if row >= 0:
            self.set_step(row)

    # -- closing ----------------------------------------------------------------------------------
    def shutdown(self) -> None:
        if self._call is not None:
            self._call.stop()


def open_replay_dialog(parent: QWidget | None, spec: str, text: str, *, policy: SpecialPolicy | str = "none",
                     selection: tuple[int, int] | None = None) -> ReplayDialog:
    """Open (show) a non-modal merge replay of `text[selection]` in `spec`.

    >>> view = open_replay_dialog(  # doctest: +SKIP
    ...     window, pane.spec, window.text(), policy=pane.policy, selection=(a, b))
    """
    view = ReplayDialog(spec, text, policy=policy, selection=selection, parent=parent)
    view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    view.show()
    return view
