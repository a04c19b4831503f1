"""The C heap of this process: give freed memory back, and keep few malloc arenas (glibc only).

numpy arrays and a long encode's temporaries come from malloc's heap, whose freed
pages glibc keeps resident until asked (`trim_heap`), and each thread that allocates gets an
arena of its own unless told otherwise (`limit_arenas`). On other C libraries (macOS, Windows,
musl) both do nothing. Used by the tokenizer process, the window and the trainer's counting.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

#: glibc's `mallopt` parameter for the number of malloc arenas (malloc.h: M_ARENA_MAX)
M_ARENA_MAX = -8


def _glibc() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None


_LIBC = _glibc()
_malloc_trim: Callable[[int], int] | None = getattr(_LIBC, "malloc_trim", None)  # musl has none


def trim_heap() -> None:
    """Give the memory malloc holds free back to the system (glibc's `malloc_trim`). A long
    encode's temporaries leave memory free but resident in the heap's middle, which glibc returns
    only when asked (bench/bench_gui.py reports the tokenizer process's memory)."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def limit_arenas(count: int = 2) -> None:
    """Let glibc's malloc keep at most `count` arenas in this process. By default each thread
    that allocates gets an arena of its own, and what an encode thread's arena held stays
    resident after `trim_heap`; the fewer arenas, the less of it (the tokenizer process keeps
    one). Call it before the threads start."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is not None:
        mallopt(M_ARENA_MAX, count)
