"""The one file walker: the files under folders, for `tokviz train` and `tokviz stats` alike.

Recursive, in a stable (sorted) order, with include/exclude globs, `.gitignore` and hidden-file
options. Only regular files are listed: FIFOs, devices, sockets and symlinks to them (a link to
`/dev/zero` would never end) are skipped and reported, as are broken symlinks, symlink loops and
folders that cannot be listed; nothing found inside a folder is fatal.

Globs (`--include`, `--exclude`) match a file's path relative to the folder given, or its name:
`*.py` matches `src/a.py`, `docs/*` matches everything under `docs`. Excluded folders are not
entered. Files named explicitly are always taken. Version-control folders (`.git`, `.hg`, `.svn`)
are never entered. `.gitignore` support covers what projects use (comments, `!` negation, anchored
and trailing-slash patterns, `*`, `?`, `[...]`, `**`); it does not read `.git/info/exclude` or the
global excludes file.

This module does not read file contents (the trainer's `tokviz.training.corpus` and
`tokviz.analysis.stats` do, each for its own purpose).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tokviz.core.files import path_kind

VCS_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class Skipped:
    """A file left out (not a regular file, unreadable, binary, not UTF-8...), and why."""

    path: str
    reason: str


@dataclass
class FileList:
    """What a walk found: the files to read, in order, and what was left out."""

    files: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    base: str  # the folder holding the .gitignore, relative to the walk root ("" for the root)


def _translate(body: str) -> str:
    """A gitignore glob (without `!`, leading or trailing `/`) as a regex over `/`-separated paths."""
    out, i = [], 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "[" and (end := body.find("]", i + 2)) != -1:
            inner = body[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner) + "]")
            i = end + 1
        elif body[i] == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
        else:
            out.append(re.escape(body[i]))
            i += 1
    return "".join(out)


def parse_gitignore(text: str, base: str) -> list[_Rule]:
    rules = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = _translate(line.lstrip("/"))
        regex = re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.DOTALL)
        rules.append(_Rule(regex, negate, dir_only, base))
    return rules


def is_ignored(rel: str, is_dir: bool, rules: Sequence[_Rule]) -> bool:
    """Whether `rel` (relative to the walk root) is ignored; the last matching rule wins."""
    ignored = False
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.base:
            if not rel.startswith(rule.base + "/"):
                continue
            sub = rel[len(rule.base) + 1 :]
        else:
            sub = rel
        if rule.regex.match(sub):
            ignored = not rule.negate
    return ignored


def _glob_match(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def collect_files(
    paths: Sequence[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    gitignore: bool = False,
    hidden: bool = True,
    on_folder: Callable[[int], None] | None = None,
) -> FileList:
    """List the files under `paths` in a stable order, with what was left out and why.

    Raises FileNotFoundError for a path that does not exist (the caller typed it); unreadable
    folders, symlink loops and entries that are not regular files are reported in `skipped`, not
    raised. With `hidden=False`, files and folders whose name starts with `.` are left out
    (silently) unless named. `on_folder(files_found)` is called for each folder entered (for
    progress and cancellation: it may raise).
    """
    result = FileList()
    for given in paths:
        root = Path(given)
        if root.is_file():
            result.files.append(root)
        elif root.is_dir():
            _walk(root, result, include=include, exclude=exclude, gitignore=gitignore, hidden=hidden,
                  on_folder=on_folder)
        elif root.exists() or root.is_symlink():
            result.skipped.append(Skipped(str(root), f"{path_kind(root)}, not a regular file or folder"))
        else:
            raise FileNotFoundError(2, "no such file or folder", str(root))
    return result


def _walk(
    root: Path,
    result: FileList,
    *,
    include: Sequence[str],
    exclude: Sequence[str],
    gitignore: bool,
    hidden: bool,
    on_folder: Callable[[int], None] | None,
) -> None:
    seen: set[tuple[int, int]] = set()
    rules: list[_Rule] = []

    def visit(folder: Path, rel: str) -> None:
        if on_folder is not None:
            on_folder(len(result.files))
        try:
            st = folder.stat()
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            result.skipped.append(Skipped(str(folder), f"cannot list folder: {e.strerror or e}"))
            return
        if (st.st_dev, st.st_ino) in seen:
            result.skipped.append(Skipped(str(folder), "symlink loop (folder already visited)"))
            return
        seen.add((st.st_dev, st.st_ino))
        n_rules = len(rules)
        if gitignore and (folder / ".gitignore").is_file():
            try:
                rules.extend(parse_gitignore((folder / ".gitignore").read_text("utf-8", "replace"), rel))
            except OSError as e:
                result.skipped.append(Skipped(str(folder / ".gitignore"), f"unreadable: {e.strerror}"))
        for entry in entries:
            if not hidden and entry.name.startswith("."):
                continue
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError as e:
                result.skipped.append(Skipped(entry.path, f"cannot stat: {e.strerror or e}"))
                continue
            if gitignore and is_ignored(child_rel, is_dir, rules):
                continue
            if is_dir:
                if entry.name not in VCS_DIRS and not _glob_match(child_rel, exclude):
                    visit(Path(entry.path), child_rel)
            elif is_file:
                if include and not _glob_match(child_rel, include):
                    continue
                if not _glob_match(child_rel, exclude):
                    result.files.append(Path(entry.path))
            elif entry.is_symlink() and not os.path.exists(entry.path):
                result.skipped.append(Skipped(entry.path, "broken symlink"))
            else:  # say what it is: a FIFO, a link to /dev/zero...
                result.skipped.append(Skipped(entry.path, f"{path_kind(entry.path)}, not a regular file"))
        del rules[n_rules:]

    visit(root, "")
