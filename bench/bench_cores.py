"""How much two cores of this machine give: two tiktoken encodes one after the other, then at once.

The window's 1 MB figures depend on it: the tokenizer process encodes on two threads, and four 1 MB
encodes (cl100k_base, o200k_base, qwen, mistral-7b-v0.1) take about a second on one core. On a
virtual machine whose two cores share one physical core, or its memory bandwidth, two threads do
not run twice as fast as one; this prints how much sooner two encodes are done at once than one after
the other (cl100k_base's and o200k_base's of the same text: at most ~1.7x, the longer one's time
alone), and how much CPU time each takes then against alone, measured side by side:

    python bench/bench_cores.py [--rounds 5]

This is not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("TOKVIZ_DATA_DIR", str(ROOT / ".cache" / "tokviz"))


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    from tokviz.core.catalog import load
    from tokviz.core.resources import samples

    block = "\n".join(s.read_text() for s in samples())
    text = (block * (1_000_000 // len(block.encode()) + 1))[:1_000_000]  # ~1 MB, as bench_gui's
    encodings = [load("cl100k_base").encoding, load("o200k_base").encoding]  # type: ignore[attr-defined]
    for e in encodings:
        e.encode_ordinary(text)
    def one_after_the_other() -> None:
        for e in encodings:
            e.encode_ordinary(text)

    def at_once() -> None:
        threads = [threading.Thread(target=e.encode_ordinary, args=(text,)) for e in encodings]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def timed(f) -> tuple[float, float]:
        c0, t0 = cpu_seconds(), time.perf_counter()
        f()
        return time.perf_counter() - t0, cpu_seconds() - c0

    ratios, inflations = [], []
    for r in range(args.rounds):  # which goes first alternates
        if r % 2:
            (two_wall, two_cpu), (one_wall, one_cpu) = timed(at_once), timed(one_after_the_other)
        else:
            (one_wall, one_cpu), (two_wall, two_cpu) = timed(one_after_the_other), timed(at_once)
        ratios.append(one_wall / two_wall)
        inflations.append(two_cpu / one_cpu)
        print(f"one after the other {one_wall:.3f} s (CPU {one_cpu:.3f} s); at once {two_wall:.3f} s "
              f"(CPU {two_cpu:.3f} s)", flush=True)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"two encodes at once: done {statistics.median(ratios):.2f}x sooner than one after the other, "
          f"each one's CPU time {statistics.median(inflations):.2f}x its time alone (medians of {args.rounds})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
