"""Benchmark the CLI on large inputs: wall time and peak memory of `tokviz encode` (stdin),
`tokviz stats` (one file) and `tokviz train` (one file), each in its own process.

The inputs are one-file corpora built by `bench_train.build_corpus` (Python sources, man pages,
docs, locales from this machine). Each command runs under `/usr/bin/time -v` (peak = the largest
resident set of the process); its output's SHA-256 is printed, so two source trees can be
compared for identical output. With `--base DIR` the same jobs also run from another checkout
(say the commit before a change), interleaved with this one, and the ratios are printed.

    python bench/bench_cli_memory.py --only encode --mb 50
    python bench/bench_cli_memory.py --only stats --mb 100 --base /tmp/tokviz-base

This is not a test: it asserts nothing. It prints the machine load (uptime) with every figure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import build_corpus  # noqa: E402  (a sibling script)

ROOT = Path(__file__).resolve().parent.parent


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def command(job: str, corpus: Path, out_dir: Path, tokenizer: str = "cl100k_base") -> tuple[list[str], Path | None]:
    """The tokviz arguments for a job, and the file it reads on stdin (None: none)."""
    if job == "encode":
        return ["encode", "-t", tokenizer, "--color", "never"], corpus
    if job == "encode-json":
        return ["encode", "-t", tokenizer, "--json"], corpus
    if job == "stats":
        return ["stats", "-t", tokenizer, str(corpus)], None
    if job == "train":
        return ["train", str(corpus), "-o", str(out_dir / "vocab"), "--vocab-size", "32768"], None
    raise ValueError(job)


def run(tree: Path, args: list[str], stdin: Path | None) -> dict[str, object]:
    """Run `python -m tokviz ARGS` from source tree `tree`; wall, peak RSS, output hash."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin_file = open(stdin, "rb") if stdin else subprocess.DEVNULL  # noqa: SIM115
        try:
            code = subprocess.run(
                ["/usr/bin/time", "-v", sys.executable, "-m", "tokviz", *args],
                stdin=stdin_file, stdout=out, stderr=err, env=env, cwd=tempfile.gettempdir(),
            ).returncode
        finally:
            if stdin:
                stdin_file.close()  # type: ignore[union-attr]
        err.seek(0)
        report = err.read().decode(errors="replace")
        out.seek(0)
        digest = hashlib.sha256()
        while block := out.read(1 << 20):
            digest.update(block)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", report)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    cpu_user = re.search(r"User time \(seconds\): ([\d.]+)", report)
    cpu_sys = re.search(r"System time \(seconds\): ([\d.]+)", report)
    if code != 0 or not (wall and rss and cpu_user and cpu_sys):
        tail = report.strip().splitlines()[-25:]
        raise SystemExit(f"{args} from {tree} failed ({code}):\n" + "\n".join(tail))
    h, m, s = wall.groups()
    return {
        "wall": int(h or 0) * 3600 + int(m) * 60 + float(s),
        "cpu": float(cpu_user.group(1)) + float(cpu_sys.group(1)),
        "peak_mb": int(rss.group(1)) / 1024,
        "sha": digest.hexdigest()[:16],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=["encode", "stats", "train"],
                    choices=["encode", "encode-json", "stats", "train"])
    ap.add_argument("--mb", type=int, help="input size (default: encode 50, stats 100, train 200)")
    ap.add_argument("--base", type=Path, help="another source tree to compare with (before a change)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("-t", "--tokenizer", default="cl100k_base", help="the vocabulary of encode and stats")
    args = ap.parse_args()
    default_mb = {"encode": 50, "encode-json": 50, "stats": 100, "train": 200}
    trees = [("this", ROOT)] + ([("base", args.base.resolve())] if args.base else [])
    for job in args.only:
        mb = args.mb or default_mb[job]
        corpus = build_corpus(mb, True) / "corpus.txt"
        size = corpus.stat().st_size
        print(f"\n{job}: {size / 1e6:.1f} MB ({corpus})")
        results: dict[str, list[dict[str, object]]] = {name: [] for name, _ in trees}
        for _ in range(args.repeat):
            for name, tree in trees:  # interleaved
                with tempfile.TemporaryDirectory() as out_dir:
                    argv, stdin = command(job, corpus, Path(out_dir), args.tokenizer)
                    before = load()
                    r = run(tree, argv, stdin)
                r["load"] = f"{before}->{load()}"
                results[name].append(r)
                print(f"  {name:<5} wall {r['wall']:7.1f} s  cpu {r['cpu']:7.1f} s  peak {r['peak_mb']:8.0f} MiB"
                      f" ({r['peak_mb'] / (size / 2**20):.1f}x the input)  output {r['sha']}  load {r['load']}")
        if args.base:
            this, base = (min(results[n], key=lambda r: r["wall"]) for n in ("this", "base"))  # type: ignore[arg-type, return-value]
            print(f"  this/base: wall {this['wall'] / base['wall']:.2f}x, cpu {this['cpu'] / base['cpu']:.2f}x, "  # type: ignore[operator]
                  f"peak {this['peak_mb'] / base['peak_mb']:.2f}x, "  # type: ignore[operator]
                  f"output {'identical' if this['sha'] == base['sha'] else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
