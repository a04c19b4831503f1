"""The C heap of this process: give freed memory back, keep few malloc arenas, and serve large
allocations from the heap where a parent turned that off (glibc only).

numpy arrays and a long encode's temporaries come from malloc's heap, whose freed
pages glibc keeps resident until asked (`trim_heap`), and each thread that allocates gets an
arena of its own unless told otherwise (`limit_arenas`); a Dask worker's environment turns
glibc's adaptive mmap threshold off (`mmap_threshold`). On other C libraries (macOS, Windows,
musl) these do nothing. Used by the tokenizer process, the window, the trainer's counting and
the counting tasks on a Dask cluster.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

#: glibc's `mallopt` parameter for the number of malloc arenas (malloc.h: M_ARENA_MAX)
M_ARENA_MAX = -8
#: glibc's `mallopt` parameter for the size from which an allocation gets pages of its own (M_MMAP_THRESHOLD)
M_MMAP_THRESHOLD = -3


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


def mmap_threshold(size: int) -> None:
    """Serve allocations below `size` bytes from the heap, not from pages mapped for each one.

    glibc raises this threshold by itself as large blocks are freed, unless the trim or mmap
    threshold was set, as Dask's nanny sets `MALLOC_TRIM_THRESHOLD_` for its workers: then every
    numpy array of 128 KiB or more is mapped, zeroed page by page and unmapped again. Counting a
    corpus's chunks in such a worker took 1.65x the time it takes here (four 8 MB tasks of the
    bench corpus, 1.0-1.6 s against 0.6-0.9 s); with the threshold at 32 MiB, the same."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, size)
