"""Writing files so that nothing is ever half-written: every file tokviz saves goes through here."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` via a temporary file in the same folder, fsync and `os.replace`:
    readers see the old file or the whole new one, and a full disk leaves the old file intact.

    The temporary file is created with mode 0666 less the umask, like any saved file (mkstemp
    would make it 0600, and reading the umask means setting it, which races with other threads).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover
        raise FileExistsError(f"cannot create a temporary file next to {path}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
