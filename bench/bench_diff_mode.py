"""Benchmark the compare window's diff mode against the normal view: 1 MB, four panes.

For each mode (normal, then diff), offscreen, a fresh ~1 MB text is pasted into the same window
(each round's text differs, so everything is recomputed) and measured:
  (a) the event loop's longest gap and median gap (a 10 ms QTimer; a gap of G ms means the GUI
      thread was blocked for about G - 10 ms) from the paste until every pane is laid out and, in
      diff mode, the diff is shown;
  (b) how long that took;
  (c) repainting every pane's viewport 50 times (what scrolling costs; the diff mode adds its marks
      over the cached lines), scrolled to the middle of the text.

    .venv/bin/python bench/bench_diff_mode.py [--mb 1.0] [--rounds 2] [-t cl100k_base -t ...]

This is not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("TOKVIZ_DATA_DIR", str(ROOT / ".cache" / "tokviz"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_gui import open_window  # noqa: E402  (the scripts of bench/ run from their folder)
from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402

from tokviz.core.resources import samples  # noqa: E402

DEFAULT = ["cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1"]


def mixed_text(megabytes: float, salt: int) -> str:
    block = "\n".join(s.read_text() for s in samples())
    target = int(megabytes * 1_000_000)
    return (f"round {salt}\n" + block * (target // len(block.encode()) + 1))[:target]


def run_round(app, window, text: str, diff: bool) -> dict:
    gaps: list[float] = []
    clock = QElapsedTimer()
    ticker = QTimer(interval=10)
    ticker.timeout.connect(lambda: (gaps.append(clock.nsecsElapsed() / 1e6), clock.restart()))
    clock.start()
    ticker.start()
    t0 = time.perf_counter()
    window.set_text(text)
    done: list[float] = []

    def finished() -> bool:
        text_now = window._offsets.text
        laid = all(p.error is not None or (p.result is not None and p.result.text == text_now
                                           and p.view.layout_done) for p in window.panes)
        if not laid or not diff:
            return laid
        outcome = window.diff.outcome
        return outcome is not None and all(p.result is r for p, r in zip(window.panes, outcome.results))

    deadline = t0 + 180
    while time.perf_counter() < deadline:
        app.processEvents()
        if finished():
            done.append(time.perf_counter() - t0)
            break
        time.sleep(0.002)
    ticker.stop()
    for pane in window.panes:
        pane.view.scroll_to_char(len(text) // 2)
    app.processEvents()
    t1 = time.perf_counter()
    for _ in range(50):
        for pane in window.panes:
            pane.view.viewport().grab()  # a full paint event (cached lines blitted, marks drawn)
    repaint_ms = (time.perf_counter() - t1) * 1000 / 50
    marks = [0 if p.view.boundary_marks is None else len(p.view.boundary_marks) for p in window.panes]
    return {"seconds": done[0] if done else None, "max_gap": max(gaps, default=0.0),
            "median_gap": statistics.median(gaps) if gaps else 0.0, "repaint_ms": repaint_ms, "marks": marks}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("-t", "--tokenizer", action="append", dest="specs")
    args = ap.parse_args(argv)
    opened = open_window(args.specs or DEFAULT)
    if opened is None:
        return 1
    app, window = opened
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"panes {[p.spec for p in window.panes]}")
    salt = 0
    for diff in (False, True):
        window.set_diff_mode(diff)
        for _ in range(args.rounds):
            salt += 1
            r = run_round(app, window, mixed_text(args.mb, salt), diff)
            seconds = f"{r['seconds']:.2f} s" if r["seconds"] is not None else "timeout"
            extra = ""
            if diff and window.diff.outcome is not None:
                o = window.diff.outcome
                extra = (f", agreement {[round(a, 1) for a in o.agreement]}, marks per pane {r['marks']}, "
                         f"editor underlines in view {len(window.editor.extraSelections())} of {len(o.editor_ranges)}")
            print(f"{'diff  ' if diff else 'normal'} round {salt}: ready in {seconds}, longest gap "
                  f"{r['max_gap']:.0f} ms, median gap {r['median_gap']:.1f} ms, repaint of all panes "
                  f"{r['repaint_ms']:.1f} ms{extra}", flush=True)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
