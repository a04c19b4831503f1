"""The one file walker (train and stats): globs, .gitignore, hidden files, what is not a regular file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.files import names, write
from tokviz.core.walk import collect_files, is_ignored, parse_gitignore


def test_walk_include_exclude(tree: Path):
    assert names(collect_files([tree]).files) == ["a.txt", "b.py", "blob.dat", "c.md", "latin1.txt", "x.js"]
    assert names(collect_files([tree], include=["*.py", "*.md"]).files) == ["b.py", "c.md"]
    excluded = collect_files([tree], exclude=["node_modules", "*.dat"])
    assert names(excluded.files) == ["a.txt", "b.py", "c.md", "latin1.txt"]
    assert names(collect_files([tree], include=["src/*"]).files) == ["b.py", "c.md"]


def test_explicit_files_and_missing_path(tree: Path):
    assert names(collect_files([tree / "a.txt", tree / "src"]).files) == ["a.txt", "b.py", "c.md"]
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        collect_files([tree / "nope"])


def test_gitignore(tree: Path):
    write(tree, ".gitignore", "# comment\n*.dat\nnode_modules/\n/latin1.txt\n")
    write(tree, "src/.gitignore", "deep/\n!keep.dat\n")
    write(tree, "src/keep.dat", "kept\n")
    files = names(collect_files([tree], gitignore=True).files)
    assert files == [".gitignore", ".gitignore", "a.txt", "b.py", "keep.dat"]


def test_gitignore_rules():
    rules = parse_gitignore("build/\n**/tmp\n*.log\n!important.log\ndocs/*.html\n", "")
    assert is_ignored("build", True, rules) and not is_ignored("build", False, rules)
    assert is_ignored("a/b/tmp", True, rules) and is_ignored("tmp", False, rules)
    assert is_ignored("x/y.log", False, rules) and not is_ignored("x/important.log", False, rules)
    assert is_ignored("docs/a.html", False, rules) and not is_ignored("x/docs/a.html", False, rules)


def test_symlink_loop_and_fifo_reported(tmp_path: Path):
    write(tmp_path, "d/a.txt", "text text\n")
    os.symlink(tmp_path / "d", tmp_path / "d" / "loop")
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    listing = collect_files([tmp_path])
    assert names(listing.files) == ["a.txt"]
    reasons = {Path(s.path).name: s.reason for s in listing.skipped}
    assert "symlink loop" in reasons["loop"]
    assert reasons["pipe"] == "a named pipe (FIFO), not a regular file"
    assert reasons["dangling"] == "broken symlink"


def test_symlink_to_a_device_is_skipped_not_read(tmp_path: Path):
    write(tmp_path, "a.txt", "text\n")
    os.symlink("/dev/zero", tmp_path / "zeros.txt")  # reading it would never end
    os.mkfifo(tmp_path / "pipe.txt")  # opening it would block until a writer comes
    listing = collect_files([tmp_path])
    assert names(listing.files) == ["a.txt"]
    assert {Path(s.path).name: s.reason for s in listing.skipped} == {
        "pipe.txt": "a named pipe (FIFO), not a regular file",
        "zeros.txt": "a symlink to /dev/zero (a character device), not a regular file",
    }
    named = collect_files([tmp_path / "zeros.txt", tmp_path / "pipe.txt"])
    assert named.files == [] and [s.reason for s in named.skipped] == [
        "a symlink to /dev/zero (a character device), not a regular file or folder",
        "a named pipe (FIFO), not a regular file or folder",
    ]


def test_hidden_files_and_folders_left_out_unless_named(tmp_path: Path):
    write(tmp_path, "a.txt", "a\n")
    write(tmp_path, ".env", "SECRET=1\n")
    write(tmp_path, ".cache/b.txt", "b\n")
    write(tmp_path, ".git/config", "[core]\n")
    assert names(collect_files([tmp_path]).files) == [".env", "a.txt", "b.txt"]  # never .git
    quiet = collect_files([tmp_path], hidden=False)
    assert names(quiet.files) == ["a.txt"] and quiet.skipped == []
    assert names(collect_files([tmp_path / ".env"], hidden=False).files) == [".env"]
