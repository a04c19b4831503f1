"""All-or-nothing saves on a real folder: a failure or a kill at any step leaves the old files."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokviz.core.files import AtomicGroup, SaveError, write_files_atomic

NAMES = ("v.tiktoken", "v.json")


class FailAt(AtomicGroup):
    """Fails the n-th filesystem step with a full disk, as the real one would."""

    def __init__(self, files, n: int) -> None:
        super().__init__(files)
        self.n = n
        self.steps: list[tuple[str, Path]] = []

    def step(self, what: str, path: Path) -> None:
        self.steps.append((what, path))
        if len(self.steps) == self.n:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_writes_both(tmp_path: Path):
    write_files_atomic([(tmp_path / "v.tiktoken", b"ranks"), (tmp_path / "v.json", b"{}")])
    assert snapshot(tmp_path) == {"v.json": b"{}", "v.tiktoken": b"ranks"}


@pytest.mark.parametrize("old", [True, False], ids=["over an old pair", "fresh"])
def test_failure_at_every_step_changes_nothing(tmp_path: Path, old: bool):
    if old:
        (tmp_path / "v.tiktoken").write_bytes(b"old ranks")
        (tmp_path / "v.json").write_bytes(b'{"old": 1}')
    new = [(tmp_path / n, f"new {n}".encode()) for n in NAMES]
    before = snapshot(tmp_path)
    steps = 6 if old else 4  # write, write, (backup, backup,) replace, replace
    for n in range(1, steps + 1):
        with pytest.raises(SaveError) as e:
            FailAt(new, n).commit()
        assert snapshot(tmp_path) == before, f"step {n}"
        assert "cannot save" in str(e.value) and str(tmp_path) in str(e.value)
        assert "No space left on device" in str(e.value) and "\n" not in str(e.value)


def test_second_replace_blocked_by_a_folder_restores_the_first(tmp_path: Path):
    (tmp_path / "v.tiktoken").write_bytes(b"old ranks")
    (tmp_path / "v.json").mkdir()
    (tmp_path / "v.json" / "keep").write_bytes(b"k")
    with pytest.raises(SaveError, match=r"cannot save .*v\.json: Is a directory"):
        write_files_atomic([(tmp_path / "v.tiktoken", b"new"), (tmp_path / "v.json", b"{}")])
    assert (tmp_path / "v.tiktoken").read_bytes() == b"old ranks"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.json", "v.tiktoken"]
    assert (tmp_path / "v.json" / "keep").read_bytes() == b"k"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    old=st.lists(st.one_of(st.none(), st.binary(max_size=64)), min_size=2, max_size=3),
    new=st.lists(st.binary(max_size=64), min_size=3, max_size=3),
    n=st.integers(min_value=1, max_value=9),
)
def test_any_failed_save_leaves_previous_files_byte_identical(tmp_path_factory, old, new, n):
    folder = tmp_path_factory.mktemp("save")
    names = [f"f{i}" for i in range(len(old))]
    for name, data in zip(names, old):
        if data is not None:
            (folder / name).write_bytes(data)
    before = snapshot(folder)
    group = FailAt([(folder / name, data) for name, data in zip(names, new)], n)
    try:
        group.commit()
    except SaveError:
        assert snapshot(folder) == before
    else:
        assert len(group.steps) < n
        assert snapshot(folder) == dict(zip(names, new[: len(names)]))


KILL_CHILD = r"""
import os, signal, sys
from pathlib import Path
from tokviz.core.files import AtomicGroup

class KillAt(AtomicGroup):
    count = 0
    def step(self, what, path):
        KillAt.count += 1
        if KillAt.count == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

folder = Path(sys.argv[1])
KillAt([(folder / "v.tiktoken", b"new ranks"), (folder / "v.json", b'{"new": 1}')]).commit()
"""


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_save_killed_at_a_step(tmp_path: Path, n: int):
    """kill -9 of the process doing the save: before the renames the old pair stays; the step
    between the two renames is the one window left (the loaders' sha256 check covers it)."""
    (tmp_path / "v.tiktoken").write_bytes(b"old ranks")
    (tmp_path / "v.json").write_bytes(b'{"old": 1}')
    proc = subprocess.run([sys.executable, "-c", KILL_CHILD, str(tmp_path), str(n)], capture_output=True)
    visible = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith(".")}
    # steps: write, write, backup, backup, replace, replace
    if n <= 5:
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        assert visible == {"v.json": b'{"old": 1}', "v.tiktoken": b"old ranks"}
    else:
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        assert visible == {"v.json": b'{"old": 1}', "v.tiktoken": b"new ranks"}


RLIMIT_CHILD = r"""
import resource, signal, sys
from pathlib import Path
from tokviz.core.files import SaveError, write_files_atomic

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
folder = Path(sys.argv[1])
try:
    write_files_atomic([(folder / "v.tiktoken", b"r" * 500), (folder / "v.json", b"j" * 5000)])
except SaveError as e:
    print(e)
"""


def test_a_real_write_failure_mid_save(tmp_path: Path):
    """A file-size limit makes the kernel refuse the second file's write, as a full disk does."""
    (tmp_path / "v.tiktoken").write_bytes(b"old ranks")
    (tmp_path / "v.json").write_bytes(b'{"old": 1}')
    out = subprocess.run([sys.executable, "-c", RLIMIT_CHILD, str(tmp_path)], capture_output=True, text=True)
    assert out.stdout.strip() == f"cannot save {tmp_path / 'v.json'}: File too large; nothing was changed"
    assert snapshot(tmp_path) == {"v.json": b'{"old": 1}', "v.tiktoken": b"old ranks"}
