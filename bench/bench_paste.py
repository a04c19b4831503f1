"""Benchmark a large text going into the compare window's editor: paste, open a file, drop a file.

For each way in (paste: Ctrl+V's insertFromMimeData; open: File > Open's open_text_file; drop: a
file dropped on the editor), offscreen, a fresh ~10 MB mixed text (the shipped samples repeated,
~150k lines) goes into the editor of a compare window and is measured:
  (a) the event loop's longest gap and median gap (a 10 ms QTimer; a gap of G ms means the GUI
      thread was blocked for about G - 10 ms) from the action until the editor holds the whole
      text (`filled`, or at once for a text that goes in whole),
  (b) how long that took, and that `raw_text()` is the text exactly.
The panes' own work on the text is not measured (no panes unless -t is given: then the time
until they are laid out is printed too, their stalls are bench_gui.py's). `--whole` puts the text
in with one insert (FILL_SLICE past the text's length), as before slices: the figure to compare.

    .venv/bin/python bench/bench_paste.py [--mb 10] [--rounds 2] [--whole] [-t cl100k_base ...]

This is not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("TOKVIZ_DATA_DIR", str(ROOT / ".cache" / "tokviz"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_diff_mode import mixed_text  # noqa: E402  (the scripts of bench/ run from their folder)
from bench_gui import open_window, ready  # noqa: E402
from PySide6.QtCore import QElapsedTimer, QMimeData, QPointF, Qt, QTimer, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402

from tokviz.gui.compare import editor as editor_module  # noqa: E402


def paste(window, text: str, path: Path):
    data = QMimeData()  # the clipboard's data, there before Ctrl+V
    data.setText(text)

    def act() -> None:
        window.editor.selectAll()
        window.editor.insertFromMimeData(data)
    return act


def open_file(window, text: str, path: Path):
    return lambda: window.open_text_file(str(path))


def drop(window, text: str, path: Path):
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, data, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    def act() -> None:
        window.editor.dropEvent(event)  # what the viewport's drop event calls
        assert data is not None  # the event does not own its data: kept alive until here
    return act


WAYS = {"paste": paste, "open": open_file, "drop": drop}


def run(app, window, way: str, text: str, path: Path) -> dict:
    action = WAYS[way](window, text, path)
    gaps: list[float] = []
    clock = QElapsedTimer()
    ticker = QTimer(interval=10)
    stamps: list[float] = []
    ticker.timeout.connect(lambda: (gaps.append(clock.nsecsElapsed() / 1e6), clock.restart(),
                                    stamps.append(time.perf_counter())))
    clock.start()
    ticker.start()
    started: list[float] = []
    # from inside the event loop, so that the action's own time is one of the gaps
    QTimer.singleShot(0, lambda: (started.append(time.perf_counter()), action()))
    deadline = time.perf_counter() + 300
    while (not started or window.editor.filling) and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.001)
    t0 = started[0]
    filled = time.perf_counter() - t0
    ticks = len(gaps)
    while len(gaps) == ticks and time.perf_counter() < deadline:  # the gap the last step made
        app.processEvents()
        time.sleep(0.001)
    editor_gaps = list(gaps)
    if os.environ.get("BENCH_GAPS"):
        print([(round(g), round(stamps[i] - t0, 2)) for i, g in enumerate(editor_gaps) if g > 30])
    exact = window.editor.raw_text() == text
    panes = None
    while window.panes and time.perf_counter() < deadline:
        app.processEvents()
        if ready(window, text):
            panes = time.perf_counter() - t0
            break
        time.sleep(0.002)
    ticker.stop()
    return {"filled": filled, "max_gap": max(editor_gaps, default=0.0),
            "median_gap": statistics.median(editor_gaps) if editor_gaps else 0.0, "exact": exact,
            "panes": panes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--whole", action="store_true", help="one insert, as before slices")
    ap.add_argument("-t", "--tokenizer", action="append", dest="specs", default=[])
    args = ap.parse_args(argv)
    opened = open_window(args.specs or ["cl100k_base"])
    if opened is None:
        return 1
    app, window = opened
    if not args.specs:  # the editor alone: no pane's work in the figures
        for pane in list(window.panes):
            window.remove_pane(pane)
    if args.whole:
        editor_module.FILL_SLICE = 10**12
    folder = Path(tempfile.mkdtemp())
    print(f"{args.mb:g} MB, panes: {args.specs or 'none'}, {'one insert' if args.whole else 'slices'}, "
          f"load {os.getloadavg()[0]:.1f}")
    for r in range(args.rounds):
        for way in WAYS:
            text = mixed_text(args.mb, salt=100 * r + len(way))
            path = folder / f"{way}{r}.txt"
            path.write_bytes(text.encode("utf-8"))
            window.set_text("")
            app.processEvents()
            out = run(app, window, way, text, path)
            panes = f", panes laid out at {out['panes']:.2f} s" if out["panes"] is not None else ""
            print(f"round {r} {way:5}: editor holds it after {out['filled']:.2f} s, longest gap "
                  f"{out['max_gap']:.0f} ms, median {out['median_gap']:.0f} ms, exact {out['exact']}{panes}")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
