"""One `Worker` thread that runs work for several other workers, in the order it is asked for.

For work whose cost is per thread rather than per call. Qt keeps its font cache per thread: each
thread that measures a CJK or emoji label opens its own FreeType faces of those fonts, each an
mmap of the whole file that harfbuzz then reads through. Measured on the mixed sample: 13 MiB
resident per measuring thread (Noto Sans CJK, two faces, 11 MiB; Noto Color Emoji 1.8 MiB), so
four panes measuring on their own four threads held four copies. Measuring is Python code
holding the GIL, so one thread for all of them costs no parallelism either.

`attach()` and `detach(key)` (GUI thread) start the thread with its first user and stop it after
the last (a key detaches once: a user may detach when it shuts down and when it is destroyed).
`call(job, there, here)` (any worker's thread) runs `there()` on the shared thread and waits for
it, honouring `job`'s abort flag; with no shared thread running (a worker driven without a pane,
as in tests) or once it stopped, `here()` runs in the caller's thread instead.

>>> shared = SharedThread(name="tokviz-demo")  # doctest: +SKIP
>>> key = shared.attach(); shared.call(job, lambda: measure(cells), lambda: measure_here(cells))  # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from tokviz.core.cancel import Cancelled
from tokviz.gui.work.worker import Job, Worker

T = TypeVar("T")
POLL_S = 0.05  # how often a waiting caller (and the idle thread) looks at its abort flag


class _Call:
    """One call for the shared thread. The thread lets go of the work once it ran, and the caller
    takes the value (or error) out: the thread's loop holds its last call until the next one
    comes, and with them a pane's prepared cells and widths (megabytes) would stay alive."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.work: Callable[[], Any] | None = work
        self.done = threading.Event()
        self.ran = False  # False once done: the thread stopped first; the caller runs it itself
        self.value: Any = None
        self.error: BaseException | None = None
        self.wanted = True  # the caller stopped waiting (aborted): skip it

    def run(self) -> None:
        work, self.work = self.work, None
        assert work is not None  # a call runs once
        try:
            self.value = work()
        except BaseException as e:  # noqa: BLE001 (handed to the caller, raised in its thread)
            self.error = e
        del work
        self.ran = True
        self.done.set()

    def take(self) -> Any:
        """The value, or the error raised, once; the call keeps neither."""
        value, error, self.value, self.error = self.value, self.error, None, None
        if error is not None:
            raise error
        return value


class SharedThread:
    """A shared `Worker` thread; see the module docstring."""

    def __init__(self, *, name: str) -> None:
        self.name = name
        self._cond = threading.Condition()
        self._calls: deque[_Call] = deque()
        self._users: set[int] = set()
        self._keys = 0
        self._worker: Worker | None = None
        self._serving = False  # the thread takes calls (set and cleared by the thread itself)

    @property
    def users(self) -> int:
        """How many users are attached."""
        return len(self._users)

    @property
    def running(self) -> bool:
        with self._cond:
            return self._serving

    # -- GUI thread ----------------------------------------------------------------------------
    def attach(self) -> int:
        """One more user (its key); the first starts the thread."""
        self._keys += 1
        self._users.add(self._keys)
        if self._worker is None or not self._worker.is_running:
            with self._cond:
                self._serving = True  # before the thread runs: a call made now waits for it
            self._worker = Worker(self._serve, name=self.name)
            self._worker.start()
        return self._keys

    def detach(self, key: int) -> None:
        """The user of `key` is gone (again: nothing); after the last, the thread stops (waited for)."""
        self._users.discard(key)
        if not self._users and self._worker is not None:
            worker, self._worker = self._worker, None
            worker.stop()

    # -- any worker's thread -----------------------------------------------------------------------
    def call(self, job: Job, there: Callable[[], T], here: Callable[[], T]) -> T:
        """`there()` on the shared thread, or `here()` in this one when it is not running;
        `Cancelled` when `job` is aborted while waiting. An error of the work is raised here."""
        pending = _Call(there)
        with self._cond:
            if not self._serving:
                return here()
            self._calls.append(pending)
            self._cond.notify_all()
        while not pending.done.wait(POLL_S):
            if job.abort.is_set():
                pending.wanted = False
                raise Cancelled("aborted")
        if not pending.ran:  # the thread stopped before it got to this call
            return here()
        return pending.take()  # type: ignore[no-any-return]

    # -- the shared thread ---------------------------------------------------------------------------
    def _serve(self, job: Job) -> None:
        try:
            while True:
                with self._cond:
                    while not self._calls:
                        if job.abort.is_set():
                            return
                        self._cond.wait(POLL_S)
                    pending = self._calls.popleft()
                if pending.wanted:
                    pending.run()
                del pending  # a skipped call still holds its work
        finally:
            with self._cond:
                self._serving = False
                left, self._calls = list(self._calls), deque()
            for waiting in left:  # not run: each caller runs its own
                waiting.done.set()
