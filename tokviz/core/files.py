"""Writing files so that nothing is ever half-written: every file tokviz saves goes through here."""

from __future__ import annotations

import errno
import importlib
import logging
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: a temporary or backup without the saver's process id (as saves before them named it) counts as
#: stale once it is this old: its save cannot still be running
STALE_AFTER_S = 600.0


#: inputs up to this size are hashed by the interpreter's own sha256, larger ones by OpenSSL's
LEAN_HASH_MAX = 64 << 20


def sha256(size: int) -> Any:
    """A new sha256 hash object, for `size` bytes of input.

    Up to `LEAN_HASH_MAX` it is the interpreter's built-in sha256 (`_sha2`; `_sha256` before
    Python 3.12), as the standard library's `random` takes its lean sha512 first: `hashlib`
    loads OpenSSL, resident in a process that needs it for nothing else (the tokenizer process
    verifies every vocabulary it loads, a few MB, which the built-in hashes in a moment). OpenSSL
    hashes faster, which counts for a multi-GB model file."""
    if size <= LEAN_HASH_MAX:
        for module in ("_sha2", "_sha256"):
            try:
                return importlib.import_module(module).sha256()
            except (ImportError, AttributeError):  # a Python built without it
                continue
    import hashlib

    return hashlib.sha256()


def sha256_hex(data: bytes) -> str:
    """The sha256 of `data`, in hex (see `sha256`)."""
    h = sha256(len(data))
    h.update(data)
    return str(h.hexdigest())


def write_atomic(path: str | os.PathLike[str], data: bytes, *, make_folders: bool = False) -> list[Path]:
    """Write `data` to `path` via a temporary file in the same folder, fsync and `os.replace`:
    readers see the old file or the whole new one, and a full disk leaves the old file intact.
    Returns the stale temporaries of `path` an earlier save killed mid-way left and that were
    removed (`remove_stale`).

    A missing folder is an OSError saying so (an output given as `no/such/x.csv` made that whole
    tree), unless `make_folders` (tokviz's own data and settings folders).
    """
    path = Path(path)
    if make_folders:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"no such folder {path.parent}", str(path))
    if path.is_dir():  # else the rename fails, naming the temporary
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file", str(path))
    tmp, fd = _open_temp(path)
    try:
        _write_and_sync(fd, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return remove_stale([path])


class SaveError(OSError):
    """A group save that failed: the message names the file and the cause; the old files are as they were."""


class AtomicGroup:
    """Write several files so that either all of them are replaced or none is.

    Each file goes to a temporary in its own folder and is fsynced; a file that exists is then
    hard-linked (or, where links are not possible, copied) to a backup beside it; only then are the
    files moved into place one by one. A failure at any step moves the backups back over the files
    already replaced, removes what did not exist before and every temporary, and raises one
    `SaveError` naming the file and the cause. The one window this cannot cover is a kill -9
    between two of the final renames (microseconds); sidecars record the sha256 of their rank
    file, so such a pair is refused on load instead of loading as a hybrid.

    `step(what, path)` runs before each filesystem step; it does nothing here (tests override it
    to fail or to be killed at a given step on a real folder).
    """

    def __init__(self, files: list[tuple[Path, bytes]]) -> None:
        self.files = [(Path(p), data) for p, data in files]
        self._temps: dict[Path, Path] = {}
        self._backups: dict[Path, Path] = {}
        self._replaced: list[Path] = []

    def step(self, what: str, path: Path) -> None:
        """Called before each step ('write', 'backup', 'replace'); a hook for tests."""

    def commit(self) -> list[Path]:
        """Save every file; returns the stale temporaries and backups of these files that an
        earlier save killed mid-way left and that were removed (`remove_stale`)."""
        current = self.files[0][0] if self.files else Path()
        try:
            for current, data in self.files:
                self.step("write", current)
                self._temps[current] = _write_temp(current, data, self)
            for current, _ in self.files:
                if os.path.lexists(current) and not (current.is_dir() and not current.is_symlink()):
                    self.step("backup", current)
                    self._backups[current] = _backup(current)
            for current, _ in self.files:
                self.step("replace", current)
                os.replace(self._temps[current], current)
                del self._temps[current]
                self._replaced.append(current)
        except BaseException as e:
            self._roll_back()
            if isinstance(e, OSError):
                raise SaveError(f"cannot save {current}: {e.strerror or e}; nothing was changed") from e
            raise
        finally:
            for tmp in self._temps.values():
                tmp.unlink(missing_ok=True)
        for backup in self._backups.values():
            backup.unlink(missing_ok=True)
        _fsync_folders({p.parent for p, _ in self.files})
        # only now: until the new files are in, a backup may be the way back to a pair that a
        # save killed between its renames left (the loaders name it)
        return remove_stale([p for p, _ in self.files])

    def _roll_back(self) -> None:
        for path in reversed(self._replaced):
            backup = self._backups.pop(path, None)
            try:
                if backup is not None:
                    os.replace(backup, path)
                else:
                    path.unlink(missing_ok=True)
            except OSError:  # pragma: no cover - the backup stays beside the file for the user
                pass
        for backup in self._backups.values():
            backup.unlink(missing_ok=True)


def write_files_atomic(files: list[tuple[Path, bytes]]) -> list[Path]:
    """Write every `(path, data)` or none of them (see `AtomicGroup`); SaveError names the file.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_files_atomic([(folder / "a.txt", b"a"), (folder / "b.txt", b"b")])  # nothing stale removed
    []
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt', 'b.txt']
    """
    return AtomicGroup(files).commit()


def _temp_name(path: Path, kind: str) -> Path:
    """`.NAME.<12 hex digits>-<process id>.tmp` (or `.old`): hidden, and recognisable later as
    tokviz's own, with the process that may still be using it. (`os.urandom`, as `secrets.token_hex`
    does: importing `secrets` loads OpenSSL through `hmac`, resident in every process.)"""
    return path.with_name(f".{path.name}.{os.urandom(6).hex()}-{os.getpid()}.{kind}")


def _left_by(path: Path, name: str) -> int | None:
    """The process id in a temporary's or backup's name (0 when the name has none), or None
    when `name` is not one tokviz makes for `path`."""
    match = re.fullmatch(rf"\.{re.escape(path.name)}\.[0-9a-f]{{12}}(?:-(\d{{1,10}}))?\.(?:tmp|old)", name)
    if match is None:
        return None
    return int(match.group(1)) if match.group(1) else 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists (owned by someone else)
        return True
    return True


def remove_stale(paths: list[Path]) -> list[Path]:
    """Remove the temporaries and backups of `paths` that a save killed mid-way left beside them
    (`.NAME.<hex>-<pid>.tmp` / `.old`, from a process that is gone), and say so in the log.

    Only regular files named as tokviz names them for these very files are touched; those of a
    save still running (its process is alive, this one included) are left alone. Returns what
    was removed.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / ".v.json.0123456789ab-999999999.tmp").write_bytes(b"half")
    >>> _ = (folder / ".v.json.notours.tmp").write_bytes(b"keep")
    >>> [p.name for p in remove_stale([folder / "v.json"])], sorted(p.name for p in folder.iterdir())
    (['.v.json.0123456789ab-999999999.tmp'], ['.v.json.notours.tmp'])
    """
    removed = []
    for path in paths:
        try:
            names = os.listdir(path.parent)
        except OSError:
            continue
        for name in names:
            pid = _left_by(path, name)
            if pid is None:
                continue
            candidate = path.parent / name
            try:
                info = os.lstat(candidate)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            if pid == os.getpid() or (pid and _alive(pid)):
                continue
            if not pid and time.time() - info.st_ctime < STALE_AFTER_S:
                continue
            try:
                candidate.unlink()
            except OSError:
                continue
            removed.append(candidate)
    if removed:
        log.warning("removed %d file%s an interrupted save left: %s", len(removed),
                    "" if len(removed) == 1 else "s", ", ".join(str(p) for p in removed))
    return removed


def _open_temp(path: Path) -> tuple[Path, int]:
    """A new temporary file beside `path`, opened for writing: its name and descriptor.

    Created with mode 0666 less the umask, like any saved file (mkstemp would make it 0600, and
    reading the umask means setting it, which races with other threads)."""
    for _ in range(100):
        tmp = _temp_name(path, "tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file next to {path}")  # pragma: no cover


def _write_and_sync(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _write_temp(path: Path, data: bytes, group: AtomicGroup) -> Path:
    tmp, fd = _open_temp(path)
    group._temps[path] = tmp  # registered before writing, so a failed write removes it
    _write_and_sync(fd, data)
    return tmp


def _backup(path: Path) -> Path:
    backup = _temp_name(path, "old")
    try:
        os.link(path, backup, follow_symlinks=False)
    except OSError:  # a filesystem without hard links: copy instead
        import shutil

        shutil.copy2(path, backup, follow_symlinks=False)
    return backup


def _fsync_folders(folders: set[Path]) -> None:
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:  # pragma: no cover - not possible on every platform
            continue
        try:
            os.fsync(fd)
        except OSError:  # pragma: no cover
            pass
        finally:
            os.close(fd)


def path_kind(path: str | os.PathLike[str]) -> str:
    """What a path is, in words, for messages about paths that are not regular files.

    >>> path_kind("/dev/null"), path_kind("/no/such/file")
    ('a character device', 'missing')
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a broken symlink" if path.is_symlink() else "missing"
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    kinds = [(stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]
    kind = next((name for test, name in kinds if test(mode)), "a special file")
    if path.is_symlink():
        return f"a symlink to {os.path.realpath(path)} ({kind})"
    return kind
