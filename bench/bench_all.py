"""Run the speed and memory benchmarks in one go and print their figures beside the targets.

Runs, one after another, each in its own process, printing each one's full output as it comes:

- `bench_train.py`: tokviz against rustbpe and Hugging Face `tokenizers` on ~100 MB (time, CPU,
  peak memory, identical merges);
- `bench_cores.py`: what two cores of this machine give two encodes at once;
- `bench_gui.py` (as many rounds as `--repeats`; the summary gives medians): a 1 MB paste into
  a window of four panes (cl100k_base, o200k_base, qwen, mistral-7b-v0.1): time to tokenized
  and drawn, the longest event-loop gap, resident and proportional memory, and the resident
  pages counted once each;
- `bench_cli_memory.py`: `tokviz encode` of 50 MB on stdin, `tokviz stats` of 100 MB, `tokviz
  train` of one 200 MB file (wall, peak memory, output digest).

Then a summary: each figure read back from those outputs, beside its target. A figure that is not
found in an output (a benchmark failed, or its output changed) is printed as "not found" with the
benchmark's exit code, never guessed.

    python bench/bench_all.py                  # everything, ~15 min on 2 quiet cores
    python bench/bench_all.py --quick          # 30 MB training, 10/20/40 MB CLI inputs

This is not a test: it asserts nothing. The window benchmark needs the four vocabularies (it
fetches the missing ones from the package registry as the app does).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PANES = ["cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1"]


@dataclass
class Run:
    name: str
    output: str
    code: int


def run(name: str, args: list[str]) -> Run:
    """Run one benchmark script, echoing its output line by line; return all of it."""
    print(f"\n=== {name}: {' '.join(args)}", flush=True)
    lines = []
    with subprocess.Popen([sys.executable, *args], cwd=HERE.parent, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, bufsize=1) as p:
        assert p.stdout is not None
        for line in p.stdout:
            print(line, end="", flush=True)
            lines.append(line)
    return Run(name, "".join(lines), p.returncode)


def find(r: Run, pattern: str) -> str:
    """The last match of `pattern`'s one group in the run's output, or a "not found" note."""
    found = re.findall(pattern, r.output, flags=re.MULTILINE)
    return found[-1] if found else f"not found (exit {r.code})"


def median(runs: list[Run], pattern: str, unit: str) -> str:
    """The median of a figure over rounds of one benchmark, with every round's value."""
    values = [float(v) for r in runs for v in re.findall(pattern, r.output, flags=re.MULTILINE)[-1:]]
    if not values:
        return f"not found (exit {max(r.code for r in runs)})"
    shown = ", ".join(f"{v:g}" for v in values)
    return f"{statistics.median(values):g} {unit}" + (f" (of {shown})" if len(values) > 1 else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller inputs (figures not comparable to the targets)")
    ap.add_argument("--repeats", type=int, default=1, help="rounds of the training and window benchmarks")
    args = ap.parse_args(argv)
    train_mb = "30" if args.quick else "100"
    train = run("training", [str(HERE / "bench_train.py"), "--mb", train_mb, "--vocab-size", "32768",
                             "--repeats", str(args.repeats), "--jobs"])
    cores = run("machine", [str(HERE / "bench_cores.py")])
    guis = [run(f"window, round {k + 1}", [str(HERE / "bench_gui.py"), *[a for s in PANES for a in ("-t", s)]])
            for k in range(args.repeats)]
    cli = []
    for job, mb in (("encode", 10 if args.quick else 50), ("stats", 20 if args.quick else 100),
                    ("train", 40 if args.quick else 200)):
        cli.append(run(f"cli {job}", [str(HERE / "bench_cli_memory.py"), "--only", job, "--mb", str(mb)]))

    rows = [
        ("train", f"{train_mb} MB, vocab 32768: tokviz / rustbpe wall",
         find(train, r"^\s*tokviz \(default[^)]*\) / rustbpe: wall ([\d.]+x)"), "<= 1.0x"),
        ("train", "tokviz / rustbpe peak memory (process tree)",
         find(train, r"^\s*tokviz \(default[^)]*\) / rustbpe: .*peak memory ([\d.]+x)"), "<= 1.0x"),
        ("train", "merges identical to rustbpe",
         find(train, r"^\s*tokviz \(default[^)]*\)\s+merges identical to rustbpe: (\w+)"), "yes"),
        ("machine", "two encodes at once, against one after the other",
         find(cores, r"^two encodes at once: done ([\d.]+x sooner)"), "2.0x on two free cores"),
        ("window", "1 MB, 4 panes: every pane drawn", median(guis, r"^every pane drawn:\s+([\d.]+) s", "s"),
         "<= 1.0 s"),
        ("window", "longest event-loop gap", median(guis, r"longest gap (\d+) ms", "ms"), "<= 50 ms"),
        ("window", "resident memory, all processes",
         median(guis, r"^resident memory: (\d+) MiB in \d+ processes", "MiB"), "<= 300 MB (286 MiB)"),
        ("window", "proportional memory (PSS), all processes",
         median(guis, r"^proportional memory .* 1 s later: (\d+) MiB", "MiB"), "<= 300 MB (286 MiB)"),
        ("window", "resident memory, each physical page once",
         median(guis, r"^resident memory counting each physical page once .* 1 s later: (\d+) MiB", "MiB"),
         "<= 300 MB (286 MiB)"),
    ]
    for r in cli:
        job = r.name.split()[1]
        rows.append(("cli", f"{job}: peak", find(r, r"^\s*this .*peak\s+(\d+ MiB \([\d.]+x the input\))"),
                     "<= 1 GiB"))
    print("\n=== summary (each figure from the output above)")
    width = max(len(label) for _, label, _, _ in rows)
    for area, label, value, target in rows:
        print(f"  {area:<7} {label:<{width}}  {value:<28} target {target}")
    return max(r.code for r in [train, cores, *guis, *cli])


if __name__ == "__main__":
    raise SystemExit(main())
