"""`python -m tokviz.gui [options]` opens the compare window."""

from __future__ import annotations

import sys

from tokviz.gui.app import run

raise SystemExit(run(sys.argv[1:]))
