"""Which palette colour each token gets, so neighbouring tokens never share one.

Qt-free: the panes, the HTML export and the terminal use the same choice. A colour is a *slot*
(an index into the palette's list of token colours); kinds with a colour of their own (fragments,
specials, ...) take a *shade* (0 or 1) that alternates, so a run of fragments still shows its cuts.
"""

from __future__ import annotations

import numpy as np

_GOLDEN = 2654435761  # Knuth's multiplicative hash: neighbouring ids land far apart


def position_slots(count: int, n: int) -> np.ndarray:
    """Colour by position: cycle through the palette (neighbours differ when `n >= 2`).

    >>> position_slots(5, 3).tolist()
    [0, 1, 2, 0, 1]
    """
    return np.arange(count, dtype=np.int64) % max(n, 1)


def id_slots(ids: np.ndarray, n: int) -> np.ndarray:
    """Colour by id: each id has its own slot, the same in every pane and every text, except where
    it would equal the slot of the token before; then the id's second choice (never its first).

    >>> id_slots(np.array([7, 7, 7, 9]), 12).tolist()
    [3, 1, 3, 2]
    """
    ids = np.asarray(ids, dtype=np.int64)
    if n < 2:
        return np.zeros(len(ids), dtype=np.int64)
    mixed = (ids.astype(np.uint64) * np.uint64(_GOLDEN)) & np.uint64(0xFFFFFFFF)
    first = ((mixed >> np.uint64(7)) % np.uint64(n)).astype(np.int64)
    second = (first + 1 + (mixed >> np.uint64(17)).astype(np.int64) % (n - 1)) % n
    out = first.copy()
    clash = np.flatnonzero(first[1:] == first[:-1]) + 1
    if not len(clash):
        return out
    # a token's choice depends on the one before it only where first choices clash: walk those
    # stretches in Python, vectorised everywhere else
    prev_out = out.tolist()
    f, s = first.tolist(), second.tolist()
    for i in range(int(clash[0]), len(f)):
        prev_out[i] = f[i] if f[i] != prev_out[i - 1] else s[i]
    return np.array(prev_out, dtype=np.int64)


def mix(color: str, other: str, amount: float) -> str:
    """`#rrggbb` moved `amount` (0..1) of the way towards `other`.

    >>> mix("#000000", "#ffffff", 0.5)
    '#808080'
    """
    a = [int(color[k:k + 2], 16) for k in (1, 3, 5)]
    b = [int(other[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02x}" for x, y in zip(a, b))


#: how the second shade of a kind colour is made: a little darker (fragment cells are drawn lighter
#: than their colour, and a lighter second shade washed out to white); dark text stays readable
SHADE_MIX = ("#000000", 0.14)
