"""Progress events, errors and cancellation for the trainer.

The trainer is a plain function: it runs on the caller's thread, reports through an optional
callback and checks an optional `threading.Event` for cancellation. This module starts no threads
and imports no GUI toolkit; a Qt worker wraps these pieces (see `tokviz.training.train`).

One run ends in exactly one of three ways:

- it returns a `TrainingResult` (finished),
- it raises `TrainingError` (bad input: empty folder, all binary, bad regex, bad word-count line),
- it raises `tokviz.core.cancel.Cancelled` (the event was set; nothing has been written).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tokviz.core.cancel import Cancelled
from tokviz.core.walk import Skipped

Phase = Literal["scanning", "counting", "merging"]


class TrainingError(ValueError):
    """The input cannot be trained on; the message says which input and why. `skipped` lists
    the files left out when that is why (every file binary or not UTF-8), for a report."""

    def __init__(self, message: str, *, skipped: Sequence[Skipped] = ()) -> None:
        super().__init__(message)
        self.skipped: tuple[Skipped, ...] = tuple(skipped)


@dataclass(frozen=True)
class Progress:
    """One progress report.

    `done`/`total` count files (scanning), bytes (counting) or merges (merging); `total` is None
    when unknown. `rate` is units per second, `eta` seconds left (None when unknown).
    In the merging phase `new_merges` holds the merges learned since the previous event, as
    `(left_id, right_id, count)`, and `corpus_tokens` the corpus token count after them (the
    compression curve, live).
    """

    phase: Phase
    done: int
    total: int | None
    rate: float
    eta: float | None
    files_read: int = 0
    files_skipped: int = 0
    bytes_read: int = 0
    new_merges: tuple[tuple[int, int, int], ...] = ()
    corpus_tokens: int | None = None


ProgressCallback = Callable[[Progress], None]


class TokenTable:
    """The bytes of every id, grown as merges arrive: for a live table of what is being learned.

    >>> table = TokenTable()
    >>> table.add([(97, 97, 4), (97, 98, 2), (256, 257, 2)])
    [b'aa', b'ab', b'aaab']
    >>> table[258], len(table)
    (b'aaab', 259)
    """

    def __init__(self) -> None:
        self._bytes = [bytes([i]) for i in range(256)]

    def add(self, merges: Sequence[tuple[int, int, int]]) -> list[bytes]:
        """Append the tokens the merges make (in order); return their bytes."""
        start = len(self._bytes)
        table = self._bytes
        for left, right, _ in merges:
            table.append(table[left] + table[right])
        return table[start:]

    def __getitem__(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def __len__(self) -> int:
        return len(self._bytes)


@dataclass
class Reporter:
    """Rate limit and enrich progress for one phase; check cancellation.

    `tick` is cheap to call often: it only builds a `Progress` every `interval` seconds.
    """

    callback: ProgressCallback | None
    cancel: threading.Event | None
    phase: Phase
    total: int | None = None
    interval: float = 0.05
    _start: float = field(default_factory=time.perf_counter)
    _last: float = 0.0

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled(f"training cancelled during {self.phase}")

    def due(self) -> bool:
        return self.callback is not None and time.perf_counter() - self._last >= self.interval

    def emit(self, done: int, **extra: Any) -> None:
        self.check()
        if self.callback is None:
            return
        now = time.perf_counter()
        self._last = now
        elapsed = max(now - self._start, 1e-9)
        rate = done / elapsed
        eta = (self.total - done) / rate if self.total is not None and rate > 0 else None
        self.callback(Progress(self.phase, done, self.total, rate, eta, **extra))

    def tick(self, done: int, **extra: Any) -> None:
        self.check()
        if self.due():
            self.emit(done, **extra)
