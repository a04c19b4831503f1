"""Per-pane statistics and the small bar chart that compares panes."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget


@dataclass(frozen=True)
class PaneStats:
    tokens: int
    chars: int
    bytes: int

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0

    @property
    def tokens_per_100_chars(self) -> float:
        return 100.0 * self.tokens / self.chars if self.chars else 0.0

    def summary(self, first: PaneStats | None = None) -> str:
        """Two lines for the pane footer (`first`: the first pane's stats, None for the first pane).

        >>> print(PaneStats(10, 40, 50).summary(PaneStats(8, 40, 50)))
        10 tokens · +2 (+25.0%) vs first
        4.00 chars/tok · 5.00 bytes/tok · 25.0 tok/100 chars
        """
        head = f"{self.tokens:,} tokens"
        head += f" · {difference(self.tokens, first.tokens)} vs first" if first is not None else " · first pane"
        return (
            f"{head}\n{self.chars_per_token:.2f} chars/tok · {self.bytes_per_token:.2f} bytes/tok · "
            f"{self.tokens_per_100_chars:.1f} tok/100 chars"
        )


def difference(count: int, reference: int) -> str:
    """Say how `count` differs from `reference`.

    >>> difference(12, 10), difference(10, 10), difference(5, 0)
    ('+2 (+20.0%)', '±0 (0.0%)', '+5')
    """
    delta = count - reference
    sign = "+" if delta > 0 else ("±" if delta == 0 else "")
    if reference == 0:
        return f"{sign}{delta}"
    return f"{sign}{delta} ({100.0 * delta / reference:+.1f}%)".replace("(+0.0%)", "(0.0%)")


BAR_COLOR = QColor("#8ec5ff")
TEXT_COLOR = QColor("#1f2937")


class TokenBarChart(QWidget):
    """Horizontal bars: token count per pane, so the cheapest tokenizer is plain to see."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, int | None]] = []
        # a fixed size: a chart that grows with its rows would resize the editor beside it, and
        # re-wrapping a 1 MB document in the editor is a stall of its own
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Ignored)
        self.setFixedWidth(300)

    def set_rows(self, rows: list[tuple[str, int | None]]) -> None:
        self.rows = rows
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(260, 8 + 18 * max(len(self.rows), 1))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        fm = painter.fontMetrics()
        label_w = max((fm.horizontalAdvance(name) for name, _ in self.rows), default=0) + 8
        top = max((c for _, c in self.rows if c), default=0)
        row_h = min(18.0, (self.height() - 4) / max(len(self.rows), 1))
        for i, (name, count) in enumerate(self.rows):
            y = 2 + i * row_h
            painter.setPen(TEXT_COLOR)
            painter.drawText(QRectF(2, y, label_w, row_h), Qt.AlignmentFlag.AlignVCenter, name)
            if count is None:
                continue
            span = self.width() - label_w - 70
            w = span * count / top if top else 0
            painter.fillRect(QRectF(label_w, y + 3, max(w, 1), row_h - 6), BAR_COLOR)
            painter.drawText(
                QRectF(label_w + w + 4, y, 66, row_h), Qt.AlignmentFlag.AlignVCenter, f"{count:,}"
            )
        painter.end()
