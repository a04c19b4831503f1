"""The CLI's one progress line on stderr (folders read by `stats`, the phases of `train`).

On a terminal the line is redrawn in place (at most every 50 ms, always for the last step);
elsewhere a plain line is written on each new phase and every `log_every` seconds (or never, for a
bar that only makes sense live). Callers build the text; `gauge` draws the bar part.
"""

from __future__ import annotations

import time
from typing import TextIO

_REDRAW = 0.05  # seconds between redraws on a terminal


class ProgressBar:
    """`show(line)` draws one progress line; `close()` ends it (erased, or kept with `keep=True`)."""

    def __init__(self, stream: TextIO, *, width: int = 24, log_every: float | None = 5.0) -> None:
        self.stream, self.width, self.log_every = stream, width, log_every
        self.tty = stream.isatty()
        self.phase: str | None = None
        self.last = 0.0
        self.shown = 0  # length of the line on screen, to pad over

    def gauge(self, done: float, total: float) -> str:
        """`[####......]`, full when total is 0.

        >>> import io
        >>> ProgressBar(io.StringIO(), width=10).gauge(3, 10)
        '[###.......]'
        """
        filled = min(int(self.width * done / total), self.width) if total else self.width
        return f"[{'#' * filled}{'.' * (self.width - filled)}]"

    def show(self, line: str, *, phase: str = "", last: bool = False) -> None:
        """Draw `line`; a new `phase` starts a new line (the previous phase's last line stays)."""
        now = time.monotonic()
        changed = phase != self.phase
        if self.tty:
            if not changed and not last and now - self.last < _REDRAW:
                return
            if changed and self.phase is not None and self.shown:
                self.stream.write("\n")
                self.shown = 0
            self.stream.write("\r" + line.ljust(self.shown))
            self.shown = len(line)
        else:
            if self.log_every is None or not changed and now - self.last < self.log_every:
                return
            self.stream.write(line + "\n")
        self.phase, self.last = phase, now
        self.stream.flush()

    def close(self, *, keep: bool = False) -> None:
        """End the line: keep it on screen (`keep=True`) or erase it."""
        if self.tty and self.shown:
            self.stream.write("\n" if keep else "\r" + " " * self.shown + "\r")
            self.stream.flush()
        self.shown = 0
