"""A dialog that stops its background work however it is closed."""

from __future__ import annotations

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDialog


class WorkDialog(QDialog):
    """A dialog with background runs: `shutdown()` stops them and waits, and runs on every way a
    dialog ends (the close button, Esc, accept or reject). Subclasses implement `shutdown`
    (idempotent)."""

    def shutdown(self) -> None:
        raise NotImplementedError

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.shutdown()
        super().closeEvent(event)

    def done(self, result: int) -> None:
        self.shutdown()
        super().done(result)
