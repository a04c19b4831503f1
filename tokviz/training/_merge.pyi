# The compiled merge loop (`_merge.c`); see `tokviz.training.bpe`. `index` maps each pair to a
# buffer of int32 positions (an array or a numpy array: not a `Buffer` to typeshed on 3.11).
from collections.abc import Mapping

from typing_extensions import Buffer

class Loop:
    def __init__(
        self, tok: Buffer, nxt: Buffer, prv: Buffer, fr: Buffer,
        counts: dict[int, int], index: Mapping[int, object], min_frequency: int, /,
    ) -> None: ...
    def run(self, limit: int, first_id: int, /) -> list[tuple[int, int, int, int]]: ...
