"""Child-process targets for tests/gui/work/test_work.py (Qt-free: the spawned child imports this)."""

from __future__ import annotations

import os


def echo(conn) -> None:
    """Answer each message with ("echo", message) until None."""
    while (message := conn.recv()) is not None:
        conn.send(("echo", message))


def die(conn, code: int) -> None:
    os._exit(code)


def cancellable(conn) -> None:
    """Say "ready", then wait for "cancel" and answer ("cancelled",)."""
    conn.send("ready")
    while conn.recv() != "cancel":
        pass
    conn.send(("cancelled",))


def semaphore(conn) -> None:
    """Make a multiprocessing lock (a named semaphore, which the resource tracker follows) and
    answer ("locked", True) once it is held."""
    import multiprocessing

    lock = multiprocessing.get_context("spawn").Lock()
    with lock:
        conn.send(("locked", True))
    conn.recv()


def deaf(conn) -> None:
    """Read every message and answer none, until None."""
    while conn.recv() is not None:
        pass
