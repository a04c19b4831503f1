"""Benchmark closing the compare window: how long `shutdown` takes with the default panes loaded.

Each pane's tokenizer process is told goodbye; the window waits for them. The panes are told all
at once and the processes exit without the interpreter's teardown (measured on a 2-core machine
at load average ~13: 1.12-1.21 s for four panes when they were stopped one after another with
the teardown, 0.08-0.44 s now).

    .venv/bin/python bench/bench_close.py [--runs 3] [-t cl100k_base -t ...]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("TOKVIZ_DATA_DIR", str(ROOT / ".cache" / "tokviz"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402

from tokviz.gui.app import build_app, build_window  # noqa: E402


def close_once(specs: list[str] | None) -> tuple[int, float]:
    app = build_app()
    with tempfile.TemporaryDirectory() as tmp:
        settings = QSettings(str(Path(tmp) / "bench.ini"), QSettings.Format.IniFormat)
        window = build_window(settings=settings, restore=False, specs=specs, text="Hello, 세계! 👋🏽")
        window.show()
        while not all(p.result is not None or p.error for p in window.panes):
            app.processEvents()
            time.sleep(0.01)
        t0 = time.perf_counter()
        window.close()  # save_settings + shutdown
        seconds = time.perf_counter() - t0
        n = len(window.panes)
        window.deleteLater()
        app.processEvents()
    return n, seconds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("-t", dest="specs", action="append", help="panes (default: the catalog's defaults)")
    args = p.parse_args(argv)
    for _ in range(args.runs):
        n, seconds = close_once(args.specs)
        print(f"close with {n} panes: {seconds:.3f} s")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
