"""Keep PySide6 6.12 from crashing the app on Python 3.11.

shiboken6 6.12.0 returns `None` from every void method (`QPainter.fillRect`, `QWidget.update`, …)
and `True` from `Signal.emit` without taking a reference. From Python 3.12 on these objects are
immortal and nothing happens; on 3.11 each call drops their reference count by one, and after a few
thousand calls (one repaint of a busy token view) the interpreter aborts with "Fatal Python error:
none_dealloc". shiboken6 6.11.3 does not have the bug.

The real fix is a dependency pin (`PySide6-Essentials<6.12` for Python < 3.12, or
Python >= 3.12). Until then this gives the three singletons a reference count they cannot run
out of, which is what 3.12's immortal objects do. Only for CPython < 3.12 with shiboken6 >= 6.12;
Qt-free (it reads the installed version, it does not import shiboken6).
"""

from __future__ import annotations

import ctypes
import sys
from importlib import metadata

HEADROOM = 1 << 40  # ~10^12 leaked references before any trouble


def affected() -> bool:
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False
    try:
        version = metadata.version("shiboken6")
    except metadata.PackageNotFoundError:
        return False
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    return parts >= (6, 12)


def install() -> bool:
    """Raise the reference counts of None, True and False once; True when it was needed."""
    if not affected():
        return False
    for obj in (None, True, False):
        # ob_refcnt is the first field of every object in a CPython 3.11 release build
        ctypes.c_ssize_t.from_address(id(obj)).value += HEADROOM
    return True


INSTALLED = install()
