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
    left = sorted(p for p in tmp_path.iterdir() if p.name.startswith("."))
    if n > 1:  # the kill left temporaries (and backups): the next save removes them and says so
        assert left
    removed = write_files_atomic([(tmp_path / "v.tiktoken", b"again"), (tmp_path / "v.json", b"{}")])
    assert sorted(removed) == left
    assert snapshot(tmp_path) == {"v.json": b"{}", "v.tiktoken": b"again"}


def test_stale_files_are_only_tokviz_own_of_that_name_from_a_gone_process(tmp_path: Path, caplog):
    from tokviz.core import files

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = int(dead.stdout)
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        names = {
            f".v.json.0123456789ab-{gone}.tmp": True,  # a killed save's temporary
            f".v.json.0123456789ab-{gone}.old": True,  # and its backup
            f".v.json.0123456789ab-{live.pid}.tmp": False,  # a save still running elsewhere
            f".v.json.0123456789ab-{os.getpid()}.tmp": False,  # or in this process
            f".w.json.0123456789ab-{gone}.tmp": False,  # another file's
            ".v.json.0123456789ab.tmp": False,  # without a process id: young, so maybe in use
            f".v.json.0123456789ab-{gone}.tmp.keep": False,  # not the pattern
            f".v.json.0123456789AB-{gone}.tmp": False,
            f"v.json.0123456789ab-{gone}.tmp": False,
            f".v.json.12345-{gone}.tmp": False,
        }
        for name in names:
            (tmp_path / name).write_bytes(b"x")
        (tmp_path / "target").write_bytes(b"not ours")
        os.symlink(tmp_path / "target", tmp_path / f".v.json.aaaaaaaaaaaa-{gone}.tmp")  # a link: left
        os.mkdir(tmp_path / f".v.json.bbbbbbbbbbbb-{gone}.old")  # a folder: left
        with caplog.at_level("WARNING", logger="tokviz.core.files"):
            removed = files.write_atomic(tmp_path / "v.json", b"{}")
        assert sorted(p.name for p in removed) == sorted(n for n, stale in names.items() if stale)
        kept = {p.name for p in tmp_path.iterdir()}
        assert kept == {n for n, stale in names.items() if not stale} | {
            "v.json", "target", f".v.json.aaaaaaaaaaaa-{gone}.tmp", f".v.json.bbbbbbbbbbbb-{gone}.old"}
        assert "removed 2 files an interrupted save left: " in caplog.text
        assert (tmp_path / "target").read_bytes() == b"not ours"
    finally:
        live.communicate(b"")


def test_an_old_temporary_without_a_process_id_is_stale(tmp_path: Path, monkeypatch):
    from tokviz.core import files

    (tmp_path / ".v.json.0123456789ab.tmp").write_bytes(b"x")
    monkeypatch.setattr(files, "STALE_AFTER_S", 0.0)
    assert files.remove_stale([tmp_path / "v.json"]) == [tmp_path / ".v.json.0123456789ab.tmp"]


def test_a_failed_save_keeps_the_stale_backups(tmp_path: Path):
    """The backup a kill between the renames left is the way back until a save succeeds."""
    (tmp_path / "v.tiktoken").write_bytes(b"old ranks")
    (tmp_path / "v.json").write_bytes(b'{"old": 1}')
    proc = subprocess.run([sys.executable, "-c", KILL_CHILD, str(tmp_path), "6"], capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    left = snapshot(tmp_path)
    with pytest.raises(SaveError):
        FailAt([(tmp_path / "v.tiktoken", b"n"), (tmp_path / "v.json", b"{}")], 3).commit()
    assert snapshot(tmp_path) == left
    assert b"old ranks" in [data for name, data in left.items() if name.endswith(".old")]


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


def test_a_missing_folder_is_refused_not_made(tmp_path: Path):
    """`stats --csv no/such/x.csv` made the whole missing tree."""
    from tokviz.core.files import write_atomic

    with pytest.raises(FileNotFoundError, match=r"no such folder .*no[/\\]such") as e:
        write_atomic(tmp_path / "no" / "such" / "x.csv", b"x")
    assert e.value.strerror.startswith("no such folder") and not (tmp_path / "no").exists()
    write_atomic(tmp_path / "made" / "x.csv", b"x", make_folders=True)  # tokviz's own folders
    assert (tmp_path / "made" / "x.csv").read_bytes() == b"x"


def test_a_folder_in_the_way_is_named_and_leaves_no_temporary(tmp_path: Path):
    from tokviz.core.files import write_atomic

    (tmp_path / "x.csv").mkdir()
    with pytest.raises(IsADirectoryError) as e:
        write_atomic(tmp_path / "x.csv", b"x")
    assert e.value.filename == str(tmp_path / "x.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["x.csv"] and not any((tmp_path / "x.csv").iterdir())
