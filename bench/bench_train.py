"""Benchmark `tokviz train` against rustbpe and Hugging Face `tokenizers` on ~10 and ~100 MB of real text.

The corpus is built (once, into a cache folder outside the repository) from what any fresh Linux
machine of this kind has: the Python standard library and the installed site-packages (`.py`
sources), the man pages in every language (`/usr/share/man`, decompressed), `/usr/share/doc` and
the locale definitions (`/usr/share/i18n/locales`). Each source file is decoded as UTF-8 with
U+FFFD for bad bytes (files with NUL bytes are left out), so the written corpus is valid UTF-8 and
every tool reads exactly the same bytes: tokviz reads the files itself, rustbpe and `tokenizers`
get each file's bytes decoded strictly (no newline translation: `\\r\\n` stays `\\r\\n`).

Each tool trains in its own process, one at a time, with the same split pattern and
vocabulary size, timed as a whole process, start-up included: tokviz as a user runs it (`python -m
tokviz train ... -o NAME`, the merges read back from the NAME.tiktoken it saves), each peer as a
plain script of its own library's calls (this file as a child, which imports no tokviz). The
children get the user's environment without PYTHONDONTWRITEBYTECODE, and tokviz's sources are
byte-compiled first, as an installed package is. Each corpus size is its own case (`--mb 10 100`,
with `--vocab-size 8192 32768`: one vocabulary size per case or one for all); the bench prints
wall time, peak memory (the sum over the tool's process tree, sampled from /proc, and the largest
single process from `wait4`'s `ru_maxrss`), the CPU time (of the whole process tree, sampled: a
steadier figure than wall time on a shared machine), whether the merges are identical to rustbpe's, and the ratios.

Runs are interleaved: each of `--repeats` rounds runs every tool once (tokviz with its default
`--jobs` and with each `--jobs` value asked for), starting with a different one each round; the
ratios are the medians of each round's side-by-side ratios (each round's follows in brackets,
in round order: the spread), the cases' ratios are printed again side by side at the end, and
every run prints the load average (the machine may be shared: trust ratios measured side by side
over absolute times). `--baseline TREE` adds tokviz from another source tree (a checkout of an
older commit, its default `--jobs`; PYTHONPATH points at it) to every round, and the ratio of this
tree's tokviz to it. The bench says which merge loop each tree runs: the compiled one where its
`tokviz/training/_merge.c` is built (`pip install -e .` builds it in place), else the Python one.

    python bench/bench_train.py                  # 10 MB at vocab 8192 and 100 MB at 32768, cl100k, 2 rounds
    python bench/bench_train.py --mb 10 --vocab-size 8192 --repeats 1      # quick
    python bench/bench_train.py --mb 200 --one-file --only tokviz rustbpe --jobs   # one 200 MB file
    python bench/bench_train.py --only tokviz --jobs 1 2 3   # tokviz's --jobs against its default
    python bench/bench_train.py --jobs --baseline /tmp/old      # against a checkout of an older commit

This is not a test: it asserts nothing. It does not download anything.
"""

from __future__ import annotations

import argparse
import base64
import compileall
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

CACHE = Path(os.environ.get("TOKVIZ_BENCH_CACHE", Path.home() / ".cache" / "tokviz-bench"))
FILE_SIZE = 1 << 20  # the corpus is written as ~1 MB files, like a real folder of documents
CORPUS_VERSION = 2  # bump when the recipe changes, so an old cache is not reused


def _text(data: bytes) -> str | None:
    if b"\0" in data:
        return None  # binary
    return data.decode("utf-8", errors="replace")


def _files(root: Path, suffixes: tuple[str, ...] | None = None) -> Iterator[Path]:
    if not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if path.is_symlink() or not path.is_file():
                continue
            if suffixes is None or path.name.endswith(suffixes):
                yield path


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    return _text(data)


def _python_stdlib() -> Iterator[str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in _files(stdlib, (".py",)):
        if "site-packages" not in path.parts:
            yield _read(path)


def _site_packages() -> Iterator[str]:
    for path in _files(Path(sysconfig.get_paths()["purelib"]), (".py",)):
        yield _read(path)


def _man_pages() -> Iterator[str]:
    """Man pages as roff text; the translated ones (de, fr, ru, ja, ...) make the corpus multilingual."""
    for path in _files(Path("/usr/share/man")):
        yield _read(path)


def _docs() -> Iterator[str]:
    for path in _files(Path("/usr/share/doc")):
        yield _read(path)


def _locales() -> Iterator[str]:
    for path in _files(Path("/usr/share/i18n")):
        yield _read(path)


SOURCES = {  # label: (texts, share of the corpus)
    "stdlib": (_python_stdlib, 0.28),
    "site": (_site_packages, 0.12),
    "man": (_man_pages, 0.35),
    "doc": (_docs, 0.20),
    "locale": (_locales, 0.05),
}


def build_corpus(mb: int, one_file: bool) -> Path:
    """Write ~`mb` MB of text into the cache, once; return the folder holding it.

    A source that runs out is taken again from its start (so a small machine still gets `mb`).
    """
    target = CACHE / f"corpus-v{CORPUS_VERSION}-{mb}mb{'-onefile' if one_file else ''}"
    if (target / ".done").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.txt"):
        old.unlink()
    budget = mb * 1_000_000
    out = open(target / "corpus.txt", "wb") if one_file else None  # noqa: SIM115 (closed after the loop)
    for label, (source, share) in SOURCES.items():
        limit, written, part, buf, size = int(budget * share), 0, 0, [], 0
        while written < limit:
            produced = False
            for text in source():
                if text is None:
                    continue
                produced = True
                data = text.encode("utf-8")
                buf.append(data)
                size += len(data)
                if size >= FILE_SIZE or written + size >= limit:
                    block = b"\n".join(buf)
                    if out is not None:
                        out.write(block + b"\n")
                    else:
                        (target / f"{label}-{part:04d}.txt").write_bytes(block)
                    written += len(block)
                    part, buf, size = part + 1, [], 0
                    if written >= limit:
                        break
            if not produced:
                break  # this machine has none of it
    if out is not None:
        out.close()
    (target / ".done").write_text("ok")
    return target


def corpus_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.txt"))


def corpus_texts(folder: Path) -> Iterator[str]:
    """Each file's bytes as one text, decoded strictly: the exact bytes tokviz reads."""
    for path in corpus_files(folder):
        yield path.read_bytes().decode("utf-8")


# -- one trainer per process ------------------------------------------------------------------


def tokviz_command(folder: Path, vocab_size: int, preset: str, jobs: int | None, out: Path) -> list[str]:
    """`tokviz train` as a user types it (`python -m tokviz` is the `tokviz` script's entry point)."""
    cmd = [sys.executable, "-m", "tokviz", "train", str(folder), "--include", "*.txt", "-o", str(out),
           "--vocab-size", str(vocab_size), "--pattern", preset, "--force"]
    return cmd + (["--jobs", str(jobs)] if jobs is not None else [])


def read_tokviz(out: Path) -> dict:
    """The merges and the bytes read, from what `tokviz train` saved (NAME.tiktoken and NAME.json)."""
    table = [base64.b64decode(line.split()[0]) for line in out.with_suffix(".tiktoken").read_text().splitlines()]
    sidecar = json.loads(out.with_suffix(".json").read_text())
    return {"seconds": float("nan"), "bytes": sidecar["corpus"]["bytes"], "vocab": [t.hex() for t in table]}


class FedBytes:
    """The corpus's texts for a peer's iterator, counting the UTF-8 bytes it was fed."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.bytes = folder, 0

    def texts(self) -> Iterator[str]:
        for text in corpus_texts(self.folder):
            self.bytes += len(text.encode("utf-8"))
            yield text


def run_rustbpe(folder: Path, vocab_size: int, pattern: str, jobs: int | None) -> tuple[list[bytes], int]:
    import rustbpe

    fed = FedBytes(folder)

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(fed.texts(), vocab_size, pattern=pattern)
    return [bytes(b) for b, _ in sorted(tok.get_mergeable_ranks(), key=lambda kv: kv[1])], fed.bytes


def _byte_level_decoder() -> dict[str, int]:
    """GPT-2's byte <-> printable character table, as `tokenizers`' ByteLevel uses it."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def run_hf(folder: Path, vocab_size: int, pattern: str, jobs: int | None) -> tuple[list[bytes], int]:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    fed = FedBytes(folder)

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(fed.texts(), trainer)
    decode = _byte_level_decoder()
    table = [bytes([b]) for b in range(256)]
    for merge in json.loads(tok.to_str())["model"]["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        table.append(bytes(decode[c] for c in left + right))
    return table, fed.bytes


RUNNERS = {"rustbpe": run_rustbpe, "tokenizers": run_hf}  # tokviz runs as its command line
TOOLS = ("tokviz", *RUNNERS)


def child(name: str, folder: Path, vocab_size: int, pattern: str, jobs: int | None, out: Path) -> None:
    """A peer's run: a plain script of its own library's calls (this module imports no tokviz)."""
    start = time.perf_counter()
    table, fed = RUNNERS[name](folder, vocab_size, pattern, jobs)
    seconds = time.perf_counter() - start
    out.write_text(json.dumps({"seconds": seconds, "bytes": fed, "vocab": [t.hex() for t in table]}))


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _tree(pid: int, cpu: dict[int, float]) -> float:
    """Resident MB of a process and all its descendants (worker processes included); records
    each one's CPU seconds so far in `cpu` (samples, so a floor: the caller keeps the larger of
    these and `wait4`'s figure)."""
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[p] = (int(fields[11]) + int(fields[12])) / _TICK
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as f:
                stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total / 1024


def _user_env() -> dict[str, str]:
    """The environment a user's shell gives: Python may keep its bytecode (an installed package has
    its .pyc files), so start-up is not compiling sources on every run."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(name: str, folder: Path, vocab_size: int, preset: str, jobs: int | None, tree: Path | None = None) -> dict:
    """One run of one tool; `tree`: tokviz from that source tree (PYTHONPATH), not the one installed."""
    env = _user_env()
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    if name == "tokviz":
        out = CACHE / f"result-tokviz-{os.getpid()}"
        cmd = tokviz_command(folder, vocab_size, preset, jobs, out)
        log = CACHE / f"result-tokviz-{os.getpid()}.log"
    else:
        from tokviz.training.pretokenize import PRESETS

        out = CACHE / f"result-{name}-{os.getpid()}.json"
        cmd = [sys.executable, __file__, "--child", name, "--corpus", str(folder),
               "--vocab-size", str(vocab_size), "--pattern-regex", PRESETS[preset], "--out", str(out)]
        log = None
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with open(log or os.devnull, "wb") as stderr:
        # in the tree, so that `python -m` finds its tokviz first, not one in this working directory
        proc = subprocess.Popen(cmd, env=env, cwd=tree, stderr=stderr if log else None)
    peak, cpu = 0.0, {}
    while True:
        # the tree sum counts worker processes too, which one process's ru_maxrss would not
        peak = max(peak, _tree(proc.pid, cpu))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.02)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        if log:
            sys.stderr.write(log.read_text(errors="replace")[-2000:])
        raise SystemExit(f"{name} failed with exit status {proc.returncode}")
    if log:
        data = read_tokviz(out)
        for path in (out.with_suffix(".tiktoken"), out.with_suffix(".json"), log):
            path.unlink()
    else:
        data = json.loads(out.read_text())
        out.unlink()
    return {"name": name, "wall": wall, "train": data["seconds"], "peak_mb": peak,
            "maxrss_mb": usage.ru_maxrss / 1024, "load": (load + os.getloadavg()[0]) / 2,
            "cpu": max(usage.ru_utime + usage.ru_stime, sum(cpu.values())),
            "bytes": data["bytes"], "vocab": data["vocab"]}


def _agreement(a: list[str], ref: list[str]) -> str:
    same = next((i for i, (x, y) in enumerate(zip(a, ref)) if x != y), min(len(a), len(ref)))
    return (f"{'yes' if a == ref else 'no'} (first {max(same - 256, 0)} agree; "
            f"{len(a) - 256} vs {len(ref) - 256} learned)")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, nargs="+", default=[10, 100],
                    help="corpus sizes in MB, each its own case (default 10 100)")
    ap.add_argument("--one-file", action="store_true", help="the corpus as one file, not ~1 MB files")
    ap.add_argument("--vocab-size", type=int, nargs="+", default=[8192, 32768],
                    help="one per --mb, or one for all (default 8192 for 10 MB, 32768 for 100 MB)")
    ap.add_argument("--pattern", default="cl100k", help="preset: gpt2, cl100k (GPT-4, default), o200k")
    ap.add_argument("--jobs", type=int, nargs="*", default=[1, 2],
                    help="tokviz's --jobs values to run besides its default (default: 1 2)")
    ap.add_argument("--repeats", type=int, default=2, help="rounds; each runs every tool once, in turn")
    ap.add_argument("--only", nargs="+", choices=TOOLS, default=list(TOOLS))
    ap.add_argument("--baseline", type=Path, metavar="TREE",
                    help="also run tokviz (default --jobs) from TREE, a checkout of another commit, side by side")
    ap.add_argument("--child", choices=list(RUNNERS), help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--pattern-regex", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, Path(args.corpus), args.vocab_size[0], args.pattern_regex, None, Path(args.out))
        return 0
    if len(args.vocab_size) not in (1, len(args.mb)):
        ap.error("give one --vocab-size, or one per --mb")
    vocabs = args.vocab_size * len(args.mb) if len(args.vocab_size) == 1 else args.vocab_size
    for label, tree in (("tokviz", Path(__file__).resolve().parents[1]),
                        *([("tokviz baseline", args.baseline.resolve())] if args.baseline else [])):
        compileall.compile_dir(tree / "tokviz", quiet=1)  # as installed: with bytecode
        print(f"{label} ({tree}): {merge_loop(tree)} merge loop")
    summaries = [run_case(mb, vocab, args) for mb, vocab in zip(args.mb, vocabs)]
    if len(summaries) > 1:
        print("\nside by side (medians of the rounds' ratios):")
        for line in (line for summary in summaries for line in summary):
            print(line)
    return 0


def merge_loop(tree: Path) -> str:
    """Which merge loop the tokviz of `tree` runs: "compiled" (its `_merge.c` is built) or "Python"."""
    env = dict(_user_env(), PYTHONPATH=str(tree))
    code = "from tokviz.training import bpe; print('Python' if getattr(bpe, '_merge', None) is None else 'compiled')"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or f"unknown ({done.stderr.strip().splitlines()[-1:]})"


def run_case(mb: int, vocab_size: int, args: argparse.Namespace) -> list[str]:
    """Run every tool on an `mb` MB corpus, print the figures; return the ratio lines of the case."""
    from tokviz.training.corpus import default_jobs

    folder = build_corpus(mb, args.one_file)
    files = corpus_files(folder)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes())
    size = sum(p.stat().st_size for p in files)
    # the runs of one round: tokviz with its default --jobs, with each --jobs asked for that
    # differs from the default, and the peers
    default = default_jobs(size)
    runs: list[tuple[str, str, int | None, Path | None]] = []
    for name in args.only:
        if name == "tokviz":
            runs.append((f"tokviz (default --jobs {default})", name, None, None))
            runs += [(f"tokviz --jobs {j}", name, j, None) for j in args.jobs if j != default]
            if args.baseline:
                runs.append(("tokviz baseline (default)", name, None, args.baseline.resolve()))
        else:
            runs.append((name, name, None, None))
    print(f"\ncorpus {folder}: {len(files)} files, {size:,} bytes, sha256 {digest.hexdigest()[:16]}; "
          f"pattern {args.pattern}, vocab {vocab_size}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; {args.repeats} rounds of: {', '.join(r[0] for r in runs)}",
          flush=True)
    rows: dict[str, list[dict]] = {label: [] for label, *_ in runs}
    for round_ in range(args.repeats):
        shift = round_ % len(runs)  # interleaved: each round starts with a different tool
        for label, name, jobs, tree in runs[shift:] + runs[:shift]:
            row = measure(name, folder, vocab_size, args.pattern, jobs, tree)
            rows[label].append(row)
            print(f"  round {round_ + 1} {label:<26} wall {row['wall']:6.1f} s  cpu {row['cpu']:6.1f} s  peak "
                  f"{row['peak_mb']:5.0f} MB (tree) {row['maxrss_mb']:5.0f} MB (largest)  load {row['load']:4.1f}  "
                  f"fed {row['bytes']:,} bytes", flush=True)
    print(f"medians over {args.repeats} rounds (load average {os.getloadavg()[0]:.1f} at the end):")
    for label, got in rows.items():
        print(f"  {label:<26} wall {_median([r['wall'] for r in got]):6.2f} s  cpu "
              f"{_median([r['cpu'] for r in got]):6.2f} s  peak {max(r['peak_mb'] for r in got):5.0f} MB (tree)  "
              f"load {_median([r['load'] for r in got]):4.1f}")
    if "rustbpe" in rows:
        ref = rows["rustbpe"][0]["vocab"]
        for label, got in rows.items():
            if label == "rustbpe":
                continue
            print(f"  {label:<26} merges identical to rustbpe: {_agreement(got[0]['vocab'], ref)}")
    peers = ("rustbpe", "tokenizers")
    pairs = [(a, b) for a in rows for b in peers if b in rows and a not in peers]
    if "rustbpe" in rows and "tokenizers" in rows:
        pairs.append(("tokenizers", "rustbpe"))
    labels = [label for label, name, *_ in runs if name == "tokviz"]
    baseline = [label for label, _, _, tree in runs if tree is not None]
    pairs += [(other, labels[0]) for other in labels[1:] if other not in baseline]
    pairs += [(labels[0], other) for other in baseline]  # this tree over the baseline
    lines = [f"  {mb} MB, vocab {vocab_size}: {a} / {b}: {_ratios(rows[a], rows[b])}" for a, b in pairs]
    if lines:
        print("ratios, each the median of the rounds' side-by-side ratios (then each round's):")
        print("\n".join(lines), flush=True)
    return lines


def _ratios(a: list[dict], b: list[dict]) -> str:
    """Wall, CPU and peak memory of `a` over `b`: the median of the rounds' side-by-side ratios,
    then each round's (the spread: on a shared machine one round can be far off)."""
    out = []
    for key, name in (("wall", "wall"), ("cpu", "cpu"), ("peak_mb", "peak memory")):
        each = [x[key] / y[key] for x, y in zip(a, b)]
        out.append(f"{name} {_median(each):.2f}x ({' '.join(f'{r:.2f}' for r in each)})")
    return ", ".join(out) + " (tree)"


if __name__ == "__main__":
    sys.exit(main())
