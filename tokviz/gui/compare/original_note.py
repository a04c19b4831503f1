""""differs from X in N tokens": a GGUF pane compared with the pane of its original vocabulary.

A GGUF pane's original is a shown non-GGUF pane with (within SIZE_TOLERANCE) the same number of
ids, the one whose cuts agree most when there are several (`ggml-vocab-qwen2` beside `qwen`). N is
the number of the GGUF pane's tokens inside the stretches where the two cut differently
(`tokviz.analysis.diff`). The window lists the notes in its status bar, which many panes fill;
each note is also its pane's subtitle tooltip, so it can always be read where the pane is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tokviz.analysis.diff import diff_cuttings

SIZE_TOLERANCE = 0.01


def original_notes(panes: Sequence[Any]) -> list[str]:
    """One note per GGUF pane that has an original among `panes` (TokenPane-like: `tokenizer`,
    `result`, `error`, `subtitle`), each also set as that pane's subtitle tooltip."""
    shown = [p for p in panes if p.result is not None and p.tokenizer is not None and not p.error]
    noted: dict[int, str] = {}
    for gguf in shown:
        if gguf.tokenizer.family != "gguf":
            continue
        size = gguf.tokenizer.vocab_size
        candidates = [
            p for p in shown
            if p.tokenizer.family != "gguf" and abs(p.tokenizer.vocab_size - size) <= SIZE_TOLERANCE * size
            and p.result.text == gguf.result.text
        ]
        if not candidates:
            continue
        diffs = [diff_cuttings([gguf.result.tokens, p.result.tokens], gguf.result.n_chars) for p in candidates]
        best = max(range(len(candidates)), key=lambda k: diffs[k].agreement[1])
        noted[id(gguf)] = note(gguf.tokenizer.name, candidates[best].tokenizer.name, diffs[best], gguf.result.starts)
    for pane in panes:
        pane.subtitle.setToolTip(noted.get(id(pane), ""))
    return list(noted.values())


def note(gguf_name: str, original: str, diff: Any, starts: np.ndarray) -> str:
    """The note for a GGUF pane whose cuts (token `starts`) differ from `original`'s by `diff`."""
    if diff.identical(0, 1):
        return f"{gguf_name} cuts exactly as {original}"
    ranges = diff.stretch_ranges(0, 1)
    if not len(ranges):
        return f"{gguf_name} cuts as {original} does, with other ids"
    inside = np.searchsorted(starts, ranges[:, 1], side="left") - np.searchsorted(starts, ranges[:, 0], side="left")
    n = int(inside.sum())
    return f"{gguf_name} differs from {original} in {n:,} token{'s' if n != 1 else ''}"
