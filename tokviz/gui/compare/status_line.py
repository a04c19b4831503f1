"""The status bar's message, readable on a small screen.

QStatusBar draws its message on one line, cut at its right edge. This label shows the same message
(it follows the bar's `messageChanged`, so `showMessage` and `currentMessage` work as before),
broken at its " · " separators onto at most `MAX_LINES` lines; what still does not fit is elided,
and the whole message is the tooltip.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MAX_LINES = 2
SEPARATOR = " · "


def wrap_message(message: str, width: float, advance: Callable[[str], float], *,
                 max_lines: int = MAX_LINES) -> tuple[list[str], bool]:
    """`message` broken at its separators into lines of at most `width` (as measured by `advance`),
    at most `max_lines` of them; and whether anything had to be elided.

    >>> wrap_message("a · bb · ccc", 6, len)
    (['a · bb', 'ccc'], False)
    >>> wrap_message("a · bb · ccc · dddd", 6, len, max_lines=2)
    (['a · bb', 'ccc…'], True)
    """
    lines = [""]
    for part in message.split(SEPARATOR):
        joined = lines[-1] + SEPARATOR + part if lines[-1] else part
        if lines[-1] and advance(joined) > width:
            lines.append(part)
        else:
            lines[-1] = joined
    elided = len(lines) > max_lines
    if elided:
        lines[max_lines - 1:] = [SEPARATOR.join(lines[max_lines - 1:])]
    for i, line in enumerate(lines):
        if advance(line) > width:
            elided = True
            while line and advance(line + "…") > width:
                line = line[:-1]
            lines[i] = line.rstrip(" ·") + "…"
    return lines, elided


class StatusLine(QLabel):
    """The status message on up to two lines; its height is what the longest message since the
    last resize needed, so the panes above do not jump with every message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, textFormat=Qt.TextFormat.PlainText, minimumWidth=1)
        self._message = ""
        self._lines: list[str] = [""]
        self._rows = 1  # the lines the bar is tall enough for: it grows, and shrinks only on a resize
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
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
        self._lines, elided = wrap_message(self._message, max(self.contentsRect().width() - 2, 1),
                                           metrics.horizontalAdvance)
        super().setText("\n".join(self._lines))
        self.setToolTip(self._message if elided or len(self._lines) > 1 else "")
        self._rows = max(self._rows, len(self._lines))
        height = int(self._rows * metrics.lineSpacing() + 4)
        if self.height() != height or self.minimumHeight() != height:
            self.setFixedHeight(height)
