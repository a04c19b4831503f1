"""Train byte-level BPE vocabularies: Qt-free, no threads of its own.

The API a caller (CLI, GUI worker) needs:

- `train(paths, *, vocab_size, ...) -> TrainingResult` and `train_texts(texts, ...)`
  (`tokviz.training.trainer`), with `progress=callback` (`events.Progress`) and
  `cancel=threading.Event()`; they raise `TrainingError` or `Cancelled`;
- `vocabfile.save(result, name)`, `vocabfile.trained_tokenizer(result)` (loading a saved one is the
  core's: `tokviz.core.sidecar.load_trained(path)`);
- `curve.corpus_curve(result)`, `curve.text_curve(result, text, ks)`;
- `events.TokenTable` turns the merges in progress events into token bytes for a live table.

The command line for it is `tokviz.cli.train`.

Importing this package imports nothing else (worker processes import only what they use).
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "train": "tokviz.training.trainer",
    "train_texts": "tokviz.training.trainer",
    "TrainingResult": "tokviz.training.trainer",
    "TrainingError": "tokviz.training.events",
    "Cancelled": "tokviz.core.cancel",
    "Progress": "tokviz.training.events",
    "TokenTable": "tokviz.training.events",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'tokviz.training' has no attribute {name!r}")
