"""Running the `tokviz` command the way the peer tests need it: in-process for speed, and as the
real script (a child process) where stdin, exit codes and stderr must be the user's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tokviz.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """`tokviz ARGV...` in this process: (exit status, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def encode_json(capsys, *argv: str) -> list[dict]:
    """`tokviz encode --json ARGV...`, parsed; the command must succeed."""
    code, out, err = run(capsys, "encode", "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def ids_of(capsys, *argv: str) -> list[list[int]]:
    """Each tokenizer's ids for `tokviz encode --json ARGV...`."""
    return [[t["id"] for t in e["tokens"]] for e in encode_json(capsys, *argv)]


def script(*argv: str, stdin: bytes | None = None, cwd: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real `python -m tokviz ARGV...`, with stdin as given (or none: an empty, closed stdin)."""
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "tokviz", *argv], input=stdin if stdin is not None else b"",
                          capture_output=True, cwd=cwd, env=env, timeout=600)
