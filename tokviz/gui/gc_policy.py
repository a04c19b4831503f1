"""Keep Python's cyclic garbage collector from stalling the window while panes tokenize.

A 1 MB text makes ~300k `Token` tuples per pane. Each of them is tracked by the cyclic GC, and
the full collections that allocation triggers scan every tracked object while holding the GIL:
measured here, 300 ms stalls of the GUI thread and a 3x slower tokenization. Tokens and cells hold no
reference cycles (refcounting frees them), so while any worker runs the collector is paused, and
when the last one ends everything alive is frozen (`gc.freeze`): later collections skip those
objects instead of rescanning them on every full pass.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_busy = 0
_was_enabled = True


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause automatic collection for the duration (nested and thread-safe)."""
    global _busy, _was_enabled
    with _lock:
        if _busy == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _busy += 1
    try:
        yield
    finally:
        with _lock:
            _busy -= 1
            if _busy == 0:
                gc.freeze()
                if _was_enabled:
                    gc.enable()
