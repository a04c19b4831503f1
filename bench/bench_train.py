"""Benchmark the BPE trainer against rustbpe and Hugging Face `tokenizers` on ~100 MB of real text.

Builds (once) a folder of mixed text from what this machine has -- Python standard library sources,
man pages in several languages, `/usr/share/doc` -- in a cache directory outside the repository,
then trains each trainer in its own subprocess on the same files, with the same split pattern and
vocabulary size, and prints wall time, peak RSS and the ratios.

    python bench/bench_train.py --mb 10          # quick
    python bench/bench_train.py                  # 100 MB, vocab 32768

This is not a test: it asserts nothing. It does not download anything.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

CACHE = Path(os.environ.get("TOKVIZ_BENCH_CACHE", Path.home() / ".cache" / "tokviz-bench"))
PY_LIB = Path("/root/.pyenv/versions/3.11.7/lib/python3.11")
FILE_SIZE = 1 << 20  # the corpus is written as ~1 MB files, like a real folder of documents


def _python_sources() -> Iterator[str]:
    for path in sorted(PY_LIB.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        yield path.read_text(encoding="utf-8", errors="replace")


def _man_pages() -> Iterator[str]:
    """Man pages as roff text; the translated ones (de, fr, ru, ...) make the corpus multilingual."""
    man = Path("/usr/share/man")
    for path in sorted(man.rglob("*.gz")):
        try:
            yield gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        except (OSError, EOFError):
            continue


def _docs() -> Iterator[str]:
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
        except (OSError, EOFError):
            continue
        if b"\0" in data[:8192]:
            continue
        yield data.decode("utf-8", errors="replace")


def build_corpus(mb: int) -> Path:
    """Write ~`mb` MB of text (40% Python, 35% man pages, 25% docs) into the cache, once."""
    target = CACHE / f"corpus-{mb}mb"
    if (target / ".done").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    budget = mb << 20
    shares = {"python": (_python_sources, 0.40), "man": (_man_pages, 0.35), "doc": (_docs, 0.25)}
    for label, (source, share) in shares.items():
        limit, written, part, buf = int(budget * share), 0, 0, []
        size = 0
        for text in source():
            buf.append(text)
            size += len(text.encode("utf-8"))
            if size >= FILE_SIZE:
                data = "\n".join(buf).encode("utf-8")
                (target / f"{label}-{part:04d}.txt").write_bytes(data)
                written += len(data)
                part, buf, size = part + 1, [], 0
                if written >= limit:
                    break
    (target / ".done").write_text("ok")
    return target
