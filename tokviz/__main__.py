"""`python -m tokviz` and the `tokviz` script: the app, or a command of the command line.

The one place that knows both: `tokviz.gui` and `tokviz.cli` stand side by side and do not import
each other. With no command, `gui`, or an option of the app's, the compare window opens and parses
its own options (`tokviz --sample mixed -t qwen`, `tokviz gui FILE`); anything else is a command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def opens_app(argv: Sequence[str]) -> bool:
    """Whether the arguments are the app's rather than a command's.

    >>> [opens_app(a) for a in ([], ["gui", "x.txt"], ["--sample", "mixed"], ["--help"], ["encode", "hi"])]
    [True, True, True, False, False]
    """
    return not argv or argv[0] == "gui" or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if opens_app(argv):
        from tokviz.gui.app import run

        return run(["tokviz", *(argv[1:] if argv and argv[0] == "gui" else argv)])
    from tokviz.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
