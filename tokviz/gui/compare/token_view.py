"""The token view: a custom-painted, virtualized rendering of one pane's tokens.

Only the lines inside the viewport are painted, and lines are broken a time slice at a time
(`TokenLayout.advance` on a timer), so a long text neither freezes the window nor builds a widget
per token.
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import QAbstractScrollArea, QToolTip, QWidget
from shiboken6 import isValid

from tokviz.analysis.notation import token_tooltip
from tokviz.analysis.palette import id_slots
from tokviz.core.tokens import Token
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import HEX_KINDS, Cell
from tokviz.gui.compare.pane_keys import moved_to
from tokviz.gui.compare.pane_result import PaneResult
from tokviz.gui.compare.renderer import LIMIT_PEN, PAST_LIMIT_FILL, CellShapes, line_cells, paint_cells
from tokviz.gui.compare.token_layout import TokenLayout, covering
from tokviz.gui.widgets.theme import TokenColors, token_colors
from tokviz.model.compare import ViewMode

MARGIN = 6.0
LINE_GAP = 3.0
LAYOUT_SLICE_S = 0.006  # GUI-thread budget of one event-loop turn's layout slices, all views together
MIN_SLICE_S = 0.001  # one view's share does not fall below this (each slice measures a cell at least)
SELECT_PEN = QPen(QColor("#111827"), 2.0)
HIGHLIGHT_PEN = QPen(QColor("#d97706"), 2.0)
HIGHLIGHT_FILL = QColor(255, 214, 10, 90)
SELECTION_FILL = QColor(37, 99, 235, 70)  # a selected range of tokens
BOUNDARY_PEN = QPen(QColor("#c026d3"), 2.0)  # a boundary mark (a diff's cut not every pane makes)
PAINT_BUDGET_S = 0.012  # at most this long painting new lines per paint event
LINE_CACHE_BYTES = 6 << 20  # what the painted lines kept may take (each is viewport-wide)
LINE_CACHE_SCREENS = 3  # but always this many screenfuls, whatever they take

#: every view made: each turn of the event loop runs a layout slice of every one whose timer
#: (zero-interval) is active, so each gets its share of the turn's budget
_VIEWS: weakref.WeakSet[TokenView] = weakref.WeakSet()


def laying_out() -> list[TokenView]:
    """The views whose layout runs now, a slice in each turn of the event loop."""
    return [view for view in list(_VIEWS) if isValid(view) and view._timer.isActive()]


def _slice_budget() -> float:
    """One view's share of a turn's layout budget."""
    return max(LAYOUT_SLICE_S / max(len(laying_out()), 1), min(MIN_SLICE_S, LAYOUT_SLICE_S))


@dataclass(frozen=True)
class TokenStyle:
    """What a caller lays over one token's normal drawing (the chat view marks each token's origin)."""

    fill: QColor | None = None  # the background, instead of the palette's
    underline: QColor | None = None  # a bar along the cell's bottom edge


def line_heights(measurer: CellMeasurer, mode: ViewMode) -> tuple[float, float]:
    """The height of a line's cells, and the height of a line with the gap below it, in `mode`
    (the ids under the labels in "both")."""
    top = measurer.main.height() + 4
    return top, top + (measurer.small.height() if mode == "both" else 0.0) + LINE_GAP


class TokenView(QAbstractScrollArea):
    """Paints a `PaneResult`; reports hover, click and scroll in token / character terms."""

    hovered = Signal(int)  # token index, -1 when leaving tokens
    clicked = Signal(int)
    scrolled = Signal(int)  # character offset of the first visible token
    laid_out = Signal()  # every line placed

    def __init__(self, parent: QWidget | None = None, *, fonts: Fonts | None = None) -> None:
        super().__init__(parent)
        self.fonts = fonts or Fonts.default(QFont(self.font()))
        self.measurer = CellMeasurer(self.fonts)
        self.colors: TokenColors = token_colors()
        self._color_by_id = False
        self._slots: np.ndarray | None = None
        self._line_cache: OrderedDict[int, QPixmap] = OrderedDict()
        self.result: PaneResult | None = None
        self.token_layout: TokenLayout | None = None
        self.highlighted: range = range(0)
        self.selected: int | None = None
        self.selection: range = range(0)  # the selected tokens: a click, or a shift-click range
        self.limit: int | None = None  # a context limit in tokens: later tokens fade, a bar marks it
        self.boundary_marks: np.ndarray | None = None  # sorted token indices marked on their left
        self.token_styles: Sequence[TokenStyle | None] | None = None  # one per token, or None
        self._hover: int | None = None
        self._dragging = False  # a left-button press on a token, moving: selects a range
        self._active_end: int | None = None  # the end of the selection Shift+keys and drags move
        self._syncing = False  # scrolling on the view's own account: not echoed as `scrolled`
        self._line_h = 0.0
        self._top_h = 0.0
        self._keep_char: int | None = None
        self._timer = QTimer(self, interval=0)
        self._timer.timeout.connect(self._layout_slice)
        _VIEWS.add(self)
        self.viewport().setMouseTracking(True)
        self.viewport().setAutoFillBackground(True)
        self.verticalScrollBar().valueChanged.connect(self._on_scroll)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # always on: one that appears once the text is long would narrow the viewport: a re-wrap
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)

    @property
    def color_by_id(self) -> bool:
        """Colour tokens by id (neighbours differ) rather than by position."""
        return self._color_by_id

    @color_by_id.setter
    def color_by_id(self, on: bool) -> None:
        if on != self._color_by_id:
            self._color_by_id = on
            self._slots = None
            self.invalidate()

    def background(self, index: int) -> QColor:
        """The colour token `index` is drawn on (`backgrounds` of it alone)."""
        return self.backgrounds(range(index, index + 1), [self.cell(index)])[0]

    def backgrounds(self, tokens: range, cells: Sequence[Cell]) -> list[QColor]:
        """The colours `tokens` (whose cells are `cells`) are drawn on: each one's style fill, else
        the palette's. Slots by position are computed per token (no array over every token), by id
        once per result (a byte a token)."""
        n = len(self.colors.tokens)
        if not self._color_by_id:
            slots = [i % max(n, 1) for i in tokens]
        else:
            if self._slots is None:
                ids = id_slots(self.result.ids, n)  # type: ignore[union-attr]
                self._slots = ids.astype(np.uint8) if n <= 256 else ids
            slots = self._slots[tokens.start:tokens.stop].tolist()
        styles = self.token_styles[tokens.start:tokens.stop] if self.token_styles is not None else [None] * len(tokens)
        return [style.fill if style is not None and style.fill is not None else self.colors.for_slot(i, slot, c.kind)
                for i, slot, c, style in zip(tokens, slots, cells, styles)]

    # -- model ---------------------------------------------------------------------------------
    def set_result(self, result: PaneResult | None) -> None:
        """Show `result` (None: nothing), keeping the top character in view; a selection survives
        only a change of view options."""
        top_char = self.top_char()
        previous, self.result = self.result, result
        self._slots = None
        same_cut = (
            previous is not None and result is not None and previous.text == result.text
            and previous.policy == result.policy
        )
        if not same_cut:
            self.selected = None
            self.selection = range(0)
        self.token_styles = None  # they belong to the tokens they were set for
        self.highlighted = range(0)
        self._hover = None
        self.boundary_marks = None  # indices into the previous result
        self._relayout(keep_char=top_char)

    @property
    def tokens(self) -> Sequence[Token]:
        return self.result.tokens if self.result else []

    def cell(self, index: int) -> Cell:
        """The drawable content of token `index` (label, hex bytes, kind)."""
        if self.result is None:
            raise IndexError("no tokens")
        return self.result.cells[index]

    def tooltip_for(self, index: int) -> str:
        """The hover text of token `index`."""
        return token_tooltip(self.tokens[index], index, text=self.result.text if self.result else None)

    @property
    def layout_done(self) -> bool:
        """Every token of the result is placed (a result with no tokens has nothing to place)."""
        layout = self.token_layout
        return self.result is not None and (not self.result.tokens or (layout is not None and layout.done))

    # -- layout ----------------------------------------------------------------------------
    def _wrap_width(self) -> float:
        return max(self.viewport().width() - 2 * MARGIN, 40.0)

    def _relayout(self, *, keep_char: int | None = None) -> None:
        mode = self.result.options.mode if self.result is not None else "text"
        self._top_h, self._line_h = line_heights(self.measurer, mode)
        self._keep_char = keep_char
        self._line_cache.clear()
        self.token_layout = None
        if self.result is not None and self.result.tokens:
            self.token_layout = TokenLayout(self.result.widths, self.result.breaks, wrap_width=self._wrap_width())
        self._layout_slice()  # the first screenful right away
        if self.token_layout is not None and not self.token_layout.done:
            self._timer.start()

    def _layout_slice(self) -> None:
        """Place the lines of one time slice; without tokens, only say the layout is done."""
        layout = self.token_layout
        lines_before = layout.line_count if layout is not None else 0
        if layout is not None:
            layout.advance(_slice_budget())
        self._update_scrollbar()
        moved = self._keep_char is not None and self._restore_scroll()
        if moved:
            self._keep_char = None
        visible = self.visible_lines()
        if moved or not visible or lines_before <= visible.stop:  # new lines may be on screen
            self.viewport().update()
        if layout is None or layout.done:
            self._timer.stop()
            self.laid_out.emit()

    def _restore_scroll(self) -> bool:
        """Scroll to the character kept (the top one before a relayout, or one scrolled to), once
        it is placed; True when nothing is left to do."""
        index = self.token_for_char(self._keep_char or 0)
        if index is None or self.token_layout is None or index >= self.token_layout.placed():
            return bool(self.token_layout and self.token_layout.done)
        line = self.token_layout.line_of(index)
        with self._own_scroll():  # a restore is not a user's scroll
            self._set_scroll(line)
        # the line may be among the last placed ones, which cannot be scrolled to the top yet
        return self.token_layout.done or self.verticalScrollBar().value() == int(line * self._line_h)

    def _update_scrollbar(self) -> None:
        lines = self.token_layout.line_count if self.token_layout else 0
        total = int(lines * self._line_h + 2 * MARGIN)
        bar = self.verticalScrollBar()
        with self._own_scroll():  # a clamped value is not a user's scroll
            bar.setPageStep(self.viewport().height())
            bar.setSingleStep(max(int(self._line_h), 1))
            bar.setRange(0, max(total - self.viewport().height(), 0))

    @contextmanager
    def _own_scroll(self) -> Iterator[None]:
        """Scrolls inside are the view's own: not echoed as `scrolled` to the other panes."""
        syncing, self._syncing = self._syncing, True
        try:
            yield
        finally:
            self._syncing = syncing

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        if self.token_layout is not None and abs(self.token_layout.wrap_width - self._wrap_width()) > 0.5:
            self._relayout(keep_char=self.top_char())
        else:
            self._update_scrollbar()

    # -- geometry --------------------------------------------------------------------------
    def visible_lines(self) -> range:
        """The lines (partly) inside the viewport."""
        if self.token_layout is None or self._line_h <= 0:
            return range(0)
        top = self.verticalScrollBar().value()
        first = max(int((top - MARGIN) // self._line_h), 0)
        last = int((top + self.viewport().height()) // self._line_h) + 1
        return range(first, min(last, self.token_layout.line_count))

    def cell_rect(self, index: int) -> QRectF | None:
        """Where token `index` is drawn, in viewport coordinates (None until laid out)."""
        layout = self.token_layout
        if layout is None or index >= layout.placed():
            return None
        line = layout.line_of(index)
        x = MARGIN + layout.x_of(index, line)
        y = MARGIN + line * self._line_h - self.verticalScrollBar().value()
        return QRectF(x, y, float(self.result.widths[index]), self._line_h - LINE_GAP)  # type: ignore[union-attr]

    def token_at(self, pos: QPointF) -> int | None:
        """The token under viewport position `pos`, or None."""
        if self.token_layout is None:
            return None
        y = pos.y() + self.verticalScrollBar().value() - MARGIN
        line = int(y // self._line_h)
        if y < 0 or y - line * self._line_h > self._line_h - LINE_GAP:
            return None
        return self.token_layout.token_at(line, pos.x() - MARGIN)

    def token_for_char(self, char: int) -> int | None:
        """The token holding character `char` (the last one past the end), or None without tokens."""
        if self.result is None or not len(self.result.ends):
            return None
        i = int(np.searchsorted(self.result.ends, char, side="right"))
        return min(i, len(self.result.ends) - 1)

    def top_char(self) -> int | None:
        """The first character of the top visible line, or None."""
        lines = self.visible_lines()
        if self.token_layout is None or not lines:
            return None
        rng = self.token_layout.line_range(lines.start)
        return int(self.result.starts[rng.start]) if rng else None  # type: ignore[union-attr]

    # -- linked highlighting and scrolling ------------------------------------------------
    def highlight_chars(self, start: int, end: int) -> range:
        """Highlight the tokens whose spans overlap characters `[start, end)`; return them."""
        if self.result is None or start < 0:
            self.highlighted = range(0)
        else:
            self.highlighted = covering(self.result.starts, self.result.ends, start, end)
        self.viewport().update()
        return self.highlighted

    def set_token_styles(self, styles: Sequence[TokenStyle | None] | None) -> None:
        """Draw token i with `styles[i]` over its normal look (None: as usual); `set_result` clears them."""
        if styles is not None and len(styles) != len(self.tokens):
            raise ValueError(f"{len(styles)} token styles for {len(self.tokens)} tokens")
        self.token_styles = styles
        self.invalidate()

    def set_limit(self, limit: int | None) -> None:
        """Mark where a context limit of `limit` tokens falls (None: no mark)."""
        self.limit = limit
        self.viewport().update()

    def set_boundary_marks(self, before: np.ndarray | None) -> None:
        """Mark the boundary before each token index of `before` (sorted) with a bar; None clears
        them, as a new result does."""
        self.boundary_marks = None if before is None or not len(before) else np.asarray(before, dtype=np.int64)
        self.viewport().update()

    def clear_highlight(self) -> None:
        """Highlight no token."""
        self.highlighted = range(0)
        self.viewport().update()

    def select(self, index: int | None) -> None:
        """Select token `index` alone (None: nothing)."""
        self.selected = index
        self._active_end = index
        self.selection = range(0) if index is None else range(index, index + 1)
        self.viewport().update()

    def extend_selection(self, index: int) -> None:
        """Select the tokens from the selected one (the anchor) to `index`, both included."""
        if self.selected is None:
            self.select(index)
            return
        self._active_end = index
        self.selection = range(min(self.selected, index), max(self.selected, index) + 1)
        self.viewport().update()

    def select_all(self) -> None:
        """Select every token (Ctrl+A): Ctrl+C then copies them all, ids in the ids view."""
        if self.tokens:
            self.selected = 0
            self.extend_selection(len(self.tokens) - 1)

    def scroll_to_char(self, char: int) -> None:
        """Scroll so the token holding `char` is on the top line (without echoing `scrolled`), or
        as soon as the layout has placed it."""
        self._keep_char = char
        if self._restore_scroll():
            self._keep_char = None

    def ensure_visible(self, index: int) -> None:
        """Scroll token `index` into view when it is (partly) outside it."""
        rect = self.cell_rect(index)
        if rect is not None and (rect.top() < 0 or rect.bottom() > self.viewport().height()):
            self._set_scroll(max(self.token_layout.line_of(index) - 2, 0))  # type: ignore[union-attr]

    def _set_scroll(self, line: int) -> None:
        self.verticalScrollBar().setValue(int(line * self._line_h))

    def _on_scroll(self, _value: int) -> None:
        self.viewport().update()
        if self._syncing:
            return
        self._keep_char = None  # the user scrolled: forget a pending jump
        char = self.top_char()
        if char is not None:
            self.scrolled.emit(char)

    # -- mouse -----------------------------------------------------------------------------
    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._dragging and event.buttons() & Qt.MouseButton.LeftButton:
            self._drag_to(event.position())
        index = self.token_at(event.position())
        if index != self._hover:
            self._hover = index
            self.hovered.emit(-1 if index is None else index)
        if index is not None:
            QToolTip.showText(event.globalPosition().toPoint(), self.tooltip_for(index), self.viewport())
        else:
            QToolTip.hideText()

    def leaveEvent(self, event) -> None:  # noqa: N802
        if self._hover is not None:
            self._hover = None
            self.hovered.emit(-1)
        super().leaveEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        index = self.token_at(event.position())
        if index is None or event.button() != Qt.MouseButton.LeftButton:
            return
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and self.selected is not None:
            self.extend_selection(index)
        else:
            self.clicked.emit(index)
        self._dragging = True

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._dragging = False
        super().mouseReleaseEvent(event)

    def _drag_to(self, pos: QPointF) -> None:
        """A drag with the left button selects from the pressed token to the one under the
        pointer, as a drag selects text (above or below the viewport it scrolls a line)."""
        if self.token_layout is None or self.selected is None:
            return
        bar, height = self.verticalScrollBar(), self.viewport().height()
        if pos.y() < 0 or pos.y() > height:
            bar.setValue(bar.value() + (bar.singleStep() if pos.y() > height else -bar.singleStep()))
            pos = QPointF(pos.x(), min(max(pos.y(), MARGIN), height - MARGIN))
        index = self.token_at(pos)
        if index is None:  # in a gap or past a line's end: the nearest token of that line
            y = pos.y() + bar.value() - MARGIN
            line = min(max(int(y // self._line_h), 0), self.token_layout.line_count - 1) if self._line_h else 0
            tokens = self.token_layout.line_range(line) if self.token_layout.line_count else range(0)
            if not tokens:
                return
            first_x = MARGIN + self.token_layout.x_of(tokens.start, line)
            index = tokens.start if pos.x() < first_x else tokens.stop - 1
        if index != self._active_end:
            self.extend_selection(index)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        """Shift with an arrow, Home or End extends the selection (the pane moves it without
        Shift); Ctrl+A selects every token."""
        if event.matches(QKeySequence.StandardKey.SelectAll):
            self.select_all()
            return
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if mods == Qt.KeyboardModifier.ShiftModifier and self.result is not None:
            target = moved_to(event.key(), self._active_end, len(self.result.tokens), self.token_layout)
            if target is not None:
                self.extend_selection(target)
                self.ensure_visible(target)
                return
        super().keyPressEvent(event)

    # -- painting --------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        """Blit the visible lines from the line cache, then draw the marks on top."""
        painter = QPainter(self.viewport())
        painter.fillRect(self.viewport().rect(), QColor("#ffffff"))
        top = self.verticalScrollBar().value()
        deadline = time.perf_counter() + PAINT_BUDGET_S
        layout = self.token_layout
        for line in self.visible_lines() if self.result is not None and layout is not None else ():
            if not layout.done and line == layout.line_count - 1:
                break  # where the next line placed begins: nothing on it yet
            if line not in self._line_cache and time.perf_counter() > deadline:
                # finish the new lines in the next paint, so panes receiving results together
                # never freeze the window (the viewport as context: no call once it is deleted)
                viewport = self.viewport()
                QTimer.singleShot(0, viewport, viewport.update)
                break
            painter.drawPixmap(QPointF(0, MARGIN + line * self._line_h - top), self._line_pixmap(line))
            rng = layout.line_range(line)
            self._paint_marks(painter, rng, self.highlighted, HIGHLIGHT_PEN, HIGHLIGHT_FILL)
            # a range reads as selected text
            fill = SELECTION_FILL if len(self.selection) > 1 else Qt.BrushStyle.NoBrush
            self._paint_marks(painter, rng, self.selection, SELECT_PEN, fill)
            if self.limit is not None and self.limit < rng.stop:
                self._paint_limit(painter, range(max(rng.start, self.limit), rng.stop))
            if self.boundary_marks is not None:
                self._paint_boundaries(painter, rng)
        painter.end()

    def _paint_boundaries(self, painter: QPainter, rng: range) -> None:
        marks = self.boundary_marks
        lo, hi = np.searchsorted(marks, [rng.start, rng.stop])  # type: ignore[arg-type]
        painter.setPen(BOUNDARY_PEN)
        for index in marks[lo:hi].tolist():  # type: ignore[index]
            if (rect := self.cell_rect(index)) is not None:
                painter.drawLine(rect.topLeft() + QPointF(0.5, 0), rect.bottomLeft() + QPointF(0.5, 0))

    def _paint_limit(self, painter: QPainter, past: range) -> None:
        """Fade the tokens past the limit; a red bar before the first of them."""
        painter.setPen(Qt.PenStyle.NoPen)
        for index in past:
            if (rect := self.cell_rect(index)) is not None:
                painter.fillRect(rect, PAST_LIMIT_FILL)
        if self.limit is not None and self.limit in past and (rect := self.cell_rect(self.limit)) is not None:
            painter.setPen(LIMIT_PEN)
            painter.drawLine(rect.topLeft(), rect.bottomLeft())

    def _paint_marks(self, painter: QPainter, rng: range, marked: range, pen: QPen, brush) -> None:
        """A box around each token of `marked` on the line of tokens `rng`."""
        painter.setPen(pen)
        painter.setBrush(brush)
        for index in range(max(rng.start, marked.start), min(rng.stop, marked.stop)):
            if (rect := self.cell_rect(index)) is not None:
                painter.drawRect(rect.adjusted(1, 1, -1, -1))

    def _line_pixmap(self, line: int) -> QPixmap:
        """One line's cells, painted once and cached: repaints for hover, marks, scrolling and
        layout progress only blit (painting a cell takes long in Python)."""
        cache = self._line_cache
        pixmap = cache.get(line)
        if pixmap is not None:
            cache.move_to_end(line)
            return pixmap
        ratio = self.devicePixelRatioF()
        width, height = self.viewport().width(), self._line_h - LINE_GAP
        pixmap = QPixmap(max(int(width * ratio), 1), max(int(height * ratio), 1))
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(QColor("#ffffff"))
        rng = self.token_layout.line_range(line)  # type: ignore[union-attr]
        if rng:
            painter = QPainter(pixmap)
            paint_cells(painter, self._line_shapes(line, rng), self.measurer)
            painter.end()
        cache[line] = pixmap
        keep = max(LINE_CACHE_BYTES // max(pixmap.width() * pixmap.height() * 4, 1),
                   LINE_CACHE_SCREENS * (len(self.visible_lines()) + 1))
        while len(cache) > keep:
            cache.popitem(last=False)
        return pixmap

    def _line_shapes(self, line: int, rng: range) -> list[CellShapes]:
        """The cells of `line` (tokens `rng`), as the renderer draws them."""
        result, layout, styles = self.result, self.token_layout, self.token_styles
        underlines = None
        if styles is not None:
            underlines = [s.underline if s is not None else None for s in styles[rng.start:rng.stop]]
        cells = result.cells[rng.start:rng.stop]  # type: ignore[union-attr]
        return line_cells(cells, (layout.line_xs(line) + MARGIN).tolist(),  # type: ignore[union-attr]
                          result.widths[rng.start:rng.stop].tolist(),  # type: ignore[union-attr]
                          self.backgrounds(rng, cells), self.measurer, self._top_h, underlines=underlines)

    def invalidate(self) -> None:
        """Forget the painted lines (new tokens, layout, colours or fonts)."""
        self._line_cache.clear()
        self.viewport().update()

    def is_fragment_styled(self, index: int) -> bool:
        """True when token `index` is drawn as a fragment: dashed box and hex bytes."""
        cell = self.cell(index)
        return bool(cell.hex) and cell.kind in HEX_KINDS
