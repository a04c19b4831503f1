"""Small file trees on disk for the tests of the walker and the corpus reader."""

from __future__ import annotations

from pathlib import Path

import pytest


def write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def names(files) -> list[str]:
    return sorted(Path(f).name for f in files)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Text, code, a binary, a Latin-1 file and a node_modules folder."""
    write(tmp_path, "a.txt", "hello hello world\n")
    write(tmp_path, "src/b.py", "def hello(): return 'world'\n")
    write(tmp_path, "src/deep/c.md", "# hello\n")
    write(tmp_path, "bin/blob.dat", b"\x7fELF\x00\x01\x02")
    write(tmp_path, "latin1.txt", "café crème".encode("latin-1"))
    write(tmp_path, "node_modules/x.js", "var x = 1;\n")
    return tmp_path
