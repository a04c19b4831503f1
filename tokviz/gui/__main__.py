"""`python -m tokviz.gui [options]` opens the compare window."""

from __future__ import annotations

import sys

from tokviz.gui.app import run

if __name__ == "__main__":  # the tokenizer processes are spawned: they re-import this module
    raise SystemExit(run(sys.argv))
