"""Benchmark the compare window: paste ~1 MB of mixed text into a window with four panes.

Measures, offscreen:
  (a) the longest event-loop stall while tokenizing and laying out (a 10 ms QTimer records the
      gaps between its ticks; a gap of G ms means the GUI thread was blocked for about G - 10 ms),
      with and without the editor's own insert of the text (the first gap),
  (b) the time from the paste until every pane is tokenized and its visible lines are drawn, and
      until every line is laid out,
  (c) resident memory of the app and every process it started, at the end and at its peak (sampled
      every 50 ms; the headline sums RSS, which counts a page once per mapping of it: the
      libraries both processes map, and a font file the window maps once per FreeType face it
      opens. So a second later the PSS sum is printed too, and, where /proc/PID/pagemap gives
      physical frames (root), the resident pages of all the processes with each page counted
      once), and the CPU seconds they spent from the paste to the end (what a noisy shared
      machine distorts least).

With --text rare, the text is not the samples but 70 % Python source (the standard library's
`.py` files) and 30 % random CJK characters, most of them rare (the Unified Ideographs and
Extension A): nearly every CJK token is a fragment of its own kind, the case where a pane's
distinct tokens and fragment contexts number tens of thousands.

With --stages, also where each pane's time went: its request waiting in the tokenizer process,
the encode, the reply landing in the pane's worker, the preparation of cells and widths, and the
GUI thread's share (the result landing, layout slices, painting new lines).

    .venv/bin/python bench/bench_gui.py [--mb 1.0] [--text samples|rare] [-t cl100k_base -t ...] [--stages]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("TOKVIZ_DATA_DIR", str(ROOT / ".cache" / "tokviz"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tokviz.core.resources import samples  # noqa: E402

# The tokenizer process is spawned, and a spawned child imports the parent's main module first:
# this script's, not the app's (the `tokviz` script imports nothing). With Qt and the GUI imported
# here unconditionally, the benchmark's tokenizer process held 57 MiB the app's never does.
if __name__ != "__mp_main__":
    from PySide6.QtCore import QElapsedTimer, QSettings, QTimer

    from tokviz.core.catalog import default_specs
    from tokviz.gui.app import build_app, build_window


def mixed_text(megabytes: float) -> str:
    """All shipped samples, repeated to about `megabytes` of UTF-8."""
    block = "\n".join(s.read_text() for s in samples())
    target = int(megabytes * 1_000_000)
    reps = target // len(block.encode("utf-8")) + 1
    return (block * reps)[: target]


def rare_text(megabytes: float) -> str:
    """Python source, then random CJK (rare characters, short runs between spaces, commas,
    full stops and newlines), about `megabytes` of UTF-8 in all (a fixed seed: the same text
    on every run)."""
    import random
    import sysconfig

    target = int(megabytes * 1_000_000)
    source = ""
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        source += path.read_text(encoding="utf-8", errors="replace")
        if len(source) >= 0.7 * target:
            break
    rnd = random.Random(7)
    parts, size = [], 0
    while size < 0.3 * target:
        low, high = rnd.choice([(0x4E00, 0x9FFF), (0x3400, 0x4DBF)])
        word = "".join(chr(rnd.randrange(low, high)) for _ in range(rnd.randint(1, 8))) + rnd.choice(" ，。\n")
        parts.append(word)
        size += len(word.encode("utf-8"))
    return source[: int(0.7 * target)] + "".join(parts)


class StallMeter:
    """A 10 ms timer whose tick gaps show how long the GUI thread was blocked."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.at: list[float] = []  # when each gap ended
        self.clock = QElapsedTimer()
        self.timer = QTimer(interval=10)
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.clock.start()
        self.timer.start()

    def _tick(self) -> None:
        self.gaps.append(self.clock.nsecsElapsed() / 1e6)
        self.at.append(time.perf_counter())
        self.clock.restart()


def open_window(specs: list[str]):
    """The app and a 1400x900 compare window on `specs` with every tokenizer loaded (None, said
    on stderr, when they do not load within a minute)."""
    app = build_app([])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "bench.ini"), QSettings.Format.IniFormat)
    window = build_window(specs=specs, text="", settings=settings, restore=False)
    window.resize(1400, 900)
    window.show()
    deadline = time.perf_counter() + 60
    while any(p.tokenizer is None and p.error is None for p in window.panes):
        app.processEvents()
        time.sleep(0.005)
        if time.perf_counter() > deadline:
            print("tokenizers did not load", file=sys.stderr)
            return None
    return app, window


def tokenized(window, text: str) -> bool:
    return all(p.error is not None or (p.result is not None and p.result.text == text) for p in window.panes)


def drawn(window, text: str) -> bool:
    """Every pane is tokenized and has painted the lines in its viewport (from its line cache)."""
    return tokenized(window, text) and all(
        p.error is not None or all(line in p.view._line_cache for line in p.view.visible_lines())
        for p in window.panes
    )


def ready(window, text: str) -> bool:
    return tokenized(window, text) and all(p.error is not None or p.view.layout_done for p in window.panes)


class GuiStages:
    """How long the GUI thread spends in each step of showing a result, per pane: the result
    landing (`TokenPane._on_finished`, which starts the layout), layout slices and painting new
    lines. Wraps the methods of the classes (a benchmark's probe; the app itself is unchanged)."""

    def __init__(self) -> None:
        from tokviz.gui.compare.editor import InputEditor
        from tokviz.gui.compare.pane import TokenPane
        from tokviz.gui.compare.token_view import TokenView

        self.calls: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for cls, name in ((TokenPane, "_on_finished"), (TokenView, "_layout_slice"), (TokenView, "_line_pixmap"),
                          (InputEditor, "_fill_step")):
            self._wrap(cls, name)

    def _wrap(self, cls, name: str) -> None:
        original = getattr(cls, name)
        calls = self.calls

        def timed(obj, *args, **kwargs):
            t = time.perf_counter()
            try:
                return original(obj, *args, **kwargs)
            finally:
                owner = getattr(obj, "spec", None) or getattr(obj.parent(), "spec", None) or type(obj).__name__
                calls.setdefault((owner, name), []).append((t, time.perf_counter()))

        setattr(cls, name, timed)

    def explain(self, gaps, t0: float) -> None:
        """What the GUI thread did during each of `gaps` ((ms, ended at)): the probed calls that
        overlap it and their share of it (the rest is waiting for the GIL or for a core)."""
        for gap, end in gaps:
            start = end - gap / 1000
            inside = [(owner, name, max(a, start), min(b, end)) for (owner, name), spans in self.calls.items()
                      for a, b in spans if b > start and a < end]
            busy = sum(b - a for *_, a, b in inside)
            what = ", ".join(f"{owner} {name.strip('_')} {(b - a) * 1000:.0f}" for owner, name, a, b in inside)
            print(f"  gap {gap:.0f} ms @ {end - t0:.2f}: probed calls {busy * 1000:.0f} ms ({what or 'none'})")

    def report(self, window, t0: float) -> None:
        print("per pane, seconds after the paste (tokenizer process, pane worker, GUI thread):")
        for p in window.panes:
            if p.result is None:
                continue
            parts = [f"{name} {a - t0:.2f}-{b - t0:.2f}" if b > a else f"{name} {a - t0:.2f}"
                     for name, a, b in p.result.extra.get("stages", ())]
            print(f"  {p.spec:>16}: " + ", ".join(parts))
            gui = []
            for name in ("_on_finished", "_layout_slice", "_line_pixmap"):
                spans = self.calls.get((p.spec, name), [])
                if spans:
                    longest = max(b - a for a, b in spans)
                    gui.append(f"{name.strip('_')} x{len(spans)} {sum(b - a for a, b in spans) * 1000:.0f} ms "
                               f"(longest {longest * 1000:.0f}) {spans[0][0] - t0:.2f}-{spans[-1][1] - t0:.2f}")
            print(f"  {'':>16}  GUI: " + "; ".join(gui))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("-t", "--tokenizer", action="append", dest="specs")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--stages", action="store_true", help="print where each pane's time went")
    ap.add_argument("--text", choices=("samples", "rare"), default="samples",
                    help="the shipped samples, repeated (default), or Python source and rare CJK")
    args = ap.parse_args(argv)
    stages = GuiStages() if args.stages else None
    specs = args.specs or (default_specs(4) + ["o200k_base", "qwen", "p50k_base"])[:4]
    opened = open_window(specs)
    if opened is None:
        return 1
    app, window = opened
    before = process_tree()  # what the window holds with its vocabularies loaded, before any text
    text = mixed_text(args.mb) if args.text == "samples" else rare_text(args.mb)
    meter = StallMeter()
    meter.start()
    cpu0 = {pid: cpu_seconds([pid]) for pid in process_tree()}
    t0 = time.perf_counter()
    window.set_text(text)  # the paste: editor text, then every pane's worker is asked
    paste_s = time.perf_counter() - t0
    text = window.text()
    times: dict[str, float] = {}
    memory: dict[int, float] = {}
    settled: dict[int, float] = {}  # a second after the last layout: what the app goes on holding
    proportional: dict[int, float] = {}  # the same processes' PSS then
    distinct: list[float | None] = []  # their resident pages then, each physical page once
    peak = [0.0]
    cpu: list[tuple[int, float]] = []  # (pid, CPU seconds since the paste)

    def poll() -> None:
        now = time.perf_counter() - t0
        if "tokenized" not in times and tokenized(window, text):
            times["tokenized"] = now
        if "drawn" not in times and drawn(window, text):
            times["drawn"] = now
        if int(now * 20) != int((now - 0.005) * 20):  # about every 50 ms
            peak[0] = max(peak[0], sum(process_tree().values()))
        if "laid out" not in times and ready(window, text):
            times["laid out"] = now
            tree = process_tree()
            memory.update(tree)  # before the quit, which stops the panes' processes
            cpu.extend((pid, cpu_seconds([pid]) - cpu0.get(pid, 0.0)) for pid in tree)
            QTimer.singleShot(1000, settle)  # keep measuring a little after the last layout

    def settle() -> None:
        settled.update(process_tree())
        proportional.update({pid: _pss_mb(pid) for pid in settled})
        distinct.append(_distinct_mb(list(settled)))
        app.quit()

    poller = QTimer(interval=5)
    poller.timeout.connect(poll)
    poller.start()
    QTimer.singleShot(int(args.timeout * 1000), app.quit)
    app.exec()
    meter.timer.stop()
    end = t0 + times.get("laid out", args.timeout)
    gaps = [g for g, a in zip(meter.gaps, meter.at) if a <= end + 0.05]
    report(window, text, paste_s, times, gaps)
    if stages is not None:
        stages.report(window, t0)
    others = ", ".join(f"{v:.0f}" for k, v in before.items() if k != os.getpid())
    print(f"resident memory before the paste: {sum(before.values()):.0f} MiB in {len(before)} processes "
          f"(this one {before.get(os.getpid(), 0):.0f} MiB; others {others})")
    sizes = memory
    others = ", ".join(f"{v:.0f}" for k, v in sizes.items() if k != os.getpid())
    print(f"resident memory: {sum(sizes.values()):.0f} MiB in {len(sizes)} processes (this one "
          f"{sizes.get(os.getpid(), 0):.0f} MiB; others {others}); "
          f"peak {max(peak[0], sum(sizes.values())):.0f} MiB")
    if settled:
        others = ", ".join(f"{v:.0f}" for k, v in settled.items() if k != os.getpid())
        print(f"resident memory 1 s later: {sum(settled.values()):.0f} MiB in {len(settled)} processes "
              f"(this one {settled.get(os.getpid(), 0):.0f} MiB; others {others})")
    if proportional:
        others = ", ".join(f"{v:.0f}" for k, v in proportional.items() if k != os.getpid())
        print(f"proportional memory (PSS: each shared page split between all processes mapping it, "
              f"other programs' too) 1 s later: {sum(proportional.values()):.0f} MiB "
              f"(this one {proportional.get(os.getpid(), 0):.0f} MiB; others {others})")
    if distinct and distinct[0] is not None:
        print(f"resident memory counting each physical page once (frames from /proc/PID/pagemap, all "
              f"{len(settled)} processes) 1 s later: {distinct[0]:.0f} MiB")
    elif distinct:
        print("resident memory counting each physical page once: not readable here (/proc/PID/pagemap "
              "gives physical frames to root only)")
    if cpu:
        others = ", ".join(f"{c:.2f}" for pid, c in cpu if pid != os.getpid())
        print(f"CPU from the paste to the last layout, all processes: {sum(c for _, c in cpu):.2f} s "
              f"(this one {dict(cpu).get(os.getpid(), 0.0):.2f} s; others {others})")
    worst = sorted((ga for ga in zip(meter.gaps, meter.at) if ga[1] <= end + 0.05), reverse=True)[:5]
    print("longest gaps (ms, ended at s after the paste):",
          ", ".join(f"{g:.0f} @ {a - t0:.2f}" for g, a in worst))
    if stages is not None:
        stages.explain(worst, t0)
    window.close()
    return 0 if "laid out" in times else 1


def cpu_seconds(pids) -> float:
    """User + system CPU seconds the processes `pids` have used (Linux /proc)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _pss_mb(pid: int) -> float:
    """Proportional set size (MiB) of `pid` (Linux /proc/PID/smaps_rollup; 0 where unreadable)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _distinct_mb(pids: list[int]) -> float | None:
    """Resident memory (MiB) of the processes `pids` with each physical page counted once, however
    many mappings and processes share it: the frames of their present pages, read from
    /proc/PID/pagemap for each mapping smaps shows resident (None where the kernel hides frame
    numbers, as it does from any user but root, or the files cannot be read)."""
    page = os.sysconf("SC_PAGE_SIZE")
    frames: set[int] = set()
    seen_any = False
    for pid in pids:
        try:
            ranges, start, end = [], 0, 0
            for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
                head = line.split(maxsplit=1)[0]
                if "-" in head and not head.endswith(":"):
                    start, end = (int(x, 16) for x in head.split("-"))
                elif head == "Rss:" and int(line.split()[1]) > 0:
                    ranges.append((start, end))
            with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
                for start, end in ranges:
                    pagemap.seek(start // page * 8)
                    entries = np.frombuffer(pagemap.read((end - start) // page * 8), dtype=np.uint64)
                    present = entries[(entries >> np.uint64(63)) == 1] & np.uint64((1 << 55) - 1)
                    seen_any = seen_any or len(present) > 0
                    frames.update(present[present != 0].tolist())
        except (OSError, ValueError):
            return None
    if seen_any and not frames:  # present pages, every frame number 0: hidden from this user
        return None
    return len(frames) * page / 2**20


def _children(pid: int) -> list[int] | None:
    """The child processes of `pid` from /proc/PID/task/TID/children (None where the kernel has
    no such file): a few small reads, where a scan of /proc reads every process's stat (on a busy
    shared machine that scan, every 50 ms on the GUI thread, was itself a 100-150 ms stall)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
        if not tasks or not (tasks[0] / "children").exists():
            return None
        return [int(k) for t in tasks for k in (t / "children").read_text().split()]
    except (OSError, ValueError):
        return []


def process_tree() -> dict[int, float]:
    """Resident memory (MiB) of this process and every process descended from it (Linux /proc)."""
    tree, todo = [os.getpid()], [os.getpid()]
    while todo and (kids := _children(todo[-1])) is not None:
        todo.pop()
        tree += kids
        todo += kids
    if not todo:
        return _sizes(tree)
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree, todo = [os.getpid()], [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        tree += kids
        todo += kids
    return _sizes(tree)


def _sizes(tree: list[int]) -> dict[int, float]:
    sizes = {}
    for pid in tree:
        try:
            sizes[pid] = _rss_mb(pid)
        except OSError:
            continue
    return sizes


def report(window, text: str, paste_s: float, times: dict[str, float], gaps: list[float]) -> None:
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end")
    print(f"text: {len(text):,} chars, {len(text.encode('utf-8')):,} bytes; panes: {[p.spec for p in window.panes]}")
    for p in window.panes:
        if p.result is not None:
            print(f"  {p.spec:>16}: {len(p.result.tokens):>8,} tokens, {p.view.token_layout.line_count:>7,} lines, "
                  f"worker {p.result.seconds:.2f} s (encode {p.result.tokens.seconds:.2f} s)")
        else:
            print(f"  {p.spec:>16}: error {p.error}")
    print(f"paste into the editor (setPlainText, GUI thread): {paste_s * 1000:.0f} ms")
    if gaps:
        later = gaps[1:] or [0.0]
        print(f"event loop after the paste: longest gap {max(gaps):.0f} ms (stall ~{max(gaps) - 10:.0f} ms), "
              f"after the editor's insert {max(later):.0f} ms (stall ~{max(later) - 10:.0f} ms), "
              f"median {statistics.median(gaps):.1f} ms, ticks {len(gaps)}")
    for what in ("tokenized", "drawn", "laid out"):
        print(f"{'every pane ' + what + ':':<24} {times[what]:.2f} s" if what in times
              else f"{what}: not before the timeout")


if __name__ == "__main__":
    raise SystemExit(main())
