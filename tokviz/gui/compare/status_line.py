"""The status bar's message, readable on a small screen.

QStatusBar draws its message on one line and cuts it at its right edge: at 1024x700 the counts of
four panes were cut at the third, and a "differs from … in N tokens" note never showed. This label
shows the same message (it follows the bar's `messageChanged`, so `showMessage` and
`currentMessage` work as before), broken at its " · " separators onto at most `MAX_LINES` lines;
what still does not fit is elided, and the whole message is the tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MAX_LINES = 2
SEPARATOR = " · "


def wrap_message(message: str, width: float, advance, *, max_lines: int = MAX_LINES) -> tuple[list[str], bool]:
    """`message` broken at its separators into lines of at most `width` (as measured by `advance`),
    at most `max_lines` of them; and whether anything had to be elided.

    >>> wrap_message("a · bb · ccc", 6, len)
    (['a · bb', 'ccc'], False)
    >>> wrap_message("a · bb · ccc · dddd", 6, len, max_lines=2)
    (['a · bb', 'ccc…'], True)
    """
    if not message:
        return [""], False
    lines: list[str] = []
    current = ""
    for part in message.split(SEPARATOR):
        joined = current + SEPARATOR + part if current else part
        if current and advance(joined) > width:
            lines.append(current)
            current = part
        else:
            current = joined
    lines.append(current)
    elided = len(lines) > max_lines
    if elided:
        lines = lines[:max_lines - 1] + [SEPARATOR.join(lines[max_lines - 1:])]
    shown = []
    for line in lines:
        if advance(line) > width:
            elided = True
            while line and advance(line + "…") > width:
                line = line[:-1]
            line = line.rstrip(" ·") + "…"
        shown.append(line)
    return shown, elided


class StatusLine(QLabel):
    """The status message on up to two lines; its height is what the longest message since the
    last resize needed, so the panes above do not jump with every message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._message = ""
        self._lines: list[str] = [""]
        self._rows = 1  # the lines the bar is tall enough for: it grows, and shrinks only on a resize
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(1)
        self._relayout()

    def message(self) -> str:
        """The whole message, however it is shown."""
        return self._message

    def lines(self) -> list[str]:
        """The lines shown."""
        return list(self._lines)

    def set_message(self, message: str) -> None:
        self._message = message
        self._relayout()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._rows = 1
            self._relayout()

    def _relayout(self) -> None:
        metrics = QFontMetricsF(self.font())
        width = max(self.contentsRect().width() - 2, 1)
        self._lines, elided = wrap_message(self._message, width, metrics.horizontalAdvance)
        super().setText("\n".join(self._lines))
        self.setToolTip(self._message if elided or len(self._lines) > 1 else "")
        # a message of two lines after one of one would shrink every pane by a line and grow it
        # back when the message times out: the bar keeps the height it once needed
        self._rows = max(self._rows, len(self._lines))
        height = int(self._rows * metrics.lineSpacing() + 4)
        if self.height() != height or self.minimumHeight() != height:
            self.setFixedHeight(height)
