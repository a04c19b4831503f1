"""Cancellation: one exception for work that stopped because its caller asked it to.

Long work in tokviz (a fetch, a training run, a folder analysis, a GUI worker's job) takes an
optional `threading.Event` and calls `check(cancel, what)` between steps. When the event is set the
work raises `Cancelled`: it returns nothing and leaves nothing half-written. Every layer uses this
one exception, so a caller never needs to know which kind of work it stopped.
"""

from __future__ import annotations

import threading


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
