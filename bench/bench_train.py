"""Benchmark the BPE trainer against rustbpe and Hugging Face `tokenizers` on ~100 MB of real text.

Builds (once) a folder of mixed text from what this machine has -- Python standard library sources,
man pages in several languages, `/usr/share/doc` -- in a cache directory outside the repository,
then trains each trainer in its own subprocess on the same files, with the same split pattern and
vocabulary size, and prints wall time, peak RSS and the ratios.

    python bench/bench_train.py --mb 10          # quick
    python bench/bench_train.py                  # 100 MB, vocab 32768

This is not a test: it asserts nothing. It does not download anything.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

CACHE = Path(os.environ.get("TOKVIZ_BENCH_CACHE", Path.home() / ".cache" / "tokviz-bench"))
PY_LIB = Path("/root/.pyenv/versions/3.11.7/lib/python3.11")
FILE_SIZE = 1 << 20  # the corpus is written as ~1 MB files, like a real folder of documents


def _python_sources() -> Iterator[str]:
    for path in sorted(PY_LIB.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        yield path.read_text(encoding="utf-8", errors="replace")


def _man_pages() -> Iterator[str]:
    """Man pages as roff text; the translated ones (de, fr, ru, ...) make the corpus multilingual."""
    man = Path("/usr/share/man")
    for path in sorted(man.rglob("*.gz")):
        try:
            yield gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        except (OSError, EOFError):
            continue


def _docs() -> Iterator[str]:
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
        except (OSError, EOFError):
            continue
        if b"\0" in data[:8192]:
            continue
        yield data.decode("utf-8", errors="replace")


def build_corpus(mb: int) -> Path:
    """Write ~`mb` MB of text (40% Python, 35% man pages, 25% docs) into the cache, once."""
    target = CACHE / f"corpus-{mb}mb"
    if (target / ".done").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    budget = mb << 20
    shares = {"python": (_python_sources, 0.40), "man": (_man_pages, 0.35), "doc": (_docs, 0.25)}
    for label, (source, share) in shares.items():
        limit, written, part, buf = int(budget * share), 0, 0, []
        size = 0
        for text in source():
            buf.append(text)
            size += len(text.encode("utf-8"))
            if size >= FILE_SIZE:
                data = "\n".join(buf).encode("utf-8")
                (target / f"{label}-{part:04d}.txt").write_bytes(data)
                written += len(data)
                part, buf, size = part + 1, [], 0
                if written >= limit:
                    break
    (target / ".done").write_text("ok")
    return target


# -- one trainer per subprocess ---------------------------------------------------------------


def _texts(folder: Path) -> Iterator[str]:
    for path in sorted(folder.glob("*.txt")):
        yield path.read_text(encoding="utf-8", errors="replace")


def run_tokviz(folder: Path, vocab_size: int, preset: str) -> list[bytes]:
    from tokviz.training.trainer import train

    result = train([folder], vocab_size=vocab_size, pattern=preset, include=["*.txt"], non_utf8="replace")
    return result.token_bytes()


def run_rustbpe(folder: Path, vocab_size: int, preset: str) -> list[bytes]:
    import rustbpe

    from tokviz.training.pretokenize import PRESETS

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(_texts(folder), vocab_size, pattern=PRESETS[preset])
    return [bytes(b) for b, _ in sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])]


def run_hf(folder: Path, vocab_size: int, preset: str) -> list[bytes]:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    from tokviz.training.pretokenize import PRESETS

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRESETS[preset]), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train([str(p) for p in sorted(folder.glob("*.txt"))], trainer)
    return []


RUNNERS = {"tokviz": run_tokviz, "rustbpe": run_rustbpe, "tokenizers": run_hf}


def child(name: str, folder: Path, vocab_size: int, preset: str, out: Path) -> None:
    start = time.perf_counter()
    table = RUNNERS[name](folder, vocab_size, preset)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.write_text(json.dumps({"seconds": seconds, "self_rss_mb": rss, "vocab": [t.hex() for t in table]}))


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants (forkserver workers included)."""
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as f:
                stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total / 1024


def measure(name: str, folder: Path, vocab_size: int, preset: str) -> dict:
    out = CACHE / f"result-{name}.json"
    cmd = [sys.executable, __file__, "--child", name, "--corpus", str(folder),
           "--vocab-size", str(vocab_size), "--pattern", preset, "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    peak = 0.0
    while proc.poll() is None:
        # the forkserver is a child of the trainer, its workers children of the forkserver: the
        # tree sum counts them all, which getrusage(RUSAGE_CHILDREN) would not
        peak = max(peak, _tree_rss_mb(proc.pid))
        time.sleep(0.02)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"{name} failed with exit status {proc.returncode}")
    data = json.loads(out.read_text())
    return {"name": name, "wall": wall, "train": data["seconds"], "peak_mb": peak,
            "self_rss_mb": data["self_rss_mb"], "vocab": data["vocab"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100, help="corpus size in MB (default 100)")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--pattern", default="cl100k", help="preset: gpt2, cl100k, o200k")
    ap.add_argument("--only", nargs="+", choices=list(RUNNERS), default=list(RUNNERS))
    ap.add_argument("--child", choices=list(RUNNERS), help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, Path(args.corpus), args.vocab_size, args.pattern, Path(args.out))
        return 0
    folder = build_corpus(args.mb)
    size = sum(p.stat().st_size for p in folder.glob("*.txt"))
    print(f"corpus {folder}: {size / 1e6:.1f} MB, pattern {args.pattern}, vocab {args.vocab_size}, "
          f"{os.cpu_count()} cores", flush=True)
    rows = []
    for name in args.only:
        row = measure(name, folder, args.vocab_size, args.pattern)
        rows.append(row)
        print(f"{name:<11} wall {row['wall']:7.1f} s  train {row['train']:7.1f} s  "
              f"peak RSS (tree) {row['peak_mb']:7.0f} MB  (main {row['self_rss_mb']:.0f} MB)", flush=True)
    by = {r["name"]: r for r in rows}
    if "tokviz" in by:
        tv = by["tokviz"]
        for other in ("rustbpe", "tokenizers"):
            if other in by:
                o = by[other]
                print(f"tokviz / {other}: time {tv['wall'] / o['wall']:.2f}x, peak memory "
                      f"{tv['peak_mb'] / o['peak_mb']:.2f}x")
        if "rustbpe" in by:
            a, b = tv["vocab"], by["rustbpe"]["vocab"]
            same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            print(f"tokviz and rustbpe agree on the first {same - 256} merges "
                  f"(tokviz learned {len(a) - 256}, rustbpe {len(b) - 256})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
