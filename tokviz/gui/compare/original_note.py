""""differs from X in N tokens": a GGUF pane compared with the pane of its original vocabulary.

A GGUF pane's original is a shown non-GGUF pane with (within 1 %) the same number of ids, the one
whose cuts agree most with the GGUF's when there are several: `ggml-vocab-qwen2` beside `qwen`,
`ggml-vocab-llama-bpe` beside `llama3`. The comparison is the boundary diff of
`tokviz.analysis.diff`; N is the number of the GGUF pane's tokens inside the stretches where the
two cut differently (0 with equal cuts but other ids says so instead).

The window puts the notes in its status bar, which many panes fill until the notes are cut off;
each note is also the tooltip of its GGUF pane's subtitle (and a pane with no note has none), so
it can always be read where the pane is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tokviz.analysis.diff import diff_cuttings

SIZE_TOLERANCE = 0.01


def _comparable(pane: Any) -> bool:
    return pane.result is not None and pane.tokenizer is not None and not pane.error


def original_notes(panes: Sequence[Any]) -> list[str]:
    """One note per GGUF pane that has an original among `panes` (TokenPane-like: `tokenizer`,
    `result`, `error`, `subtitle`), each also set as that pane's subtitle tooltip."""
    shown = [p for p in panes if _comparable(p)]
    notes = []
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
        notes.append(note(gguf.tokenizer.name, candidates[best].tokenizer.name, diffs[best], gguf.result.starts))
        noted[id(gguf)] = notes[-1]
    for pane in panes:
        pane.subtitle.setToolTip(noted.get(id(pane), ""))
    return notes


def note(gguf_name: str, original: str, diff: Any, starts: np.ndarray) -> str:
    if diff.identical(0, 1):
        return f"{gguf_name} cuts exactly as {original}"
    ranges = diff.stretch_ranges(0, 1)
    if not len(ranges):
        return f"{gguf_name} cuts as {original} does, with other ids"
    inside = np.searchsorted(starts, ranges[:, 1], side="left") - np.searchsorted(starts, ranges[:, 0], side="left")
    n = int(inside.sum())
    return f"{gguf_name} differs from {original} in {n:,} token{'s' if n != 1 else ''}"
