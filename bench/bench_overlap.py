"""The overlap dialog on two large vocabularies: how long the comparison takes, and the longest
stall of the GUI thread meanwhile and while filtering and sorting the table of tokens only one has.

A 5 ms timer runs on the GUI thread; the longest gap between its ticks is the longest the window
would not have answered. Then the table is filtered (a text search, a script) and sorted by each
column, each timed on the GUI thread, as a click or a keystroke would run it.

    QT_QPA_PLATFORM=offscreen python bench/bench_overlap.py [-t o200k_base -t ggml-vocab-gemma-4] [--preloaded]

Loading a vocabulary is not the overlap's own work, and stalls every tool that loads one alike
(loading o200k_base held the GIL for 0.6-1.0 s on a loaded two-core machine); `--preloaded`
leaves it out.

This is not a test: it asserts nothing. It needs the provisioned vocabularies (`tokviz vocabs fetch`).
"""

from __future__ import annotations

import argparse
import time

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication

from tokviz.analysis.overlap import ONLY_COLUMNS
from tokviz.gui.tools.overlap_dialog import OverlapDialog
from tokviz.gui.tools.tokenizers import load_tokenizer


class StallMeter:
    """The longest gap between the ticks of a 5 ms timer on the GUI thread."""

    def __init__(self) -> None:
        self.timer = QTimer(interval=5)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.longest = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self.last)
        self.last = now

    def start(self) -> None:
        self.last = time.perf_counter()
        self.longest = 0.0
        self.timer.start()


def _timed(what: str, act) -> None:  # noqa: ANN001
    start = time.perf_counter()
    act()
    print(f"  {what:<34} {1000 * (time.perf_counter() - start):7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-t", "--tokenizer", action="append", dest="specs", help="two or more (repeatable)")
    parser.add_argument("--preloaded", action="store_true",
                        help="load the vocabularies into the tools' cache first: the comparison alone")
    args = parser.parse_args()
    specs = args.specs or ["o200k_base", "ggml-vocab-gemma-4"]
    app = QApplication.instance() or QApplication([])
    if args.preloaded:
        for spec in specs:
            load_tokenizer(spec)
    dialog = OverlapDialog(specs)
    dialog.show()
    meter = StallMeter()
    loop = QEventLoop()
    dialog.compared.connect(loop.quit)
    dialog.compare_failed.connect(lambda message: (print("failed:", message), loop.quit()))
    shown = dialog._on_returned
    showing = [0.0, 0.0]  # the stall before the result, the time showing it

    def timed_show(outcome) -> None:  # noqa: ANN001
        showing[0] = meter.longest
        begin = time.perf_counter()
        shown(outcome)
        showing[1] = time.perf_counter() - begin

    dialog._on_returned = timed_show  # type: ignore[method-assign]
    meter.start()
    start = time.perf_counter()
    dialog.start()
    loop.exec()
    seconds = time.perf_counter() - start
    meter.timer.stop()
    if dialog.outcome is None:
        return
    o = dialog.outcome.overlap
    print(f"{' vs '.join(specs)}: {', '.join(f'{len(s):,}' for s in o.sets)} tokens, "
          f"{o.shared_count:,} shared, {len(dialog.outcome.table):,} only in one")
    loads = "loads not included" if args.preloaded else "loads included"
    print(f"  {'comparison (' + loads + ')':<34} {seconds:7.2f} s")
    print(f"  {'longest GUI-thread stall meanwhile':<34} {1000 * showing[0]:7.1f} ms (before the result)")
    print(f"  {'showing the result':<34} {1000 * showing[1]:7.1f} ms")
    search = dialog.search
    _timed("filter: text 'the'", lambda: (search.setText("the"), dialog.apply_filter()))
    _timed("filter: hex 'e6 a0'", lambda: (search.setText("e6 a0"), dialog.apply_filter()))
    search.setText("")
    combo = dialog.script_combo
    _timed("filter: script han", lambda: (combo.setCurrentIndex(combo.findData("han")), dialog.apply_filter()))
    _timed("filter: none", lambda: (combo.setCurrentIndex(0), dialog.apply_filter()))
    for k, (_, header) in enumerate(ONLY_COLUMNS):
        _timed(f"sort by {header}", lambda k=k: dialog.view.sortByColumn(k, Qt.SortOrder.DescendingOrder))
    dialog.close()
    app.processEvents()


if __name__ == "__main__":
    main()
