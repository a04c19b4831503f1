"""Moving a pane's selected token with the keyboard: which token a key goes to.

Left/Right step one token, Up/Down go to the token drawn nearest above or below (blank lines are
skipped), Home/End to the first and last token.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from tokviz.gui.compare.token_layout import TokenLayout

Key = Qt.Key
MOVES = {Key.Key_Left: -1, Key.Key_Right: 1, Key.Key_Up: -2, Key.Key_Down: 2,
         Key.Key_Home: -3, Key.Key_End: 3}


def token_beside(layout: TokenLayout, index: int, rows: int) -> int:
    """The token drawn nearest to token `index`'s middle `rows` lines away (-1 up, +1 down),
    skipping lines without tokens; `index` itself at the first or last line."""
    line = layout.line_of(index)
    middle = layout.x_of(index, line) + float(layout.widths[index]) / 2
    target = line + rows
    while 0 <= target < len(layout.line_starts):
        tokens = layout.line_range(target)
        if tokens:
            def distance(i: int, target: int = target) -> float:
                x = layout.x_of(i, target)
                return max(x - middle, middle - x - float(layout.widths[i]), 0.0)  # 0 inside the cell
            return min(tokens, key=distance)
        target += rows
    return index


def moved_to(key: int, index: int | None, count: int, layout: TokenLayout | None) -> int | None:
    """The token a key press moves the selection to (None: the key does not move it). With no
    selection yet any move starts at the first token."""
    move = MOVES.get(Qt.Key(key))
    if move is None or count == 0:
        return None
    if index is None:
        return 0
    if move in (-3, 3):
        return 0 if move < 0 else count - 1
    if move in (-1, 1):
        return min(max(index + move, 0), count - 1)
    if layout is None or index >= layout.placed():
        return index
    return token_beside(layout, index, move // 2)
