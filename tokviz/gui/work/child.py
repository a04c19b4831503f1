"""Work in a child process, driven from a `Worker`'s thread: `ChildProcess`.

Used where the work holds the GIL for long stretches (a 1 MB encode, the merge loop): in a thread of
the GUI process that would freeze the window; in a child it holds the child's GIL, and the worker's
thread waits on the pipe without holding ours. The child is spawned, never forked (this process runs
Qt), and its target gets its end of the pipe first: `target(conn, *args)`.

`receive(job)` waits for the child's next message and honours the job's abort flag: it raises
`Cancelled` at once, or, given a `cancel` message, sends it and waits up to `grace_s` for the child to
answer (the trainer's child cleans up its pool). A child that dies is a `ChildDied` with its exit
code. Leaving the `with` block says goodbye, waits briefly, and terminates a child still busy.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from typing import Any

from tokviz.core.cancel import Cancelled
from tokviz.gui.work.worker import Job

POLL_S = 0.05  # how often a waiting worker looks at its abort flag and the child's health
_NOTHING = object()
NOTHING = object()  # `poll`: no message yet


class ChildDied(RuntimeError):
    """The child process ended without answering."""


class ChildProcess:
    """A spawned child process and the parent's end of a pipe to it."""

    def __init__(self, target: Callable[..., None], *args: Any, what: str, name: str,
                 daemon: bool = True, goodbye: object = _NOTHING, grace_s: float = 0.2,
                 recv: Callable[[Any], Any] | None = None, send: Callable[[Any, Any], None] | None = None) -> None:
        self._target, self._args = target, args
        self.what = what  # "tokenizer": "the tokenizer process ended unexpectedly"
        self._name, self._daemon = name, daemon
        self._goodbye, self._grace_s = goodbye, grace_s
        self.process: Any = None
        self.conn: Any = None
        self._recv = recv or (lambda conn: conn.recv())  # how the child's messages are read
        self._send = send or (lambda conn, message: conn.send(message))  # and how messages are sent

    def __enter__(self) -> ChildProcess:
        return self.start()

    def start(self) -> ChildProcess:
        """Spawn the child (`with` does it too); stop() ends it."""
        ctx = multiprocessing.get_context("spawn")
        self.conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(target=self._target, args=(child_conn, *self._args),
                                   daemon=self._daemon, name=self._name)
        try:
            self.process.start()
        finally:
            child_conn.close()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def send(self, message: object) -> None:
        self._send(self.conn, message)

    def receive(self, job: Job, *, cancel: object = _NOTHING, grace_s: float = 5.0) -> Any:
        """The child's next message (see the module docstring for aborts and a dead child)."""
        cancel_sent: float | None = None
        while True:
            if job.abort.is_set():
                if cancel is _NOTHING:
                    raise Cancelled("aborted")
                if cancel_sent is None:
                    cancel_sent = time.monotonic()
                    try:
                        self._send(self.conn, cancel)
                    except OSError:
                        pass
                elif time.monotonic() - cancel_sent > grace_s:
                    raise Cancelled("aborted; the child did not answer")
            message = self.poll(POLL_S)
            if message is not NOTHING:
                return message

    def poll(self, timeout: float) -> Any:
        """The child's next message, or `NOTHING` when none came within `timeout` seconds;
        `ChildDied` when the child is gone."""
        if self.conn.poll(timeout):
            try:
                return self._recv(self.conn)
            except (EOFError, OSError):
                self.process.join(1)
                raise self._died() from None
        if not self.process.is_alive() and not self.conn.poll(0):
            raise self._died()
        return NOTHING

    def _died(self) -> ChildDied:
        return ChildDied(f"the {self.what} process ended unexpectedly (exit code {self.process.exitcode})")

    def stop(self) -> None:
        """Say goodbye (a message, and the pipe closing), wait briefly, terminate a busy child."""
        process, self.process = self.process, None
        if process is None:
            return
        if self._goodbye is not _NOTHING:
            try:
                self._send(self.conn, self._goodbye)
            except (OSError, ValueError):
                pass
        self.conn.close()  # a child still reading sees EOF
        if process.pid is not None:
            process.join(self._grace_s)
            if process.is_alive():  # busy with work nobody wants any more
                process.terminate()
                process.join(2)
