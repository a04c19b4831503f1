"""Shared test set-up: real vocabularies from the provisioned data folder, Qt offscreen.

The README's test command provisions the vocabularies first (`tokviz vocabs fetch`); a
missing one fails the test that needs it with the command to run, rather than skipping silently.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

pytest_plugins = ["tests.files", "tests.local_models"]  # `tree`: small files; `machine`: model stores

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("TOKVIZ_DATA_DIR", str(ROOT / ".cache" / "tokviz"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tokviz.core import catalog  # noqa: E402  (after the environment is set)
from tokviz.core.tokenizer import Tokenizer, TokenizerError  # noqa: E402


@functools.cache
def load_vocab(name: str) -> Tokenizer:
    try:
        return catalog.load(name)
    except TokenizerError as e:
        pytest.fail(f"{e}\n(the README's test command provisions test vocabularies)", pytrace=False)


@pytest.fixture(scope="session")
def vocab():
    """`vocab("cl100k_base")` -> the real tokenizer, loaded once per session."""
    return load_vocab


@pytest.fixture(scope="session")
def vocab_path():
    """`vocab_path("ggml-vocab-gpt-2")` -> the provisioned, sha256-checked file of a catalog entry;
    `vocab_path(name, ".inp")` -> one of its extra files (llama.cpp's test cases)."""

    def path(name: str, extra: str | None = None) -> Path:
        entry = catalog.find(name)
        if entry is None:
            pytest.fail(f"{name} is not in the catalog", pytrace=False)
        try:
            return entry.extra_path(extra) if extra else entry.verified_path()
        except TokenizerError as e:
            pytest.fail(f"{e}\n(the README's test command provisions test vocabularies)", pytrace=False)

    return path
