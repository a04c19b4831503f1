"""Colours, icons and the stylesheet, from the shipped resources (with safe fallbacks)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import as_file

from PySide6.QtGui import QColor, QIcon

from tokviz.core.tokens import TokenKind

_FALLBACK = {
    "tokens": ["#cfe3ff", "#ffe0a8", "#c8f0d2", "#ffc9dc", "#e2d4ff", "#b8ece9"],
    "kinds": {"special": "#b39ddb", "fragment": "#ff8a80", "byte_fallback": "#ffb74d", "unknown": "#cfd3d8"},
    "highlight": "#ffd60a",
}


@dataclass(frozen=True)
class TokenColors:
    tokens: tuple[QColor, ...]  # at least two, so neighbours always differ
    kinds: dict[TokenKind, QColor]
    highlight: QColor

    def for_token(self, index: int, token_id: int, kind: TokenKind, *, by_id: bool) -> QColor:
        """Background of a token: its kind's colour, else the palette by position (neighbours
        differ) or by id (the same id has the same colour in every pane)."""
        special = self.kinds.get(kind)
        if special is not None:
            return special
        n = len(self.tokens)
        if by_id:
            return self.tokens[(token_id * 2654435761 >> 7) % n]
        return self.tokens[index % n]


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
    try:
        from tokviz.core.resources import resource_path

        return resource_path("styles", "tokviz.qss").read_text(encoding="utf-8")
    except Exception:
        return ""
