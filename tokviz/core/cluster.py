"""Counting on a Dask cluster: connect, ship vocabularies, map tasks in order, cancel.

`Cluster(address)` connects to a running `dask.distributed` scheduler (`tcp://host:8786`) or,
for `local` / `local:N`, starts a `LocalCluster` of N worker processes (one thread each) on this
machine. It checks that every worker runs the same tokviz, dask and distributed as this process,
and turns an unreachable scheduler, a version mismatch or a worker without tokviz into one
`ClusterError` line. `map_ordered` runs a function over many argument tuples as Dask tasks, a
bounded number in flight, and yields the results in input order; leaving it early (an error,
Ctrl+C, a consumer that stops) cancels the tasks still on the cluster. A worker that dies is
Dask's to handle: its tasks run again elsewhere, and since every task here is a pure function of
its arguments the result is the same.

Vocabularies travel with the work, not through a shared folder: `ShippedVocab.of(spec)` reads a
catalog vocabulary or a vocabulary file (its sidecar too) into bytes with their sha256;
`ShippedVocab.load()` on a worker checks the sha256, writes the files once under the worker's
local directory, named by their hash, and loads the tokenizer once per worker process.

Dask is imported here only when a `Cluster` is made: without `--scheduler` nothing imports it.
This module knows no command, dataset or trainer (see `tokviz.analysis.dataset_cluster`,
`tokviz.training.cluster`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import tempfile
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokviz.core.catalog import CatalogEntry
    from tokviz.core.tokenizer import Tokenizer

SCHEDULER_ENV = "TOKVIZ_SCHEDULER"  # the default of --scheduler
CONNECT_SECONDS = 10.0  # how long to try reaching a scheduler
WORKER_SECONDS = 60.0  # how long to wait for a first worker to join a scheduler that has none


class ClusterError(Exception):
    """The cluster cannot be used (unreachable, mismatched, no workers): one line for the user."""


def scheduler_address(given: str | None) -> str | None:
    """`--scheduler`'s value, else `TOKVIZ_SCHEDULER`, else None (tokviz's own processes)."""
    value = given if given is not None else os.environ.get(SCHEDULER_ENV)
    return value.strip() or None if value is not None else None


def parse_local(address: str) -> int | None:
    """Workers of a `local` / `local:N` address (`local`: one per core); None for a scheduler's.

    >>> parse_local("local:3"), parse_local("tcp://10.0.0.5:8786")
    (3, None)
    """
    if address != "local" and not address.startswith(("local:", "local[")):
        return None
    rest = address[len("local"):].strip(":[]")
    if not rest:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if not rest.isdigit() or int(rest) < 1:
        raise ClusterError(f"--scheduler {address}: local:N needs a whole number of workers >= 1")
    return int(rest)


def _check_address(address: str) -> None:
    """Raise ValueError for an address Dask could never connect to (no port, unknown scheme)."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port
    from distributed.comm.registry import get_backend

    scheme, location = parse_address(address)
    get_backend(scheme)
    if scheme in ("tcp", "tls"):
        parse_host_port(location)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored meanwhile (on the main thread), so that processes started now ignore it:
    a terminal's Ctrl+C reaches the whole process group, and a local cluster's workers would
    each print a traceback. This process cancels the tasks and closes the cluster instead."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__


def versions() -> dict[str, str]:
    """What must match between this process and a worker (run on each worker too)."""
    import sys

    import dask
    import distributed

    import tokviz

    return {"tokviz": tokviz.__version__, "dask": dask.__version__, "distributed": distributed.__version__,
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


class Cluster:
    """A connection to a Dask cluster (or a local one started for the run); a context manager."""

    def __init__(self, address: str, *, connect_seconds: float | None = None,
                 worker_seconds: float | None = None) -> None:
        self.address = address
        connect_seconds = connect_seconds or CONNECT_SECONDS
        worker_seconds = worker_seconds or WORKER_SECONDS
        self._local: Any = None
        try:
            import distributed as _distributed
        except ImportError:
            raise ClusterError(
                f"--scheduler {address} needs Dask: pip install 'tokviz[distributed]'"
            ) from None
        distributed: Any = _distributed  # untyped in places: handled as Any at this edge
        self.client: Any = None
        workers = parse_local(address)
        try:
            if workers is not None:
                with _sigint_ignored():  # the workers inherit it: Ctrl+C is this process's to handle
                    self._local = distributed.LocalCluster(
                        n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                        dashboard_address=None, silence_logs=logging.CRITICAL)  # its chatter is not the user's
                self.client = distributed.Client(self._local, set_as_default=False)
            else:
                _check_address(address)  # before a Client: a half-made one hangs on its way out
                with warnings.catch_warnings():  # Dask's own version warning: `_check` says it in one line
                    warnings.simplefilter("ignore")
                    self.client = distributed.Client(address, timeout=connect_seconds, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            self._close_local()
            what = "start a local Dask cluster" if workers is not None else f"reach the Dask scheduler at {address}"
            raise ClusterError(f"cannot {what}: {_one_line(e)}") from None
        try:
            self._check(worker_seconds)
        except BaseException:
            self.close()
            raise

    def _check(self, worker_seconds: float) -> None:
        try:
            self.client.wait_for_workers(1, timeout=worker_seconds)
        except TimeoutError:
            raise ClusterError(f"no worker joined the Dask scheduler at {self.address} "
                               f"within {worker_seconds:.0f} s; start one with `dask worker {self.address}`") from None
        here = versions()
        try:
            there = self.client.run(versions)
        except Exception as e:
            raise ClusterError(f"a worker of {self.address} cannot run tokviz ({_one_line(e)}); "
                               f"install the same tokviz on every worker: pip install 'tokviz[distributed]'") from None
        for worker, found in sorted(there.items()):
            diff = [f"{k} {found.get(k)} there, {v} here" for k, v in here.items() if found.get(k) != v]
            if diff:
                raise ClusterError(f"version mismatch on worker {worker}: {', '.join(diff)}")

    @property
    def threads(self) -> int:
        """Task slots on the cluster now (at least 1)."""
        return max(1, int(sum(self.client.nthreads().values())))

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`client.submit`, never pure (two tasks of the same arguments are still two).

        Arguments travel in the task itself, so that the scheduler can run it again when a
        worker dies (scattered data would die with its workers); Dask's warning about a large
        task (the vocabularies' bytes) is expected, and not the user's."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return self.client.submit(fn, *args, pure=False, **kwargs)

    def map_ordered(
        self, fn: Callable[..., Any], arguments: Iterable[tuple[Any, ...]], *, ahead: int | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[Any]:
        """`fn(*args)` for each tuple, as tasks; the results in input order, at most `ahead`
        (default twice the cluster's threads) in flight. Stops quietly when `cancel` is set."""
        ahead = ahead or 2 * self.threads
        pending: deque[Any] = deque()
        todo = iter(arguments)
        try:
            while True:
                while len(pending) < ahead:
                    args = next(todo, None)
                    if args is None:
                        break
                    pending.append(self.submit(fn, *args))
                if not pending:
                    return
                future = pending.popleft()
                result = self.result(future)
                future.release()
                yield result
                if cancel is not None and cancel.is_set():
                    return
        finally:
            self.cancel(pending)

    def result(self, future: Any) -> Any:
        """A task's result; its exception as raised on the worker, a worker lost to it too often
        (Dask's `KilledWorker`) as a `ClusterError`."""
        from distributed import KilledWorker

        try:
            return future.result()
        except KilledWorker as e:
            raise ClusterError(f"a task kept killing its workers ({_one_line(e)})") from None

    def cancel(self, futures: Iterable[Any]) -> None:
        futures = list(futures)
        if futures:
            try:
                self.client.cancel(futures, force=True)
            except Exception:
                pass

    def _close_local(self) -> None:
        if self._local is not None:
            self._local.close()
            self._local = None

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        self._close_local()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- vocabularies, shipped -------------------------------------------------------------------------


@dataclass(frozen=True)
class ShippedFile:
    name: str
    sha256: str
    data: bytes

    @classmethod
    def read(cls, path: Path) -> ShippedFile:
        data = path.read_bytes()
        return cls(path.name, hashlib.sha256(data).hexdigest(), data)

    def check(self) -> None:
        digest = hashlib.sha256(self.data).hexdigest()
        if digest != self.sha256:
            raise ClusterError(f"{self.name} arrived with sha256 {digest}, not the {self.sha256} sent")


@dataclass(frozen=True)
class ShippedVocab:
    """A tokenizer's files as bytes, for workers without them: `entry` (a catalog vocabulary,
    loaded as the catalog loads it) or `main` (the file, or folder for "", loaded as a path)."""

    spec: str
    files: tuple[ShippedFile, ...]
    entry: CatalogEntry | None = None
    main: str = ""

    @classmethod
    def of(cls, spec: str) -> ShippedVocab:
        """The files of `spec`: a catalog name, a vocabulary file (with its sidecar and the
        tokenizer files beside it), a model folder or a `hf:` snapshot (its tokenizer files, not
        its weights). Raises `ClusterError` for what cannot be sent (a `BASE+EXTRA` spec, or more
        than `SHIP_LIMIT` bytes: a GGUF model, say)."""
        from tokviz.core import catalog, discovery

        entry = catalog.find(spec)
        if entry is not None:
            return cls(spec, (_read_checked(spec, entry.verified_path()),), entry=entry)
        path = Path(spec).expanduser()
        if discovery.is_local_spec(spec):
            found = discovery.resolve(spec)
            path = found.folder if found.folder is not None else found.path
        if path.is_dir():
            return cls(spec, _read_all(spec, [p for p in sorted(path.iterdir()) if _tokenizer_file(p)]))
        if path.is_file():
            files = [path]
            for sibling in (path.with_suffix(".json"), path.with_suffix(".tiktoken"),
                            *(path.parent / name for name in _SIBLINGS)):
                if sibling != path and sibling.is_file() and sibling not in files:
                    files.append(sibling)  # a trained vocabulary's sidecar or rank file, a folder's config
            return cls(spec, _read_all(spec, files), main=path.name)
        raise ClusterError(f"{spec}: only catalog vocabularies, vocabulary files and model folders can be "
                           f"sent to a cluster's workers; give the vocabulary's file")

    @property
    def digest(self) -> str:
        """One hash for the lot: the files' names and sha256s, and how they are loaded."""
        h = hashlib.sha256()
        for f in self.files:
            h.update(f"{f.name}\0{f.sha256}\0".encode())
        h.update(f"{self.entry.name if self.entry else ''}\0{self.main}".encode())
        return h.hexdigest()

    def materialize(self, root: Path) -> Path:
        """Write the files (checked) under `root/<digest>/`, once; the folder."""
        folder = root / "tokviz-vocab" / self.digest
        folder.mkdir(parents=True, exist_ok=True)
        for f in self.files:
            target = folder / f.name
            if target.is_file() and target.stat().st_size == len(f.data):
                continue
            f.check()
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-")
            with os.fdopen(fd, "wb") as out:
                out.write(f.data)
            os.replace(tmp, target)
        return folder

    def load(self) -> Tokenizer:
        """The tokenizer, on a worker: files checked and written once, loaded once per process."""
        key = self.digest
        with _LOCK:
            found = _LOADED.get(key)
            if found is None:
                for f in self.files:
                    f.check()
                folder = self.materialize(worker_directory())
                found = _LOADED[key] = self._load_from(folder)
            return found

    def _load_from(self, folder: Path) -> Tokenizer:
        from tokviz.core import catalog

        if self.entry is not None:
            local = replace(self.entry, file=str(folder / self.files[0].name), bundled=False)
            return catalog.load_entry(local)
        return catalog.load(str(folder / self.main) if self.main else str(folder))


SHIP_LIMIT = 256 << 20  # bytes of vocabulary files one spec may send to the workers

#: a model folder's files a tokenizer is loaded from (`catalog.load_path`: tokenizer.json and its
#: config, SentencePiece and ChatGLM models, rank files); not its weights
_SIBLINGS = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")


def _tokenizer_file(path: Path) -> bool:
    name = path.name
    return path.is_file() and not name.startswith(".") and (
        name.startswith(("tokenizer", "vocab", "merges", "chat_template")) or name in _SIBLINGS
        or path.suffix in (".model", ".tiktoken"))


def _read_all(spec: str, paths: list[Path]) -> tuple[ShippedFile, ...]:
    size = sum(p.stat().st_size for p in paths)
    if size > SHIP_LIMIT:
        raise ClusterError(f"{spec}: {size / 1e6:,.0f} MB of vocabulary files is too much to send to the workers "
                           f"(at most {SHIP_LIMIT / 1e6:,.0f} MB); give the tokenizer's own file")
    return tuple(ShippedFile.read(p) for p in paths)


def _read_checked(spec: str, path: Path) -> ShippedFile:
    return _read_all(spec, [path])[0]


_LOCK = threading.RLock()  # `worker_cache` may make what calls `ShippedVocab.load`
_LOADED: dict[str, Any] = {}


def worker_directory() -> Path:
    """The Dask worker's own local directory, or the temporary folder outside a worker."""
    try:
        from distributed import get_worker

        return Path(get_worker().local_directory)
    except (ImportError, ValueError):
        return Path(tempfile.gettempdir())


def prepare_worker() -> None:
    """Once per worker process, before counting: large allocations from the heap again, when
    the worker's environment turned glibc's adaptive threshold off (`heap.mmap_threshold`)."""
    worker_cache("prepared", _prepare)


def _prepare() -> bool:
    if "MALLOC_TRIM_THRESHOLD_" in os.environ or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        from tokviz.core.heap import mmap_threshold

        mmap_threshold(32 << 20)
    return True


def worker_cache(key: str, make: Callable[[], Any]) -> Any:
    """`make()` once per worker process for `key` (a digest of what it is made from)."""
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = make()
        return _LOADED[key]


__all__ = ["Cluster", "ClusterError", "SCHEDULER_ENV", "ShippedFile", "ShippedVocab", "parse_local",
           "prepare_worker", "scheduler_address", "versions", "worker_cache", "worker_directory"]
