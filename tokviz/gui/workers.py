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
from operator import itemgetter
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core.catalog import load
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer, TokenizerError
from tokviz.core.tokens import Token, sanitize
from tokviz.gui.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.cells import Cell, ViewOptions, cell_for
from tokviz.gui.gc_policy import paused_gc


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


def prepare(
    tokens: list[Token], options: ViewOptions, measurer: CellMeasurer
) -> tuple[list[Cell], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cells, widths, newline counts, ids and character spans for all tokens.

    Every per-token pass is a C-level `map`; Python code runs once per distinct (id, bytes).
    """
    n = len(tokens)
    ids = np.fromiter(map(_ID, tokens), dtype=np.int64, count=n)
    starts = np.fromiter(map(_START, tokens), dtype=np.int64, count=n)
    ends = np.fromiter(map(_END, tokens), dtype=np.int64, count=n)
    firsts = dict(zip(zip(map(_ID, tokens), map(_BYTES, tokens)), tokens))
    cell_of = {key: cell_for(token, options) for key, token in firsts.items()}
    keys = list(zip(map(_ID, tokens), map(_BYTES, tokens)))
    cells = list(map(cell_of.__getitem__, keys))
    width_of = {key: measurer.width(cell) for key, cell in cell_of.items()}
    widths = np.fromiter(map(width_of.__getitem__, keys), dtype=np.float64, count=n)
    newline_of = {key: cell.newlines for key, cell in cell_of.items()}
    newlines = np.fromiter(map(newline_of.__getitem__, keys), dtype=np.int32, count=n)
    return cells, widths, newlines, ids, starts, ends


_ID, _BYTES, _START, _END = itemgetter(0), itemgetter(1), itemgetter(4), itemgetter(5)


#: How many panes tokenize at once. The GIL runs Python code one thread at a time anyway; fewer
#: threads contending for it means the GUI thread gets it back sooner (shorter stalls), and panes
#: finish one after another instead of all at the end. Two, because tiktoken's own encode releases
#: the GIL and overlaps with the other pane's Python work.
CONCURRENT_RUNS = threading.BoundedSemaphore(2)


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
        while not CONCURRENT_RUNS.acquire(timeout=0.05):
            self._check(req.gen)
        try:
            return self._run_locked(req)
        finally:
            CONCURRENT_RUNS.release()

    def _run_locked(self, req: TokenizeRequest) -> PaneResult:
        self._check(req.gen)
        t0 = time.perf_counter()
        with paused_gc():
            tokens = self._tokens(req.text, req.policy)
            self._check(req.gen)
            columns = prepare(tokens, req.options, CellMeasurer(req.fonts))
        self._check(req.gen)
        n_bytes = len(sanitize(req.text).encode("utf-8"))
        return PaneResult(
            req.gen, req.text, req.policy, req.options, tokens, *columns, n_bytes,
            time.perf_counter() - t0,
        )

    def _tokens(self, text: str, policy: SpecialPolicy) -> list[Token]:
        """Encode, reusing the last tokens when only the view options changed."""
        last = self._last
        if last is not None and last[1] == policy and (last[0] is text or last[0] == text):
            return last[2]
        tokens = self.tokenizer.encode_with(text, policy)  # type: ignore[union-attr]
        self._last = (text, policy, tokens)
        return tokens
