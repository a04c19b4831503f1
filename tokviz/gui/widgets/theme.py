"""Colours, icons and the stylesheet, from the shipped resources (with safe fallbacks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import as_file
from typing import Any

from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication

from tokviz.analysis.palette import SHADE_MIX, mix
from tokviz.core.tokens import TokenKind

_FALLBACK: dict[str, Any] = {
    "tokens": ["#cfe3ff", "#ffe0a8", "#c8f0d2", "#ffc9dc", "#e2d4ff", "#b8ece9"],
    "kinds": {"special": "#b39ddb", "fragment": "#ff8a80", "byte_fallback": "#ffb74d", "unknown": "#cfd3d8"},
    "highlight": "#ffd60a",
}


@dataclass(frozen=True)
class TokenColors:
    tokens: tuple[QColor, ...]  # at least two, so neighbours always differ
    kinds: dict[TokenKind, QColor]
    highlight: QColor
    _shades: dict[TokenKind, QColor] = field(default_factory=dict, compare=False, repr=False)

    def for_slot(self, index: int, slot: int, kind: TokenKind) -> QColor:
        """Background of token `index`: its kind's colour (a lighter shade at odd positions, so
        neighbouring fragments differ), else palette colour `slot` (see `analysis.palette`)."""
        special = self.kinds.get(kind)
        if special is not None:
            return special if index % 2 == 0 else self._shaded(kind)
        return self.tokens[slot % len(self.tokens)]

    def _shaded(self, kind: TokenKind) -> QColor:
        shade = self._shades.get(kind)
        if shade is None:
            shade = self._shades[kind] = QColor(mix(self.kinds[kind].name(), *SHADE_MIX))
        return shade


@lru_cache(maxsize=1)
def token_colors() -> TokenColors:
    try:
        from tokviz.core.resources import palette

        data = palette()
    except Exception:  # a missing or broken palette file must not stop the window
        data = _FALLBACK
    tokens = tuple(QColor(c) for c in data.get("tokens", _FALLBACK["tokens"]))
    if len(tokens) < 2:
        tokens = tuple(QColor(c) for c in _FALLBACK["tokens"])
    kinds_raw = {**_FALLBACK["kinds"], **data.get("kinds", {})}
    kinds = {TokenKind(k): QColor(v) for k, v in kinds_raw.items() if k in TokenKind._value2member_map_}
    kinds.pop(TokenKind.NORMAL, None)
    return TokenColors(tokens, kinds, QColor(data.get("highlight", _FALLBACK["highlight"])))


def icon(name: str) -> QIcon:
    """An icon from `resources/icons/<name>.svg`, or an empty icon."""
    try:
        from tokviz.core.resources import resource_path

        with as_file(resource_path("icons", f"{name}.svg")) as path:
            return QIcon(str(path)) if path.is_file() else QIcon()
    except Exception:
        return QIcon()


def stylesheet() -> str:
    """The shipped style sheet, its `@icons@` placeholders pointing at the shipped icons."""
    try:
        from tokviz.core.resources import resource_path

        sheet = resource_path("styles", "tokviz.qss").read_text(encoding="utf-8")
        with as_file(resource_path("icons", "arrow-down.svg")) as arrow:
            folder = arrow.parent.as_posix()
    except Exception:
        return ""
    return sheet.replace("@icons@", folder)


# the roles of a light palette matching tokviz.qss (a dark system palette would give light text)
_LIGHT = {
    QPalette.ColorRole.Window: "#f6f7f9",
    QPalette.ColorRole.WindowText: "#1f2937",
    QPalette.ColorRole.Base: "#ffffff",
    QPalette.ColorRole.AlternateBase: "#f4f6f9",
    QPalette.ColorRole.Text: "#1f2937",
    QPalette.ColorRole.PlaceholderText: "#9aa1ab",
    QPalette.ColorRole.Button: "#ffffff",
    QPalette.ColorRole.ButtonText: "#1f2937",
    QPalette.ColorRole.BrightText: "#ffffff",
    QPalette.ColorRole.Highlight: "#b9d4f7",
    QPalette.ColorRole.HighlightedText: "#111827",
    QPalette.ColorRole.ToolTipBase: "#ffffff",
    QPalette.ColorRole.ToolTipText: "#1f2937",
    QPalette.ColorRole.Link: "#1d5fbf",
    QPalette.ColorRole.Light: "#ffffff",
    QPalette.ColorRole.Midlight: "#eef0f3",
    QPalette.ColorRole.Mid: "#c9ced6",
    QPalette.ColorRole.Dark: "#9aa1ab",
    QPalette.ColorRole.Shadow: "#6b7280",
}


def light_palette() -> QPalette:
    """The palette tokviz.qss is drawn against, whatever the system theme (disabled text greyed)."""
    palette = QPalette()
    for role, colour in _LIGHT.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#a0a6b0"))
    return palette


def apply_theme(app: QApplication) -> None:
    """Give `app` the light palette and the style sheet (the same look in light and dark themes)."""
    app.setPalette(light_palette())
    app.setStyleSheet(stylesheet())
