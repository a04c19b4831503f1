"""Work in a child process, driven from a `Worker`'s thread: `ChildProcess`.

Used where the work holds the GIL for long stretches (a 1 MB encode, the merge loop): in a thread of
the GUI process that would freeze the window; in a child it holds the child's GIL, and the worker's
thread waits on the pipe without holding ours. The child is spawned, never forked (this process runs
Qt), and its target gets its end of the pipe first: `target(conn, *args)`.

`receive(job)` waits for the child's next message and honours the job's abort flag: it raises
`Cancelled` at once, or, given a `cancel` message, sends it and waits up to `grace_s` for the child to
answer (the trainer's child cleans up its pool). A child that dies is a `ChildDied` with its exit
code. Leaving the `with` block says goodbye, waits briefly, and terminates a child still busy.

`SharedChild` is one such child serving several users, each a worker thread under a key of its
own: every message names its key, and replies are handed to the user whose key they carry. No
thread of its own: whichever waiting user finds no reader reads for everybody.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections import deque
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


class SharedChild:
    """One child process for several users: `attach` gives a user its key, `send` a message that
    names it, `receive` the next reply that carries it (in its `key`). The process starts with
    the first `send` and stops when the last user detaches.

    A child that dies fails every user waiting for it with `ChildDied`; `restart(generation)`
    (called by any of them, once per death) lets the next `send` start a new one, and
    `generation` tells a user whether the process it prepared (loaded a vocabulary in) is the
    current one.
    """

    def __init__(self, target: Callable[..., None], *args: Any, what: str, name: str, goodbye: object,
                 recv: Callable[[Any], Any], send: Callable[[Any, Any], None]) -> None:
        self._make = lambda: ChildProcess(target, *args, what=what, name=name, goodbye=goodbye, recv=recv, send=send)
        self._cond = threading.Condition()
        self._send_lock = threading.Lock()
        self._child: ChildProcess | None = None
        self.generation = 0  # counts the processes started
        self._died: tuple[int, str] | None = None  # (generation, why) of the last death seen
        self._mail: dict[int, deque[Any]] = {}
        self._reading = False
        self._keys = 0

    @property
    def process(self) -> Any:
        """The current child's process (None before the first send or after the last user)."""
        child = self._child
        return child.process if child is not None else None

    def attach(self) -> int:
        with self._cond:
            self._keys += 1
            self._mail[self._keys] = deque()
            return self._keys

    def detach(self, key: int, goodbye: object = None) -> None:
        """The user of `key` is done (`goodbye`, if any, is sent for it first); the last one
        stops the child."""
        with self._cond:
            self._mail.pop(key, None)
            last = not self._mail
        child = self._child
        if child is None:
            return
        if last:
            with self._send_lock, self._cond:
                if not self._mail and self._child is child:
                    self._child = None
                    child.stop()
        elif goodbye is not None:
            try:
                self.send(goodbye)
            except ChildDied:
                pass

    def send(self, message: object, generation: int | None = None) -> int:
        """Send `message` (starting the child if there is none); the generation it went to. With
        `generation`, only to that process: ChildDied when it is gone (a message that needs what
        the user prepared in it)."""
        with self._send_lock:
            if generation is not None and (generation != self.generation or self._child is None):
                raise ChildDied(f"the {self._child.what if self._child else 'child'} process was started again")
            if self._child is None:
                child = self._make()
                child.start()
                with self._cond:
                    self._child = child
                    self.generation += 1
            child = self._child
            assert child is not None
            try:
                child.send(message)
            except (OSError, ValueError) as e:
                raise ChildDied(f"the {child.what} process ended unexpectedly ({e})") from None
            return self.generation

    def receive(self, job: Job, key: int, generation: int, waiting: Callable[[], None] | None = None) -> Any:
        """The next reply for `key` from the process of `generation`; `Cancelled` when the job is
        aborted, `ChildDied` when that process is gone. `waiting` is called every `POLL_S` or so
        while there is none (a user may send something meanwhile)."""
        while True:
            if waiting is not None:
                waiting()
            with self._cond:
                box = self._mail.get(key)
                if box:
                    return box.popleft()
                if job.abort.is_set():
                    raise Cancelled("aborted")
                if self._died is not None and self._died[0] >= generation:
                    raise ChildDied(self._died[1])
                child = self._child
                if generation != self.generation or child is None:
                    raise ChildDied("the tokenizer process was started again")
                if self._reading:
                    self._cond.wait(POLL_S)
                    continue
                self._reading = True
            try:
                message = child.poll(POLL_S)
            except ChildDied as e:
                with self._cond:
                    self._reading = False
                    self._died = (generation, str(e))
                    self._cond.notify_all()
                raise
            with self._cond:
                self._reading = False
                if message is not NOTHING and message.key in self._mail:
                    self._mail[message.key].append(message)
                self._cond.notify_all()

    def restart(self, generation: int) -> None:
        """The process of `generation` died: stop it, so the next `send` starts a new one (a
        no-op when another user did this already)."""
        with self._send_lock, self._cond:
            if self.generation == generation and self._child is not None:
                child, self._child = self._child, None
                child.stop()
