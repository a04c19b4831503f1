"""No process of `tokviz train` outlives it: the real CLI, killed while its workers (or split helper) count."""

from __future__ import annotations

import os
import select
import selectors
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.training.texts import TRAINING

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open") or not Path("/proc/self/stat").exists(),
                                reason="reads the process tree from /proc, waits on pidfds (Linux)")


def _descendants(pid: int) -> list[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                found.append(child)
                frontier.append(child)
    return found


def _survivors(pids: list[int], limit: float = 120.0) -> dict[int, bytes]:
    """The processes of `pids` that do not end: each is waited for through a pidfd, which becomes
    readable when the process has ended (a process whose pipes just closed may still be exiting).

    `limit` only bounds a failing run.
    """
    left = {}
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # gone and reaped
        try:
            if not select.select([fd], [], [], limit)[0]:
                left[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
        finally:
            os.close(fd)
    return left


def _read_to_eof(stream, limit: float = 120.0) -> bytes:
    """Everything left on the pipe: EOF comes when every process holding its write end is gone.

    `limit` only bounds a failing run (a survivor would hold the pipe open for ever).
    """
    out = b""
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        while True:
            if not sel.select(limit):
                raise AssertionError(f"a process still holds the CLI's stderr open; so far: {out[-2000:]!r}")
            data = os.read(stream.fileno(), 1 << 16)
            if not data:
                return out
            out += data


@pytest.fixture(params=["helper"])
def big_corpus(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """~10 MB, counted here with a split helper for some seconds; with the param "pool", a sparse
    file (NUL bytes: binary, skipped when read) makes it large enough for the counting pool."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    text = "\n".join(TRAINING)
    for i in range(10):
        (folder / f"d{i}.txt").write_text((text + f" {i}\n") * (1_000_000 // len(text)), encoding="utf-8")
    if request.param == "pool":
        from tokviz.training.corpus import POOL_MIN_BYTES

        with open(folder / "pad.bin", "wb") as f:
            f.truncate(POOL_MIN_BYTES)
    return folder


@pytest.mark.parametrize("big_corpus", ["helper", "pool"], indirect=True)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_while_counting_leaves_no_process(big_corpus: Path, tmp_path: Path, sig: signal.Signals):
    cmd = [sys.executable, "-m", "tokviz", "train", str(big_corpus), "-o", str(tmp_path / "v"),
           "--vocab-size", "20000", "--jobs", "2"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        seen = b""
        while not seen.startswith(b"counting"):  # the first counting line: the workers are up
            line = proc.stderr.readline()
            assert line, f"the CLI ended before counting: {seen!r}"
            seen = line
        children = _descendants(proc.pid)
        assert children, "the corpus should be counted by a worker or helper process too"
        os.kill(proc.pid, sig)
        assert proc.wait() == -sig
        rest = _read_to_eof(proc.stderr).decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert _survivors(children) == {}
    assert "Traceback" not in rest and "BrokenPipeError" not in rest and "leaked" not in rest, rest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


@pytest.mark.parametrize("big_corpus", ["helper", "pool"], indirect=True)
def test_interrupted_with_ctrl_c_while_counting_exits_cleanly(big_corpus: Path, tmp_path: Path):
    cmd = [sys.executable, "-m", "tokviz", "train", str(big_corpus), "-o", str(tmp_path / "v"),
           "--vocab-size", "20000", "--jobs", "2"]
    # a process group of its own, as a shell gives a job: Ctrl-C reaches every process in it
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        line = b""
        while not line.startswith(b"counting"):
            line = proc.stderr.readline()
            assert line, "the CLI ended before counting"
        children = _descendants(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        rest = _read_to_eof(proc.stderr).decode(errors="replace")
        code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert code == 130, rest
    assert "interrupted; nothing written" in rest
    assert "Traceback" not in rest and "leaked" not in rest, rest
    assert _survivors(children) == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
