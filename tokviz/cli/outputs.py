"""Output files a command may write: only its own kind of vocabulary, never the base it read.

`tokviz train -o NAME` and `tokviz extend ... -o OUT` replace a vocabulary they wrote before
(a `NAME.json` sidecar of their format, and for `train` of the same name), and refuse anything
else that is in the way, a user's `package.json` or `settings.tiktoken`, unless `--force`;
`extend` never writes over the files of its base, not even with `--force`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from tokviz.cli.errors import CliError
from tokviz.core.sidecar import sidecar_path


def check_output_folder(option: str, path: str) -> None:
    """Refuse an output file (`--html x.html`) that is a folder or whose folder does not exist,
    before any work: a typo must not become a new folder tree, nor fail only once everything is
    counted."""
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        raise CliError(f"{option} {path}: that is a folder; give a file name (in it: {os.path.join(path, 'NAME')})")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CliError(f"{option} {path}: no such folder {folder}")


def vocabulary_output(output: str) -> str:
    """`-o` of `train` and `extend`, checked before any work, `~` expanded: it names the files'
    stem, so a folder (an existing one, or a name ending in a separator, `.` or `..`) is refused
    rather than becoming `folder.tiktoken` beside it, and so is a name in a missing folder.

    >>> vocabulary_output("out/")
    Traceback (most recent call last):
    ...
    tokviz.cli.errors.CliError: -o out/ names a folder; name the vocabulary in it: -o out/NAME
    """
    if not output.strip():
        raise CliError("-o is empty: name the vocabulary, e.g. -o myvocab")
    path = Path(output).expanduser()
    if output.endswith(("/", os.sep)) or path.name in ("", ".", "..") or path.is_dir():
        inside = f"{output.rstrip('/' + os.sep) or output}{os.sep}NAME"
        raise CliError(f"-o {output} names a folder; name the vocabulary in it: -o {inside}")
    if not path.parent.is_dir():  # say so before a long run, not after it
        raise CliError(f"cannot save to {output}: folder {path.parent} does not exist")
    return str(path)


def owned(ranks_path: Path, *, fmt: str, name: str | None = None) -> bool:
    """True when `NAME.json` beside `ranks_path` is a tokviz sidecar of `fmt` (named `name`)."""
    try:
        data = json.loads(sidecar_path(ranks_path).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("format") == fmt and (name is None or data.get("name") == name)


def check_outputs(
    paths: Sequence[Path], *, fmt: str, name: str | None = None, force: bool = False,
    base: Sequence[Path] = (),
) -> None:
    """Refuse to write `paths` (ranks first) over files that are not this command's own output.

    `base`: files the command reads (an extension's base and its sidecar), never overwritten.
    """
    for path in paths:
        if any(_same(path, b) for b in base):
            raise CliError(f"{path} is the base vocabulary's own file; write the output elsewhere (another -o)")
    existing = [p for p in paths if os.path.lexists(p)]
    if not existing or force or owned(paths[0], fmt=fmt, name=name):
        return
    what = f"a tokviz vocabulary named {name!r}" if name else f"a {fmt} vocabulary"
    raise CliError(
        f"{existing[0]} exists and is not {what}; refusing to overwrite it (choose another -o, or --force)"
    )


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.expanduser().resolve() == b.expanduser().resolve()
