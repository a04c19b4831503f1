"""The input editor: a plain-text editor whose text is exactly the text pasted, typed or opened.

QPlainTextEdit rewrites text on the way in and out (CR and CRLF become paragraph breaks, a leading
BOM vanishes, NBSP becomes a space, U+2028 a break); a tokenizer must see none of that. So the
document holds a *coded* text, one UTF-16 unit for each unit of the raw text: LF is Qt's paragraph
break, and each character Qt cannot hold as itself is a stand-in the raw text lacks (`RawCodec`).
Editor positions are then raw-text positions, undo keeps every character and `raw_text()` is
exact. Pastes, drops and copies use the same codec; invisible characters get a mark drawn over them.

A large text goes in by slices, one per event-loop turn, so that no single insert holds the GUI
thread for long (bench/bench_paste.py). Meanwhile the editor is read-only, `raw_text()` is already
the whole new text, a paste's slices are one undo step, and `textChanged` comes once, at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cached_property

from PySide6.QtCore import QByteArray, QMimeData, QPointF, QRectF, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

#: characters a QTextDocument cannot hold as themselves (each would become a paragraph break, or
#: vanish at the start), in the order of their stand-ins
HELD_BY_STAND_IN = "\r\u2029\ufeff\ufdd0\ufdd1"
#: where stand-ins come from: noncharacters (for a program's internal use), then private use
STAND_IN_POOL = [chr(c) for c in range(0xFDD2, 0xFDF0)] + [chr(c) for c in range(0xE000, 0xF900)]
RAW_MIME = "application/x-tokviz-text"  # the exact text, for copies within tokviz
PARAGRAPH = "\u2029"  # how QTextDocument.toRawText() and selectedText() spell a block break
UTF16 = "utf-16-le"

#: marks drawn over characters one cannot see (raw character -> mark, name)
MARKS = {
    "\r": ("␍", "CARRIAGE RETURN (CR)"),
    "\u2029": ("¶", "PARAGRAPH SEPARATOR"),
    "\ufeff": ("B", "BYTE ORDER MARK / ZERO WIDTH NO-BREAK SPACE"),
    "\ufdd0": ("◇", "NONCHARACTER U+FDD0"),
    "\ufdd1": ("◇", "NONCHARACTER U+FDD1"),
    "\u00a0": ("⍽", "NO-BREAK SPACE"),
    "\u202f": ("⍽", "NARROW NO-BREAK SPACE"),
    "\u2028": ("↵", "LINE SEPARATOR"),
    "\u200b": ("|", "ZERO WIDTH SPACE"),
    "\u2060": ("|", "WORD JOINER"),
}
ASCII_MARKS = {"␍": "CR", "¶": "PS", "⍽": "_", "↵": "LS", "◇": "NC"}
MARK_COLOR = QColor("#c2410c")
MARK_BACKGROUND = QColor(194, 65, 12, 40)
#: characters inserted per event-loop turn when a text is larger: a slice whose insertText stays
#: within a frame or two on a loaded machine (bench/bench_paste.py)
FILL_SLICE = 64_000


@dataclass(frozen=True)
class RawCodec:
    """Raw text <-> the editor document's text, one UTF-16 unit for one.

    >>> codec = RawCodec.for_text("ok\\r\\n")
    >>> doc = codec.encode("ok\\r\\n"); len(doc), doc.endswith("\\n"), "\\r" in doc
    (4, True, False)
    >>> codec.decode(doc.replace("\\n", PARAGRAPH))
    'ok\\r\\n'
    """

    stand_ins: str  # one per HELD_BY_STAND_IN character

    @classmethod
    def for_text(cls, text: str) -> RawCodec:
        """A codec whose stand-ins do not occur in `text`."""
        n = len(HELD_BY_STAND_IN)
        first = cls("".join(STAND_IN_POOL[:n]))
        if first.fits(text):  # the usual case: no set of a large text's characters
            return first
        used = set(text)
        free = [c for c in STAND_IN_POOL if c not in used]
        if len(free) < n:
            raise ValueError("the text uses every private-use character: the editor cannot hold it exactly")
        return cls("".join(free[:n]))

    def fits(self, text: str) -> bool:
        """True when `text` holds none of this codec's stand-ins."""
        return not any(s in text for s in self.stand_ins)

    def encode(self, raw: str) -> str:
        """The text to put into the document (LF stays LF: Qt makes it a paragraph break)."""
        for char, stand_in in zip(HELD_BY_STAND_IN, self.stand_ins, strict=True):
            raw = raw.replace(char, stand_in)
        return raw

    def decode(self, held: str) -> str:
        """The raw text for the document's own (`toRawText`, `selectedText`) text."""
        held = held.replace(PARAGRAPH, "\n")
        for char, stand_in in zip(HELD_BY_STAND_IN, self.stand_ins, strict=True):
            held = held.replace(stand_in, char)
        return held

    def raw_char(self, held: str) -> str:
        """The raw character a document character stands for."""
        i = self.stand_ins.find(held)
        return HELD_BY_STAND_IN[i] if i >= 0 else held


@dataclass
class _Fill:
    """A large insert under way: the raw text still to go in, and what the editor will hold."""

    cursor: QTextCursor  # where the slices go (the first one replaces the selection)
    text: str  # the raw text of the insert, coded slice by slice as it goes in
    before: str  # the raw text before and after the insert
    after: str
    undoable: bool  # a paste (one undo step) or a set_raw_text (no undo, like setPlainText)
    notify: bool  # emit textChanged at the end (False when signals were blocked at the start)
    cursor_at: int | None = None  # UTF-16 position of the text cursor at the end (None: after it)
    was_read_only: bool = False  # the editor's state before the fill
    was_centered: bool = False
    start: int = 0  # UTF-16 position of the insert
    done: int = 0  # characters of `text` inserted

    @cached_property
    def raw(self) -> str:
        """The editor's whole text once the insert is in (joined when first asked for)."""
        return self.before + self.text + self.after


class InputEditor(QPlainTextEdit):
    """The input; `raw_text()` is exactly what was pasted, typed or given to `set_raw_text`."""

    file_dropped = Signal(str)
    hovered = Signal(int)  # UTF-16 position under the mouse, -1 when it leaves the text
    filled = Signal()  # a large text is now wholly in the document (see `filling`)
    #: a large insert that will end in `textChanged` (a paste, a drop) begins to go in: `raw_text()`
    #: is already the whole new text, for whoever need not wait for the slices
    fill_started = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.codec = RawCodec.for_text("")
        self._raw: str | None = ""  # the raw text, until the document changes
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        font = QFont(self.font())
        font.setStyleHint(QFont.StyleHint.TypeWriter)
        self.setFont(font)
        self.viewport().setMouseTracking(True)
        self.document().contentsChanged.connect(self._forget_raw)
        self._fill: _Fill | None = None
        self._fill_timer = QTimer(self, singleShot=True, interval=0, timeout=self._fill_step)
        self._marks: dict[str, list[QTextEdit.ExtraSelection]] = {}

    # -- marks over spans of the text --------------------------------------------------------
    def span_cursor(self, start: int, end: int) -> QTextCursor:
        """A cursor selecting UTF-16 positions `[start, end)`."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def set_marks(self, layer: str, spans: Iterable[tuple[int, int]], fmt: QTextCharFormat) -> None:
        """Draw `fmt` over each UTF-16 span of `spans` as the marks of `layer` (the diff's
        underlines, the hovered token's characters): each layer replaces only its own marks."""
        marks = []
        for start, end in spans:
            mark = QTextEdit.ExtraSelection()
            mark.format = fmt
            mark.cursor = self.span_cursor(start, end)
            marks.append(mark)
        self._marks[layer] = marks
        self.setExtraSelections([mark for layer_marks in self._marks.values() for mark in layer_marks])

    # -- the raw text ------------------------------------------------------------------------
    def raw_text(self) -> str:
        """The exact text (CRLF, CR, NBSP, U+2028/2029 and a leading BOM as they were given);
        while a large text goes in (`filling`), already the whole new text."""
        if self._fill is not None:
            return self._fill.raw
        if self._raw is None:
            self._raw = self.codec.decode(self.document().toRawText())
        return self._raw

    @property
    def filling(self) -> bool:
        """True while a large text goes into the document by slices (the editor is read-only)."""
        return self._fill is not None

    def set_raw_text(self, text: str) -> None:
        """Replace the whole text (like setPlainText, which would rewrite it); a large text goes
        in by slices over the next event-loop turns (`filling`, then `filled`)."""
        self._stop_fill()  # its text is replaced anyway
        if len(text) > FILL_SLICE:  # the first codec, its stand-ins looked for slice by slice
            self._fill_whole(text, RawCodec.for_text(""), cursor_at=0, notify=not self.signalsBlocked())
            return
        self.codec = RawCodec.for_text(text)
        self.setPlainText(self.codec.encode(text))
        self._raw = text

    def _fill_whole(self, text: str, codec: RawCodec, *, cursor_at: int, notify: bool) -> None:
        self.codec = codec
        blocked = self.blockSignals(not notify)
        try:
            self.setPlainText("")  # clears the undo stack, as setPlainText does
        finally:
            self.blockSignals(blocked)
        self.document().setUndoRedoEnabled(False)  # re-enabled when the fill ends
        self._start_fill(_Fill(QTextCursor(self.document()), text, "", "", undoable=False, notify=notify,
                               cursor_at=cursor_at))

    def raw_char_at(self, position: int) -> str:
        """The raw character at UTF-16 position `position` ('' past the end)."""
        if not 0 <= position < self.document().characterCount() - 1:
            return ""
        held = self.document().characterAt(position)
        return "\n" if held == PARAGRAPH else self.codec.raw_char(held)

    def _forget_raw(self) -> None:
        if self._fill is None:  # a fill knows its text; its slices change the document
            self._raw = None

    def insert_raw(self, text: str) -> None:
        """Insert `text` at the cursor, replacing the selection, exactly (what a paste does); a
        large text goes in by slices over the next event-loop turns, as one undo step."""
        self._finish_fill()  # an insert under way goes in whole first: this one lands after it
        cursor = self.textCursor()
        if len(text) <= FILL_SLICE and self.codec.fits(text):
            cursor.insertText(self.codec.encode(text))
            return
        start = cursor.selectionStart()
        before, after = _around(self.raw_text(), start, cursor.selectionEnd())
        if len(text) > FILL_SLICE:  # each slice is looked at for stand-ins as it goes in
            self._start_fill(_Fill(cursor, text, before, after, undoable=True, notify=not self.signalsBlocked(),
                                   start=start))
            return
        self.set_raw_text(before + text + after)  # it holds a stand-in: new ones for the whole text
        if self._fill is not None:  # the whole text is large: the cursor goes there at the end
            self._fill.cursor_at = start + _units(text)
        else:
            cursor = self.textCursor()
            cursor.setPosition(start + _units(text))
            self.setTextCursor(cursor)

    # -- large texts: slices over event-loop turns --------------------------------------------
    def _start_fill(self, fill: _Fill) -> None:
        self._fill = fill
        fill.was_read_only = self.isReadOnly()
        self.setReadOnly(True)
        # QPlainTextEdit lays out the document's last screenful after every change to find its
        # scroll range, unless it centers on scroll: each slice's end would be shaped (its CJK and
        # emoji font pages kept for the window's life) for nobody. The range is found at the end.
        fill.was_centered = self.centerOnScroll()
        self.setCenterOnScroll(True)
        self._fill_timer.start()
        if fill.notify:
            self.fill_started.emit()

    def _fill_step(self) -> None:
        """Insert the next slice (a paste's slices join its first slice's undo step)."""
        fill = self._fill
        if fill is None:
            return
        piece = fill.text[fill.done : fill.done + FILL_SLICE]
        if not self.codec.fits(piece):  # the text holds a stand-in: new ones for the whole text
            self._stop_fill()
            at = fill.start + _units(fill.text) if fill.cursor_at is None else fill.cursor_at
            self._fill_whole(fill.raw, RawCodec.for_text(fill.raw), cursor_at=at, notify=fill.notify)
            return
        with QSignalBlocker(self):  # textChanged once, at the end
            if fill.done == 0 or not fill.undoable:
                fill.cursor.beginEditBlock()
            else:
                fill.cursor.joinPreviousEditBlock()
            fill.cursor.insertText(self.codec.encode(piece))
            fill.cursor.endEditBlock()
            if fill.done == 0 and not fill.undoable:
                # keep the editor's own cursor at the start: moved to each slice's end, it had the
                # last lines laid out for the input method (glyphs and font pages nobody sees)
                self.setTextCursor(QTextCursor(self.document()))
        fill.done += len(piece)
        if fill.done < len(fill.text):
            self._fill_timer.start()
        else:
            self._end_fill(fill)

    def _end_fill(self, fill: _Fill) -> None:
        self._stop_fill()
        self._raw = fill.raw
        cursor = QTextCursor(fill.cursor)
        if fill.cursor_at is not None:
            cursor.setPosition(fill.cursor_at)
        # after the inserted text, as a paste leaves it; quietly when the fill began with signals
        # blocked (the window's set_text: its cursor moves are not the user's selection)
        with nullcontext() if fill.notify else QSignalBlocker(self):
            self.setTextCursor(cursor)
        if fill.notify:
            self.textChanged.emit()
        self.filled.emit()

    def _finish_fill(self) -> None:
        """Put the rest of a fill under way in now."""
        while self._fill is not None:
            self._fill_step()

    def _stop_fill(self) -> None:
        """End a fill under way where it stands (its text is replaced, or all in)."""
        fill, self._fill = self._fill, None
        if fill is None:
            return
        self._fill_timer.stop()
        if not fill.undoable:
            self.document().setUndoRedoEnabled(True)
        self.setReadOnly(fill.was_read_only)
        self.setCenterOnScroll(fill.was_centered)

    # -- clipboard and drops: the same codec ------------------------------------------------------
    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802
        if source.hasFormat(RAW_MIME):  # copied here: exact (plain text drops a leading BOM)
            self.insert_raw(bytes(source.data(RAW_MIME).data()).decode("utf-8", "surrogatepass"))
        elif source.hasText():
            self.insert_raw(source.text())
        else:
            super().insertFromMimeData(source)

    def createMimeDataFromSelection(self) -> QMimeData:  # noqa: N802
        raw = self.codec.decode(self.textCursor().selectedText())
        data = QMimeData()
        data.setText(raw)
        data.setData(RAW_MIME, QByteArray(raw.encode("utf-8", "surrogatepass")))
        return data

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            event.acceptProposedAction()
            self.file_dropped.emit(urls[0].toLocalFile())
        else:
            super().dropEvent(event)

    # -- hover and the marks of invisible characters ----------------------------------------------
    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        super().mouseMoveEvent(event)
        cursor = self.cursorForPosition(event.position().toPoint())
        rect = self.cursorRect(cursor)
        near = abs(rect.center().y() - event.position().y()) <= rect.height()
        position = cursor.position() if near and not self.document().isEmpty() else -1
        self.hovered.emit(position)
        mark = MARKS.get(self.raw_char_at(position)) if position >= 0 else None
        if mark is not None:
            QToolTip.showText(event.globalPosition().toPoint(), mark[1], self.viewport())

    def leaveEvent(self, event) -> None:  # noqa: N802
        self.hovered.emit(-1)
        super().leaveEvent(event)

    def marks_in_view(self) -> list[tuple[int, str]]:
        """(UTF-16 position, mark) of each invisible character in the visible blocks."""
        marks = []
        block = self.firstVisibleBlock()
        bottom = self.viewport().height()
        offset = self.contentOffset()
        while block.isValid() and self.blockBoundingGeometry(block).translated(offset).top() <= bottom:
            text = block.text()
            if not text.isascii() or "\r" in text:
                for i, held in enumerate(text):
                    if (mark := MARKS.get(self.codec.raw_char(held))) is not None:
                        marks.append((block.position() + i, mark[0]))
            block = block.next()
        return marks

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        super().paintEvent(event)
        marks = self.marks_in_view()
        if not marks:
            return
        painter = QPainter(self.viewport())
        small = QFont(self.font())
        small.setPointSizeF(max(self.font().pointSizeF() * 0.8, 6.0))
        painter.setFont(small)
        painter.setPen(MARK_COLOR)
        fm = painter.fontMetrics()
        base = self.viewport().palette().base()
        cursor = QTextCursor(self.document())
        for position, mark in marks:
            if not fm.inFontUcs4(ord(mark[0])):  # the font lacks the symbol: its ASCII name
                mark = ASCII_MARKS.get(mark, "?")
            cursor.setPosition(position)
            left = self.cursorRect(cursor)
            cursor.setPosition(position + 1)
            right = self.cursorRect(cursor)
            width = right.left() - left.left() if right.top() == left.top() else 0
            if mark in ("⍽", "_"):  # a no-break space: a bracket under its own width
                x0, x1 = left.left() + 0.5, left.left() + max(width, 3) - 0.5
                y = left.bottom() - 3
                painter.drawPolyline([QPointF(x0, y - 3), QPointF(x0, y), QPointF(x1, y), QPointF(x1, y - 3)])
                continue
            # at a line's end a mark may be wider than its character; inside a line it must not
            # cover the next one
            at_line_end = self.raw_char_at(position + 1) in ("\n", "")
            shown = max(width, fm.horizontalAdvance(mark)) if at_line_end else max(width, 2)
            rect = QRectF(left.left(), left.top(), shown, left.height())
            painter.fillRect(rect, base)  # hide the stand-in's own glyph (a box in most fonts)
            painter.fillRect(rect, MARK_BACKGROUND)
            if at_line_end or fm.horizontalAdvance(mark) <= shown:
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, mark)
        painter.end()


def _units(text: str) -> int:
    """The length of `text` in UTF-16 units (the document's positions)."""
    return len(text.encode(UTF16, "surrogatepass")) // 2


def _around(raw: str, start: int, end: int) -> tuple[str, str]:
    """The raw text before UTF-16 offset `start` and after UTF-16 offset `end`."""
    if raw.isascii():
        return raw[:start], raw[end:]
    units = raw.encode(UTF16, "surrogatepass")
    return units[: 2 * start].decode(UTF16, "surrogatepass"), units[2 * end :].decode(UTF16, "surrogatepass")
