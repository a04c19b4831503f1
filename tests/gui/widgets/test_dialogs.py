"""WorkDialog: every way a dialog ends stops its background work."""

from __future__ import annotations

from tokviz.gui.widgets.dialogs import WorkDialog


class Counting(WorkDialog):
    def __init__(self) -> None:
        super().__init__()
        self.shutdowns = 0

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_close_accept_and_reject_each_shut_the_work_down(qtbot) -> None:
    for end in ("close", "accept", "reject"):
        dialog = Counting()
        qtbot.addWidget(dialog)
        dialog.show()
        getattr(dialog, end)()
        assert dialog.shutdowns >= 1 and not dialog.isVisible(), end
