"""Work in a child process, driven from a `Worker`'s thread: `ChildProcess`.

For work that holds the GIL for long stretches (the merge loop): in a child it holds the child's
GIL, and the worker's thread waits on the pipe without holding ours. The child is spawned, never
forked (this process runs Qt); its target gets its end of the pipe first: `target(conn, *args)`.

`receive(job)` waits for the child's next message without polling (one `wait` on the pipe, the
child's sentinel and a socket the job's abort flag wakes). On an abort it raises `Cancelled` at
once or, given a `cancel` message, sends it and waits up to `grace_s` for the child's answer. A
child that dies is a `ChildDied`. Leaving the `with` block says goodbye, waits briefly, and
terminates a child still busy.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import socket
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

from tokviz.core.cancel import Cancelled
from tokviz.gui.work.worker import Job

_NOTHING = object()


class ChildDied(RuntimeError):
    """The child process ended without answering."""


class ChildProcess:
    """A spawned child process and the parent's end of a pipe to it."""

    def __init__(self, target: Callable[..., None], *args: Any, what: str, name: str,
                 daemon: bool = True, goodbye: object = _NOTHING, grace_s: float = 0.2,
                 recv: Callable[[Any], Any] | None = None, send: Callable[[Any, Any], None] | None = None) -> None:
        self._target, self._args = target, args
        self.what = what  # "training": "the training process ended unexpectedly"
        self._name, self._daemon = name, daemon
        self._goodbye, self._grace_s = goodbye, grace_s
        self.process: Any = None
        self.conn: Any = None
        self._cancel_sent: float | None = None  # when `receive` sent the cancel message (monotonic)
        self._recv = recv or Connection.recv  # how the child's messages are read
        self._send = send or Connection.send  # and how messages are sent

    def __enter__(self) -> ChildProcess:
        """Spawn the child; leaving the block (or `stop()`) ends it."""
        ctx = multiprocessing.get_context("spawn")
        self._cancel_sent = None
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
        """Send `message` to the child."""
        self._send(self.conn, message)

    def receive(self, job: Job, *, cancel: object = _NOTHING, grace_s: float = 5.0) -> Any:
        """The child's next message (see the module docstring for aborts and a dead child)."""
        if not job.abort.is_set():
            woken, wake = socket.socketpair()
            with woken, wake, job.abort.waking(lambda: _wake(wake)):
                ready = wait([self.conn, self.process.sentinel, woken])
            if self.conn in ready or self.process.sentinel in ready:
                return self._take()
        # aborted
        if cancel is _NOTHING:
            raise Cancelled("aborted")
        if self._cancel_sent is None:
            self._cancel_sent = time.monotonic()
            with contextlib.suppress(OSError):
                self._send(self.conn, cancel)
        remaining = self._cancel_sent + grace_s - time.monotonic()
        if remaining > 0 and wait([self.conn, self.process.sentinel], remaining):
            return self._take()
        raise Cancelled("aborted; the child did not answer")

    def _take(self) -> Any:
        """The message the pipe holds, or `ChildDied` when the child is gone."""
        if self.conn.poll(0):
            with contextlib.suppress(EOFError, OSError):
                return self._recv(self.conn)
        self.process.join(1)  # the child has exited (only its sentinel was ready, or the pipe broke)
        raise ChildDied(f"the {self.what} process ended unexpectedly (exit code {self.process.exitcode})")

    def stop(self) -> None:
        """Say goodbye (a message, and the pipe closing), wait briefly, terminate a busy child."""
        process, self.process = self.process, None
        if process is None:
            return
        if self._goodbye is not _NOTHING:
            with contextlib.suppress(OSError, ValueError):
                self._send(self.conn, self._goodbye)
        self.conn.close()  # a child still reading sees EOF
        if process.pid is not None:
            process.join(self._grace_s)
            if process.is_alive():  # busy with work nobody wants any more
                process.terminate()
                process.join(2)


def _wake(wake: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed: the wait it would end is over
        wake.send(b"x")
