"""`python -m tokviz` and the `tokviz` script."""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from tokviz.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
