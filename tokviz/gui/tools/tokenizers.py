"""The tools' cache of loaded tokenizers (loading cl100k_base or qwen again for each dialog run
would cost seconds). Called from workers' threads, so it is locked."""

from __future__ import annotations

import threading

from tokviz.core import catalog
from tokviz.core.tokenizer import Tokenizer

_CACHE: dict[str, Tokenizer] = {}
_CACHE_LOCK = threading.Lock()


def load_tokenizer(spec: str) -> Tokenizer:
    """`catalog.load(spec)`, cached for catalog names (a file may change between runs)."""
    if catalog.find(spec) is None:
        return catalog.load(spec)
    with _CACHE_LOCK:
        if spec not in _CACHE:
            _CACHE[spec] = catalog.load(spec)
        return _CACHE[spec]
