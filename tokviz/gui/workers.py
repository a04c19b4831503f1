"""Loading and tokenizing off the GUI thread.

One `PaneWorker` per pane lives on its own QThread. Each run ends in exactly one terminal signal:
`finished`, `failed` or `cancelled` (a run superseded by a newer request, or the pane closing).
Cancelling is cooperative: `supersede(gen)` / `cancel()` are plain methods (a queued slot would only
run after the current encode), and the worker checks them between the phases of a run. A single
backend `encode` call cannot be interrupted, so a superseded run stops at the next check.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core.catalog import load
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer, TokenizerError
from tokviz.core.tokens import Token, sanitize
from tokviz.gui.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.cells import Cell, ViewOptions, cells_for


@dataclass(frozen=True)
class TokenizeRequest:
    gen: int
    text: str
    policy: SpecialPolicy
    options: ViewOptions
    fonts: Fonts


@dataclass
class PaneResult:
    """Everything a pane draws for one text: the core's tokens plus columns for fast lookups."""

    gen: int
    text: str
    policy: SpecialPolicy
    options: ViewOptions
    tokens: list[Token]
    cells: list[Cell]
    widths: np.ndarray
    newlines: np.ndarray
    ids: np.ndarray
    starts: np.ndarray  # character spans, non-decreasing
    ends: np.ndarray
    n_bytes: int
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def n_chars(self) -> int:
        return len(self.text)


class _Cancelled(Exception):
    pass


class PaneWorker(QObject):
    """Loads one tokenizer, then tokenizes, builds cells and measures them on request."""

    loaded = Signal(object)  # Tokenizer
    load_failed = Signal(str)
    finished = Signal(object)  # PaneResult
    failed = Signal(int, str)  # gen, message
    cancelled = Signal(int)  # gen

    def __init__(self) -> None:
        super().__init__()
        self.tokenizer: Tokenizer | None = None
        self._latest = 0
        self._stop = threading.Event()
        self._last: tuple[str, SpecialPolicy, list[Token]] | None = None

    # -- called from the GUI thread (plain methods, not slots) -------------------------------
    def supersede(self, gen: int) -> None:
        """Mark every run older than `gen` as stale."""
        self._latest = gen

    def cancel(self) -> None:
        """Stop whatever runs now and everything queued (the pane is closing)."""
        self._stop.set()

    # -- run on the worker thread --------------------------------------------------------------
    @Slot(str)
    def load(self, spec: str) -> None:
        try:
            self.tokenizer = load(spec)
        except TokenizerError as e:
            self.load_failed.emit(str(e))
        except Exception as e:  # a backend bug must not take the app down
            self.load_failed.emit(f"cannot load {spec}: {type(e).__name__}: {e}")
        else:
            self.loaded.emit(self.tokenizer)

    @Slot(object)
    def run(self, request: TokenizeRequest) -> None:
        try:
            result = self._run(request)
        except _Cancelled:
            self.cancelled.emit(request.gen)
        except ValueError as e:  # disallowed special token: tiktoken's message names the way out
            self.failed.emit(request.gen, str(e))
        except Exception as e:
            self.failed.emit(request.gen, f"{type(e).__name__}: {e}")
        else:
            self.finished.emit(result)

    def _check(self, gen: int) -> None:
        if self._stop.is_set() or gen < self._latest:
            raise _Cancelled

    def _run(self, req: TokenizeRequest) -> PaneResult:
        self._check(req.gen)
        if self.tokenizer is None:
            raise TokenizerError("no tokenizer loaded")
        t0 = time.perf_counter()
        tokens = self._tokens(req.text, req.policy)
        self._check(req.gen)
        cells = cells_for(tokens, req.options)
        self._check(req.gen)
        widths = CellMeasurer(req.fonts).widths(cells)
        self._check(req.gen)
        n = len(tokens)
        ids = np.fromiter((t[0] for t in tokens), dtype=np.int64, count=n)
        starts = np.fromiter((t[4] for t in tokens), dtype=np.int64, count=n)
        ends = np.fromiter((t[5] for t in tokens), dtype=np.int64, count=n)
        newlines = np.fromiter((c.newlines for c in cells), dtype=np.int32, count=n)
        n_bytes = len(sanitize(req.text).encode("utf-8"))
        return PaneResult(
            req.gen, req.text, req.policy, req.options, tokens, cells, widths, newlines, ids,
            starts, ends, n_bytes, time.perf_counter() - t0,
        )

    def _tokens(self, text: str, policy: SpecialPolicy) -> list[Token]:
        """Encode, reusing the last tokens when only the view options changed."""
        last = self._last
        if last is not None and last[1] == policy and (last[0] is text or last[0] == text):
            return last[2]
        tokens = self.tokenizer.encode_with(text, policy)  # type: ignore[union-attr]
        self._last = (text, policy, tokens)
        return tokens
