"""Requests for a long-lived `Worker`: the newest of each kind wins (`Inbox`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from tokviz.core.cancel import Cancelled
from tokviz.gui.work.worker import Job


class Inbox:
    """The newest request of each kind, for a worker too busy to do every one (a dragged slider,
    fast typing). `get(job)` hands out kinds in the order given at construction and raises
    `Cancelled` when the job is aborted while it waits (the abort wakes it).

    >>> inbox = Inbox(("count", "curve")); inbox.put("curve", 1); inbox.put("count", 2); inbox.put("count", 3)
    >>> inbox.pending("count"), inbox.get(Job(print)), inbox.get(Job(print))
    (True, ('count', 3), ('curve', 1))
    """

    def __init__(self, kinds: Sequence[str]) -> None:
        self._kinds = tuple(kinds)
        self._pending: dict[str, object] = {}
        self._cond = threading.Condition()

    def put(self, kind: str, value: object) -> None:
        """Make `value` the request of `kind`, replacing a waiting one."""
        if kind not in self._kinds:
            raise ValueError(f"unknown request kind {kind!r}; expected one of {self._kinds}")
        with self._cond:
            self._pending[kind] = value
            self._cond.notify_all()

    def pending(self, kind: str) -> bool:
        """A newer request of `kind` is waiting (the one at hand is superseded)."""
        with self._cond:
            return kind in self._pending

    def get(self, job: Job) -> tuple[str, object]:
        """The next request as `(kind, value)`, waiting for one."""
        with job.abort.waking(self._wake), self._cond:
            self._cond.wait_for(lambda: self._pending or job.abort.is_set())
            if not self._pending:
                raise Cancelled("aborted")
            kind = next(k for k in self._kinds if k in self._pending)
            return kind, self._pending.pop(kind)

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
