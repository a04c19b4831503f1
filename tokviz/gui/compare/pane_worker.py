"""Loading and tokenizing off the GUI thread, and off the GUI process.

One `PaneWorker` per pane lives on its own QThread and owns one child process (see
`tokviz.core.encode_server`: the core's 1 MB encode holds the GIL for hundreds of milliseconds, which a thread
in this process would turn into a frozen window). The worker thread sends requests down a pipe and
waits for the reply without holding the GIL, then turns the columns into cells and widths.

Each run ends in exactly one terminal signal: `finished`, `failed` or `cancelled` (superseded by a
newer request, or the pane closing). `supersede(gen)` and `cancel()` are plain methods (a queued
slot would only run after the current run); the worker checks them while it waits.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from tokviz.core.columns import EncodedColumns, TokenColumns
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import Token
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import Cell, ViewOptions, cell_for
from tokviz.core.encode_server import TokenizerInfo, serve

POLL_S = 0.05  # how often a waiting worker looks at its cancel flag


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
    tokens: Sequence[Token]
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


def prepare(cols: EncodedColumns, options: ViewOptions, measurer: CellMeasurer) -> tuple[
    TokenColumns, list[Cell], np.ndarray, np.ndarray
]:
    """Tokens, cells, widths and newline counts; Python code runs once per distinct (id, bytes)."""
    tokens = TokenColumns(cols)
    unique_cells = [cell_for(t, options) for t in tokens.unique_tokens()]
    unique_widths = np.array([measurer.width(c) for c in unique_cells], dtype=np.float64)
    unique_newlines = np.array([c.newlines for c in unique_cells], dtype=np.int32)
    ki = cols.key_index
    cells = list(map(unique_cells.__getitem__, ki.tolist()))
    return tokens, cells, unique_widths[ki], unique_newlines[ki]


class _Cancelled(Exception):
    pass


class PaneWorker(QObject):
    """Starts the pane's tokenizer process, then tokenizes, builds cells and measures them."""

    loaded = Signal(object)  # TokenizerInfo
    load_failed = Signal(str)
    finished = Signal(object)  # PaneResult
    failed = Signal(int, str)  # gen, message
    cancelled = Signal(int)  # gen
    streamed = Signal(object, object, object)  # ids, naive pieces, buffered pieces

    def __init__(self) -> None:
        super().__init__()
        self.info: TokenizerInfo | None = None
        self._latest = 0
        self._stop = threading.Event()
        self._process: multiprocessing.Process | None = None
        self._conn = None
        self._last: tuple[str, SpecialPolicy, EncodedColumns] | None = None

    # -- called from the GUI thread (plain methods, not slots) -------------------------------
    def supersede(self, gen: int) -> None:
        """Mark every run older than `gen` as stale."""
        self._latest = gen

    def cancel(self) -> None:
        """Stop whatever runs now and everything queued (the pane is closing)."""
        self._stop.set()

    def stop_process(self) -> None:
        """End the child process; call after the worker's thread has finished."""
        process, self._process = self._process, None
        if process is None or process.pid is None:  # never started
            return
        try:
            self._conn.send(None)
        except (OSError, ValueError):
            pass
        process.join(0.2)
        if process.is_alive():  # busy with a long encode nobody wants any more
            process.terminate()
            process.join(2)
        self._conn.close()

    # -- run on the worker thread --------------------------------------------------------------
    @Slot(str)
    def load(self, spec: str) -> None:
        try:
            ctx = multiprocessing.get_context("spawn")  # never fork a process that runs Qt
            self._conn, child = ctx.Pipe()
            self._process = ctx.Process(target=serve, args=(child, spec), daemon=True, name=f"tokviz-{spec}")
            self._process.start()
            child.close()
            reply = self._receive()
        except _Cancelled:
            return
        except Exception as e:
            self.load_failed.emit(f"cannot start a tokenizer process for {spec}: {e}")
            return
        if reply[0] == "loaded":
            self.info = reply[1]
            self.loaded.emit(self.info)
        else:
            self.load_failed.emit(reply[1])

    @Slot(object)
    def run(self, req: TokenizeRequest) -> None:
        try:
            result = self._run(req)
        except _Cancelled:
            self.cancelled.emit(req.gen)
        except _Failed as e:
            self.failed.emit(req.gen, str(e))
        except Exception as e:
            self.failed.emit(req.gen, f"{type(e).__name__}: {e}")
        else:
            self.finished.emit(result)

    @Slot(object)
    def stream(self, ids: list[int]) -> None:
        try:
            self._conn.send(("stream", 0, ids))
            reply = self._receive()
        except (_Cancelled, OSError):
            return
        if reply[0] == "stream":
            self.streamed.emit(ids, reply[2], reply[3])

    def _check(self, gen: int) -> None:
        if self._stop.is_set() or gen < self._latest:
            raise _Cancelled

    def _receive(self) -> tuple:
        """The child's next reply; raises _Cancelled when the pane closes while waiting."""
        conn = self._conn
        while not self._stop.is_set():
            if conn.poll(POLL_S):
                try:
                    return conn.recv()
                except EOFError:
                    return ("load_failed", "the tokenizer process ended unexpectedly")
            if self._process is not None and not self._process.is_alive() and not conn.poll(0):
                code = self._process.exitcode
                return ("load_failed", f"the tokenizer process ended unexpectedly (exit code {code})")
        raise _Cancelled

    def _run(self, req: TokenizeRequest) -> PaneResult:
        self._check(req.gen)
        if self.info is None or self._conn is None:
            raise _Failed("no tokenizer loaded")
        t0 = time.perf_counter()
        cols = self._encode(req)
        self._check(req.gen)
        tokens, cells, widths, newlines = prepare(cols, req.options, CellMeasurer(req.fonts))
        return PaneResult(
            req.gen, req.text, req.policy, req.options, tokens, cells, widths, newlines,
            cols.ids, cols.starts, cols.ends, cols.n_bytes, time.perf_counter() - t0,
        )

    def _encode(self, req: TokenizeRequest) -> EncodedColumns:
        """Columns for the text, reusing the last encode when only the view options changed."""
        last = self._last
        if last is not None and last[1] == req.policy and (last[0] is req.text or last[0] == req.text):
            return last[2]
        self._conn.send(("encode", req.gen, req.text, req.policy))
        reply = self._receive()
        if reply[0] == "failed":
            raise _Failed(reply[2])
        if reply[0] != "done":
            raise _Failed(reply[-1])
        self._last = (req.text, req.policy, reply[2])
        return reply[2]


class _Failed(Exception):
    pass
