"""Writing files so that nothing is ever half-written: every file tokviz saves goes through here."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` via a temporary file in the same folder, fsync and `os.replace`:
    readers see the old file or the whole new one, and a full disk leaves the old file intact.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp, fd = _open_temp(path)
    try:
        _write_and_sync(fd, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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

    def commit(self) -> None:
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


def write_files_atomic(files: list[tuple[Path, bytes]]) -> None:
    """Write every `(path, data)` or none of them (see `AtomicGroup`); SaveError names the file.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_files_atomic([(folder / "a.txt", b"a"), (folder / "b.txt", b"b")])
    >>> sorted(p.name for p in folder.iterdir())
    ['a.txt', 'b.txt']
    """
    AtomicGroup(files).commit()


def _temp_name(path: Path, kind: str) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}.{kind}")


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
    import stat

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
