"""Cancellation: one exception for work that stopped because its caller asked it to.

Long work in tokviz (a fetch, a training run, a folder analysis, a GUI worker's job) takes an
optional `threading.Event` and calls `check(cancel, what)` between steps. When the event is set the
work raises `Cancelled`: it returns nothing and leaves nothing half-written. Every layer uses this
one exception, so a caller never needs to know which kind of work it stopped. Work that blocks on
something other than the event (a pipe, a future) is woken by an `AbortFlag` without polling.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Cancelled(Exception):
    """The cancel event was set; the work stopped, returned nothing and wrote nothing."""


def check(cancel: threading.Event | None, what: str = "work") -> None:
    """Raise `Cancelled` ("WHAT cancelled") when `cancel` is set.

    >>> check(None); check(threading.Event())
    >>> event = threading.Event(); event.set()
    >>> check(event, "fetch")
    Traceback (most recent call last):
    tokviz.core.cancel.Cancelled: fetch cancelled
    """
    if cancel is not None and cancel.is_set():
        raise Cancelled(f"{what} cancelled")


class AbortFlag(threading.Event):
    """A `threading.Event` that also calls the wake-ups registered with `waking` when it is set, so
    a work blocked on a pipe or a condition (not on this event) is woken at once, without a timeout.

    >>> flag, woken = AbortFlag(), []
    >>> with flag.waking(lambda: woken.append(1)):
    ...     flag.set()
    >>> flag.set(); woken
    [1]
    """

    def __init__(self) -> None:
        super().__init__()
        self._wakes: list[Callable[[], None]] = []
        self._wakes_lock = threading.Lock()

    def set(self) -> None:
        super().set()
        with self._wakes_lock:
            wakes = list(self._wakes)
        for wake in wakes:
            wake()

    @contextmanager
    def waking(self, wake: Callable[[], None]) -> Iterator[None]:
        """Call `wake` (on the setting thread) when the flag is set while the block runs; at once
        when it is set already. `wake` must be quick and must not block."""
        with self._wakes_lock:
            self._wakes.append(wake)
        try:
            if self.is_set():  # set before the registration: `set` did not see it
                wake()
            yield
        finally:
            with self._wakes_lock:
                self._wakes.remove(wake)
