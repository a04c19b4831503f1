"""The input editor: a plain-text editor whose text is exactly the text pasted, typed or opened.

QPlainTextEdit rewrites text on the way in and out: `setPlainText` and a paste turn CRLF and a lone
CR into paragraph breaks and drop a leading BOM, `toPlainText` turns NBSP into a space and U+2028
into LF, and U+FDD0/U+FDD1 become breaks too. A tokenizer must see none of that. So the document
holds a *coded* text, one UTF-16 unit for each unit of the raw text: LF is Qt's paragraph break,
and each character Qt cannot hold as itself (CR, U+2029, U+FEFF, U+FDD0, U+FDD1) is a stand-in
noncharacter the raw text does not contain (`RawCodec`). Positions in the editor are then
positions in the raw text, undo and redo keep every character, and `raw_text()` gives back the
exact text: CRLF comes back as CRLF. Pastes, drops and copies go through the same codec, and the
characters one cannot see (CR, NBSP, BOM, the separators) get a small mark drawn over them.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QMimeData, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QTextCursor,
)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

#: characters a QTextDocument cannot hold as themselves (each would become a paragraph break, or
#: vanish at the start), in the order of their stand-ins
HELD_BY_STAND_IN = "\r\u2029\ufeff\ufdd0\ufdd1"
#: where stand-ins come from: noncharacters (for a program's internal use), then private use
STAND_IN_POOL = [chr(c) for c in range(0xFDD2, 0xFDF0)] + [chr(c) for c in range(0xE000, 0xF900)]
RAW_MIME = "application/x-tokviz-text"  # the exact text, for copies within tokviz
PARAGRAPH = "\u2029"  # how QTextDocument.toRawText() and selectedText() spell a block break

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
        first = cls("".join(STAND_IN_POOL[: len(HELD_BY_STAND_IN)]))
        if first.fits(text):
            return first
        used = set(text)
        free = [c for c in STAND_IN_POOL if c not in used]
        if len(free) < len(HELD_BY_STAND_IN):  # 6,430 distinct noncharacters and private-use ones
            raise ValueError("the text uses every private-use character: the editor cannot hold it exactly")
        return cls("".join(free[: len(HELD_BY_STAND_IN)]))

    def fits(self, text: str) -> bool:
        """True when `text` holds none of this codec's stand-ins."""
        return not any(s in text for s in self.stand_ins)

    def encode(self, raw: str) -> str:
        """The text to put into the document (LF stays LF: Qt makes it a paragraph break)."""
        for char, stand_in in zip(HELD_BY_STAND_IN, self.stand_ins, strict=True):
            if char in raw:
                raw = raw.replace(char, stand_in)
        return raw

    def decode(self, held: str) -> str:
        """The raw text for the document's own (`toRawText`, `selectedText`) text."""
        held = held.replace(PARAGRAPH, "\n")
        for char, stand_in in zip(HELD_BY_STAND_IN, self.stand_ins, strict=True):
            if stand_in in held:
                held = held.replace(stand_in, char)
        return held

    def raw_char(self, held: str) -> str:
        """The raw character a document character stands for."""
        i = self.stand_ins.find(held)
        return HELD_BY_STAND_IN[i] if i >= 0 else held


class InputEditor(QPlainTextEdit):
    """The input; `raw_text()` is exactly what was pasted, typed or given to `set_raw_text`."""

    file_dropped = Signal(str)
    hovered = Signal(int)  # UTF-16 position under the mouse, -1 when it leaves the text

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

    # -- the raw text ------------------------------------------------------------------------
    def raw_text(self) -> str:
        """The exact text (CRLF, CR, NBSP, U+2028/2029 and a leading BOM as they were given)."""
        if self._raw is None:
            self._raw = self.codec.decode(self.document().toRawText())
        return self._raw

    def set_raw_text(self, text: str) -> None:
        """Replace the whole text (like setPlainText, which would rewrite it)."""
        self.codec = RawCodec.for_text(text)
        self.setPlainText(self.codec.encode(text))
        self._raw = text

    def raw_char_at(self, position: int) -> str:
        """The raw character at UTF-16 position `position` ('' past the end)."""
        if not 0 <= position < self.document().characterCount() - 1:
            return ""
        held = self.document().characterAt(position)
        return "\n" if held == PARAGRAPH else self.codec.raw_char(held)

    def _forget_raw(self) -> None:
        self._raw = None

    def insert_raw(self, text: str) -> None:
        """Insert `text` at the cursor, replacing the selection, exactly (what a paste does)."""
        if not self.codec.fits(text):  # it holds a stand-in: choose new ones for the whole text
            cursor = self.textCursor()
            start, end = cursor.selectionStart(), cursor.selectionEnd()
            raw = self.raw_text()
            self.set_raw_text(raw[:_chars(raw, start)] + text + raw[_chars(raw, end):])
            cursor = self.textCursor()
            cursor.setPosition(start + len(text.encode("utf-16-le", "surrogatepass")) // 2)
            self.setTextCursor(cursor)
            return
        self.textCursor().insertText(self.codec.encode(text))

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
                base = block.position()
                for i, held in enumerate(text):
                    mark = MARKS.get(self.codec.raw_char(held))
                    if mark is not None:
                        marks.append((base + i, mark[0]))
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
        fm = painter.fontMetrics()
        base = self.viewport().palette().base()
        for position, mark in marks:
            if not fm.inFontUcs4(ord(mark[0])):  # the font lacks the symbol: its ASCII name
                mark = ASCII_MARKS.get(mark, "?")
            cursor = QTextCursor(self.document())
            cursor.setPosition(position)
            left = self.cursorRect(cursor)
            cursor.setPosition(position + 1)
            right = self.cursorRect(cursor)
            width = right.left() - left.left() if right.top() == left.top() else 0
            at_line_end = self.raw_char_at(position + 1) in ("\n", "")
            if mark in ("⍽", "_"):  # a no-break space: a bracket under its own width
                y = left.bottom() - 3
                painter.setPen(MARK_COLOR)
                painter.drawPolyline([QPointF(left.left() + 0.5, y - 3), QPointF(left.left() + 0.5, y),
                                      QPointF(left.left() + max(width, 3) - 0.5, y),
                                      QPointF(left.left() + max(width, 3) - 0.5, y - 3)])
                continue
            # at a line's end a mark may be wider than its character; inside a line it must not
            # cover the next one
            shown = max(width, fm.horizontalAdvance(mark)) if at_line_end else max(width, 2)
            rect = QRectF(left.left(), left.top(), shown, left.height())
            painter.fillRect(rect, base)  # hide the stand-in's own glyph (a box in most fonts)
            painter.fillRect(rect, MARK_BACKGROUND)
            painter.setPen(MARK_COLOR)
            if at_line_end or fm.horizontalAdvance(mark) <= shown:
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, mark)
        painter.end()


def _chars(text: str, unit: int) -> int:
    """The code point offset of UTF-16 offset `unit` in `text`."""
    if text.isascii():
        return unit
    return len(text.encode("utf-16-le", "surrogatepass")[: 2 * unit].decode("utf-16-le", "surrogatepass"))
