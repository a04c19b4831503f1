"""Keep a window on its screen: never larger than the screen's available area, never off it."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget


def fit_to_screen(window: QWidget) -> None:
    """Shrink (down to the window's minimum size) and move `window` so that its frame lies
    inside its screen's available area (the desktop less panels and docks)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    area = screen.availableGeometry()
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    width = max(min(window.width(), area.width() - extra_w), window.minimumWidth())
    height = max(min(window.height(), area.height() - extra_h), window.minimumHeight())
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    frame = window.frameGeometry()
    x = max(min(frame.left(), area.right() + 1 - frame.width()), area.left())
    y = max(min(frame.top(), area.bottom() + 1 - frame.height()), area.top())
    if (x, y) != (frame.left(), frame.top()):
        window.move(x, y)
