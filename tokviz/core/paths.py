"""Where tokviz keeps its own files: the data folder and the vocabulary folder under it."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """Where tokviz keeps vocabularies and user catalog entries (`$TOKVIZ_DATA_DIR` overrides)."""
    if env := os.environ.get("TOKVIZ_DATA_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "tokviz"


def vocab_dir() -> Path:
    """Provisioned vocabulary files. OpenAI files keep the names tiktoken's cache gives them, so
    `TIKTOKEN_CACHE_DIR=<this folder>` lets tiktoken itself load them offline."""
    return data_dir() / "vocabs"
