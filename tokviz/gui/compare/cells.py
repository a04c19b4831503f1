"""What one token cell shows: its label, hex bytes, id row and style.

Qt-free, so tests check cells without a widget. Display text comes from the core's
`display_text`, never re-derived here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import repeat

from tokviz.analysis.notation import joined_fragments
from tokviz.core.encoding import KINDS, TokenTable
from tokviz.core.tokens import Token, TokenKind, display_text, display_texts, hex_bytes

# the options live in the compare model; named here too, where the cells that draw by them are
from tokviz.model.compare import VIEW_MODES as VIEW_MODES
from tokviz.model.compare import ViewOptions

PILL_KINDS = frozenset({TokenKind.SPECIAL, TokenKind.UNKNOWN})  # drawn as a labelled pill
HEX_KINDS = frozenset({TokenKind.FRAGMENT, TokenKind.BYTE_FALLBACK})  # their bytes in hex beside the `�`


@dataclass(frozen=True, slots=True)
class Cell:
    """The drawable content of one token."""

    label: str  # main text: display text, the special token's name, or the id
    hex: str  # raw bytes in hex for fragments / byte-fallback pieces, else ""
    sub: str  # second row (the id in "both" mode), else ""
    kind: TokenKind
    newlines: int  # line breaks after this cell (newlines in the token's text)
    cont: bool = False  # a fragment whose first byte continues a character begun in the cell before

    @property
    def pill(self) -> bool:
        return self.kind in PILL_KINDS


def cell_for(token: Token, options: ViewOptions) -> Cell:
    """Build the cell of one token.

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> cell_for(Token(51461, b" \\xe6\\xa0", 0, 3, 0, 2, TokenKind.FRAGMENT, "Ġæł"), ViewOptions())
    Cell(label='·�', hex='20 e6 a0', sub='', kind=<TokenKind.FRAGMENT: 'fragment'>, newlines=0, cont=False)
    """
    kind = token.kind
    if options.mode == "ids":
        return Cell(str(token.id), "", "", kind, 0 if kind in PILL_KINDS else token.bytes.count(b"\n"))
    sub = str(token.id) if options.mode == "both" else ""
    if kind in PILL_KINDS:
        return Cell(token.piece or display_text(token.bytes), "", sub, kind, 0)
    label = _shown_label(display_text(token.bytes, visible_whitespace=options.visible_whitespace), options)
    hexed = hex_bytes(token.bytes) if kind in HEX_KINDS else ""
    return Cell(label, hexed, sub, kind, token.bytes.count(b"\n"))


#: what a label loses with whitespace hidden: line breaks (the layout draws them), tabs as spaces
_HIDDEN_WHITESPACE = str.maketrans({"\n": "", "\r": "", "\t": "    "})


def _shown_label(label: str, options: ViewOptions) -> str:
    return label if options.visible_whitespace else label.translate(_HIDDEN_WHITESPACE)


def shown_labels(labels: list[str], options: ViewOptions) -> list[str]:
    """The labels of display texts as cells show them (`labels` itself when whitespace is shown)."""
    return labels if options.visible_whitespace else list(map(str.translate, labels, repeat(_HIDDEN_WHITESPACE)))


def table_cells(table: TokenTable, options: ViewOptions) -> list[Cell]:
    """`cell_for` of each row of `table` (an encoding's distinct tokens), in its order.

    Made column by column (`display_texts` shows the labels a few thousand at a time): a pane's preparation
    runs beside the GUI thread, and Python work per token there is time the GUI thread waits for
    the GIL.

    >>> table = TokenTable.of_rows([(72, b"\\n\\n", TokenKind.NORMAL, "ĊĊ"), (9, b"\\xe6", TokenKind.FRAGMENT, "æ")])
    >>> [(c.label, c.hex, c.newlines) for c in table_cells(table, ViewOptions())]
    [('↵↵', '', 2), ('�', 'e6', 0)]
    """
    datas, n = table.datas, len(table)
    kinds = list(map(KINDS.__getitem__, table.kinds.tolist()))
    pills = [k for k, kind in enumerate(kinds) if kind in PILL_KINDS]
    newlines = list(map(bytes.count, datas, repeat(b"\n")))  # in C: no Python frame per row
    for k in pills:
        newlines[k] = 0
    if options.mode == "ids":
        return list(map(Cell, map(str, table.ids.tolist()), repeat("", n), repeat("", n), kinds, newlines))
    subs = map(str, table.ids.tolist()) if options.mode == "both" else repeat("", n)
    labels = shown_labels(display_texts(datas, visible_whitespace=options.visible_whitespace), options)
    for k in pills:
        labels[k] = table.pieces[k] or display_text(datas[k])
    hexes = [hex_bytes(data) if kind in HEX_KINDS else "" for kind, data in zip(kinds, datas)]
    return list(map(Cell, labels, hexes, subs, kinds, newlines))


def join_fragments(tokens: Sequence[Token], cells: list[Cell], fragments: Sequence[int],
                   options: ViewOptions) -> dict[int, Cell]:
    """Cells for fragment tokens read with their neighbours: a character cut across tokens is
    labelled once, in the cell holding its first byte; the cells after it show only their hex and
    are marked `cont`. `fragments`: the sorted indices of the hex cells. Returns index -> new cell.

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> F = TokenKind.FRAGMENT
    >>> toks = [Token(1, b"\\xea\\xb5", 0, 2, 0, 1, F, ""), Token(2, b"\\xad", 2, 3, 0, 1, F, "")]
    >>> joined = join_fragments(toks, cells_for(toks, ViewOptions()), [0, 1], ViewOptions())
    >>> [(c.label, c.hex, c.cont) for c in joined.values()]
    [('국', 'ea b5', False), ('', 'ad', True)]
    """
    joined = joined_fragments(tokens, indices=fragments, visible_whitespace=options.visible_whitespace)
    return {
        i: replace(cells[i], label=_shown_label(label, options), cont=cont)
        for i, (label, cont) in joined.items()
    }


def cells_for(tokens: Sequence[Token], options: ViewOptions) -> list[Cell]:
    """Cells for all tokens; tokens with the same id and bytes share one Cell object."""
    cache: dict[tuple[int, bytes], Cell] = {}
    out: list[Cell] = []
    for token in tokens:
        key = (token[0], token[1])
        cell = cache.get(key)
        if cell is None:
            cell = cache[key] = cell_for(token, options)
        out.append(cell)
    return out
