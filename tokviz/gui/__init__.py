"""The tokviz desktop app (PySide6). Every Qt import of the project lives in this package."""

from tokviz.gui import _refcount_guard  # noqa: F401  (before any Qt call: see the module)
