"""The style sheet's drop-downs and spin boxes are drawn whole, in light and dark system themes."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QComboBox, QSpinBox

from tokviz.gui.widgets.theme import apply_theme, stylesheet


def test_the_style_sheet_points_at_shipped_arrow_images() -> None:
    sheet = stylesheet()
    assert "@icons@" not in sheet
    urls = re.findall(r"url\(([^)]+)\)", sheet)
    assert urls and all(Path(u).is_file() for u in urls)
    assert "QComboBox QAbstractItemView::item:hover" in sheet  # the hovered entry has a colour


def test_a_dark_system_palette_gives_way_to_the_light_one(qapp: QApplication) -> None:
    saved_palette, saved_sheet = qapp.palette(), qapp.styleSheet()
    dark = QPalette()
    for role, colour in ((QPalette.ColorRole.Base, "#111111"), (QPalette.ColorRole.Text, "#eeeeee"),
                         (QPalette.ColorRole.Window, "#202124"), (QPalette.ColorRole.WindowText, "#e8eaed")):
        dark.setColor(role, QColor(colour))
    qapp.setPalette(dark)
    try:
        apply_theme(qapp)
        palette = qapp.palette()
        assert palette.color(QPalette.ColorRole.Text).lightness() < 80
        assert palette.color(QPalette.ColorRole.Base).lightness() > 230
        assert palette.color(QPalette.ColorRole.WindowText).lightness() < 80
    finally:
        qapp.setPalette(saved_palette)
        qapp.setStyleSheet(saved_sheet)


def _dark_pixels(image, x0: int, x1: int) -> int:
    return sum(1 for x in range(x0, x1) for y in range(image.height())
               if QColor(image.pixel(x, y)).lightness() < 150)


def test_spin_box_and_combo_box_draw_their_arrows(qtbot, qapp: QApplication) -> None:
    saved = qapp.styleSheet()
    apply_theme(qapp)
    try:
        spin = QSpinBox(minimum=0, maximum=10, value=5)
        combo = QComboBox()
        combo.addItems(["none", "all"])
        for widget in (spin, combo):
            qtbot.addWidget(widget)
            widget.resize(120, 28)
            widget.show()
            qtbot.waitExposed(widget)
            image = widget.grab().toImage()
            # the right-hand 16 px hold the arrows; the text is at the left
            assert _dark_pixels(image, image.width() - 16, image.width() - 3) > 6, type(widget).__name__
    finally:
        qapp.setStyleSheet(saved)
