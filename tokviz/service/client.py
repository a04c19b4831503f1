"""The window's side of the tokenizer service: `ServiceClient`. Qt-free.

One client serves every pane of a process. A pane `attach`es with its vocabulary's spec and gets
a key; its requests go out at once, and every reply comes to the callback given at construction,
from the client's one reader thread (the GUI turns it into a Qt signal). The process starts with
the first request and stops when the last pane detaches. One that dies is reported as `Died`; the
next request starts a new one, which loads every attached pane's vocabulary again first (each
pane's `Loaded` comes again).

>>> client = ServiceClient(print)  # doctest: +SKIP
>>> key = client.attach("cl100k_base"); client.encode(key, 1, "hello", SpecialPolicy())  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from tokviz.core.tokenizer import SpecialPolicy
from tokviz.service import protocol as p
from tokviz.service.server import serve


@dataclass(frozen=True)
class Died:
    """The service process ended without being asked to; `generation` counts the processes."""

    message: str
    generation: int


Event = p.Reply | Died


class _Subprocess(subprocess.Popen[bytes]):
    """The service started as `python -m tokviz.service FD` with its end of a socket pair, read as
    a `multiprocessing.Process` is. Not multiprocessing's spawn: that starts a resource tracker
    process too, which the service never needs, and it stays for the window's whole life."""

    def __init__(self, theirs: socket.socket) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # as spawn passes it
        super().__init__([sys.executable, "-m", "tokviz.service", str(theirs.fileno())],
                         pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env)

    @property
    def exitcode(self) -> int | None:
        return self.poll()

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.wait(timeout)

    def is_alive(self) -> bool:
        return self.poll() is None


Process = BaseProcess | _Subprocess


def start_service(name: str) -> tuple[Process, Connection]:
    """A new service process and the window's end of its pipe."""
    if os.name == "posix":
        ours, theirs = socket.socketpair()
        with ours, theirs:
            return _Subprocess(theirs), Connection(ours.detach())
    ctx = multiprocessing.get_context("spawn")  # Windows: no resource tracker there
    conn, child_conn = ctx.Pipe()
    process = ctx.Process(target=serve, args=(child_conn,), daemon=True, name=name)
    try:
        process.start()
    finally:
        child_conn.close()
    return process, conn


class _Run:
    """One service process, its pipe, and whether it was asked to stop."""

    def __init__(self, process: Process, conn: Connection, generation: int) -> None:
        self.process, self.conn, self.generation = process, conn, generation
        self.stopped = False


class ServiceClient:
    """See the module docstring. Every method may be called from any thread."""

    def __init__(self, on_reply: Callable[[Event], None], *, name: str = "tokviz-tokenizers",
                 grace_s: float = 0.5) -> None:
        self._on_reply = on_reply
        self._name, self._grace_s = name, grace_s
        self._lock = threading.RLock()
        self._run: _Run | None = None  # the current process, while it serves
        self.generation = 0  # counts the processes started
        self._specs: dict[int, str] = {}  # every attached pane's vocabulary
        self._keys = 0
        self._last_text: tuple[int, str] | None = None  # the last text sent to the current process
        self._numbers = 0

    @property
    def process(self) -> Process | None:
        """The current process, or None."""
        run = self._run
        return run.process if run is not None else None

    # -- panes -------------------------------------------------------------------------------
    def attach(self, spec: str) -> int:
        """A new pane of vocabulary `spec`: its key. Its vocabulary is loaded at once (`Loaded` or
        `LoadFailed` follows)."""
        with self._lock:
            self._keys += 1
            self._specs[self._keys] = spec
            self.load_again(self._keys)
            return self._keys

    def detach(self, key: int) -> None:
        """The pane of `key` is gone; the last one stops the process."""
        with self._lock:
            if self._specs.pop(key, None) is None:
                return
            if not self._specs:
                self.stop()
            elif self._run is not None:
                self._send(p.Drop(key))

    def encode(self, key: int, gen: int, text: str, policy: SpecialPolicy, model_adds: bool = False) -> int:
        """Encode `text` for the pane of `key`: `Encoded`, `Failed` or `Superseded` follows, or
        `Died` of the generation returned. A text several panes encode in turn goes once."""
        with self._lock:
            run = self._ensure()
            last = self._last_text
            if last is None or not (last[1] is text or last[1] == text):
                self._numbers += 1
                self._last_text = last = (self._numbers, text)
                self._send(p.Text.of(self._numbers, text))
            self._send(p.Encode(key, gen, p.TextRef(last[0]), policy, model_adds))
            return run.generation

    def stream(self, key: int, gen: int, ids: Sequence[int]) -> int:
        """Decode `ids` one at a time for the pane of `key`: `Streamed` follows."""
        with self._lock:
            run = self._ensure()
            self._send(p.Stream(key, gen, tuple(ids)))
            return run.generation

    def load_again(self, key: int) -> None:
        """Load the vocabulary of `key` (again, when its load was lost with a process that died);
        a process started for it loads every attached pane's."""
        with self._lock:
            if self._run is None:
                self._start()
            elif key in self._specs:
                self._send(p.Load(key, self._specs[key]))

    def cancel(self, key: int) -> None:
        """The encode at hand for `key` is not wanted (it is answered `Superseded`)."""
        with self._lock:
            if self._run is not None:
                self._send(p.Cancel(key))

    # -- the process -------------------------------------------------------------------------
    def _ensure(self) -> _Run:
        return self._run if self._run is not None else self._start()

    def _start(self) -> _Run:
        process, conn = start_service(self._name)
        self.generation += 1
        run = self._run = _Run(process, conn, self.generation)
        self._last_text = None
        threading.Thread(target=self._read, args=(run,), daemon=True, name=f"{self._name}-replies").start()
        for key, spec in self._specs.items():
            self._send(p.Load(key, spec))
        return run

    def _send(self, message: p.Request) -> None:
        """Send on the current pipe; a broken one ends the run (the reader reports the death)."""
        run = self._run
        if run is None:
            return
        try:
            p.send(run.conn, message)
        except (OSError, ValueError):
            self._run = None

    def _read(self, run: _Run) -> None:
        """The reader thread of one process: every reply to the callback, then `Died` if the
        process ended without being asked to stop."""
        while True:
            try:
                reply = p.receive_reply(run.conn)
            except (EOFError, OSError):
                break
            self._on_reply(reply)
        run.conn.close()  # here, by the only thread that reads it
        with self._lock:
            if self._run is run:
                self._run = None
        run.process.join(self._grace_s)
        if not run.stopped:
            self._on_reply(Died(f"the tokenizer process ended unexpectedly (exit code {run.process.exitcode})",
                                run.generation))

    def stop(self) -> None:
        """Send `Stop`, and terminate a process still busy after a grace period (the reader thread
        closes the pipe)."""
        with self._lock:
            run, self._run = self._run, None
        if run is None:
            return
        run.stopped = True
        with contextlib.suppress(OSError, ValueError):
            p.send(run.conn, p.Stop())
        if run.process.pid is not None:
            run.process.join(self._grace_s)
            if run.process.is_alive():
                run.process.terminate()
                run.process.join(2)
