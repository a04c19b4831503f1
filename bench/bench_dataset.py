"""Benchmark `tokviz dataset` against a plain script doing the same counts with tiktoken,
`tokenizers` and jinja2 directly, side by side in one run, on a JSONL of conversations and texts.

The JSONL (built once into a cache folder outside the repository) is made from what any fresh
machine of this kind has: the Python standard library's sources and `/usr/share/doc`'s text,
cut into pieces of 0.5 to 6 KB; every third record is a conversation (`messages`: a system line,
the user asking about a piece, the assistant answering with the next one), the others texts.
Records that are not valid UTF-8 never occur (each source file is decoded with U+FFFD).

Both sides count cl100k_base and qwen (tiktoken) and deepseek-v3 (a `tokenizer.json`): texts with
no special-token parsing, conversations rendered with the chatml template (`--template chatml`)
and encoded with the template's control tokens parsed where the vocabulary has them. The peer
reads the JSONL line by line in one process, renders with jinja2's sandbox and encodes batches
of 1024 with each library's batch encoder (tiktoken's and `tokenizers`' own threads use every
core); tokviz runs the whole command (`tokviz dataset FILE -t cl100k_base -t qwen -t deepseek-v3
--template chatml --per-example out.csv --json -`) with its default `--jobs`.
The bench checks that both get the same total for each tokenizer and prints, for each, wall
time, rows/s, MB/s and the peak resident memory of its process tree (sampled from /proc), and
the ratio tokviz / peer.

    python bench/bench_dataset.py            # ~500 MB
    python bench/bench_dataset.py --mb 50    # quick
    python bench/bench_dataset.py --mb 2000 --only tokviz   # memory on a 2 GB file

This is not a test: it asserts nothing. It does not download anything; the vocabularies come
from `tokviz vocabs fetch` (TOKVIZ_DATA_DIR as for the command).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CACHE = Path(os.environ.get("TOKVIZ_BENCH_CACHE", Path.home() / ".cache" / "tokviz-bench"))
VERSION = 1  # bump when the recipe changes
SPECS = ("cl100k_base", "qwen", "deepseek-v3")


def _sources() -> Iterator[str]:
    roots = [Path(sysconfig.get_paths()["stdlib"]), Path("/usr/share/doc")]
    while True:
        produced = False
        for root in roots:
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                if "site-packages" in dirpath:
                    continue
                for name in sorted(filenames):
                    path = Path(dirpath, name)
                    if path.is_symlink() or path.suffix in (".gz", ".pyc") or not path.is_file():
                        continue
                    try:
                        data = path.read_bytes()
                    except OSError:
                        continue
                    if b"\0" in data or not data.strip():
                        continue
                    produced = True
                    yield data.decode("utf-8", errors="replace")
        if not produced:
            raise SystemExit("no source text on this machine")


def _pieces() -> Iterator[str]:
    rng = random.Random(7)
    for text in _sources():
        at = 0
        while at < len(text):
            size = rng.randint(500, 6000)
            yield text[at:at + size]
            at += size


def build(mb: int) -> Path:
    path = CACHE / f"dataset-v{VERSION}-{mb}mb.jsonl"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    budget, written, n = mb * 1_000_000, 0, 0
    pieces = _pieces()
    with open(temp, "w", encoding="utf-8") as f:
        while written < budget:
            if n % 3 == 0:
                question, answer = next(pieces), next(pieces)
                record = {"messages": [
                    {"role": "system", "content": "You are a careful reviewer."},
                    {"role": "user", "content": f"What does this do?\n\n{question}"},
                    {"role": "assistant", "content": answer}]}
            else:
                record = {"text": next(pieces)}
            line = json.dumps(record, ensure_ascii=False) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            n += 1
    os.replace(temp, path)
    return path


# -- the plain script -------------------------------------------------------------------------------


def peer(path: Path) -> dict[str, int]:
    """The counts a user would write by hand: json, jinja2, tiktoken and tokenizers."""
    import jinja2.sandbox
    import tiktoken
    import tokenizers
    from tiktoken.load import load_tiktoken_bpe

    from tokviz.analysis.chat_sources import choose_template
    from tokviz.core import catalog

    # only to find the files and the template's text; the counting below is the libraries' own
    def tiktoken_encoding(spec: str) -> tiktoken.Encoding:
        entry = catalog.find(spec)
        return tiktoken.Encoding(spec, pat_str=entry.pattern, special_tokens=dict(entry.special_tokens),
                                 mergeable_ranks=load_tiktoken_bpe(str(entry.verified_path())))

    cl, qwen = tiktoken_encoding("cl100k_base"), tiktoken_encoding("qwen")
    hf = tokenizers.Tokenizer.from_file(str(catalog.find("deepseek-v3").verified_path()))
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=["jinja2.ext.loopcontrols"])
    template = env.from_string(choose_template("qwen", "chatml").source)
    totals = {"cl100k_base": 0, "qwen": 0, "deepseek-v3": 0, "rows": 0}
    chatml = {"<|im_start|>", "<|im_end|>"}

    def flush(texts: list[str], chats: list[str]) -> None:
        # texts: no special-token parsing; chats: the template's control tokens parsed where the
        # vocabulary has them (qwen), plain text elsewhere (cl100k_base, deepseek-v3)
        totals["cl100k_base"] += sum(map(len, cl.encode_ordinary_batch(texts + chats)))
        totals["qwen"] += sum(map(len, qwen.encode_ordinary_batch(texts)))
        totals["qwen"] += sum(map(len, qwen.encode_batch(chats, allowed_special=chatml, disallowed_special=())))
        totals["deepseek-v3"] += sum(len(e.ids) for e in hf.encode_batch(texts + chats, add_special_tokens=False))

    texts: list[str] = []
    chats: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            totals["rows"] += 1
            if "messages" in row:
                chats.append(template.render(messages=row["messages"], add_generation_prompt=False))
            else:
                texts.append(row["text"])
            if len(texts) + len(chats) >= 1024:
                flush(texts, chats)
                texts, chats = [], []
    flush(texts, chats)
    return totals


def tokviz(path: Path, jobs: int | None) -> dict[str, int]:
    out = Path(tempfile.mkdtemp()) / "per.csv"
    cmd = [sys.executable, "-m", "tokviz", "dataset", str(path), *(a for s in SPECS for a in ("-t", s)),
           "--template", "chatml", "--per-example", str(out), "--json", "-"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    summary = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    out.unlink()
    return {"rows": summary["examples"], **{t["name"]: t["tokens"] for t in summary["tokenizers"]}}


# -- measuring ----------------------------------------------------------------------------------------


def measure(side: str, path: Path, jobs: int | None) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_train import _tree  # the process-tree walk the training bench measures with (a sibling script)

    result = CACHE / f"bench-dataset-{side}-{os.getpid()}.json"
    cmd = [sys.executable, __file__, "--child", side, "--file", str(path), "--out", str(result)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree(proc.pid, {}))  # resident MB of the whole process tree
        time.sleep(0.05)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"{side} failed with exit status {proc.returncode}")
    counts = json.loads(result.read_text())
    result.unlink()
    return {"side": side, "wall": wall, "peak_mb": peak, "counts": counts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=500, help="size of the JSONL in MB (default 500)")
    ap.add_argument("--only", nargs="+", choices=("tokviz", "peer"), default=["peer", "tokviz"])
    ap.add_argument("--jobs", type=int, help="tokviz dataset --jobs (default: its own)")
    ap.add_argument("--child", choices=("tokviz", "peer"), help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        counts = peer(Path(args.file)) if args.child == "peer" else tokviz(Path(args.file), args.jobs)
        Path(args.out).write_text(json.dumps(counts))
        return
    path = build(args.mb)
    size = path.stat().st_size
    print(f"{path}: {size / 1e6:,.0f} MB; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    runs = [measure(side, path, args.jobs) for side in args.only]
    for r in runs:
        rows = r["counts"]["rows"]
        print(f"{r['side']:<7} {r['wall']:8.1f} s  {rows / r['wall']:9,.0f} rows/s  "
              f"{size / 1e6 / r['wall']:7.2f} MB/s  "
              f"peak {r['peak_mb']:7.0f} MB  tokens " + ", ".join(f"{s} {r['counts'][s]:,}" for s in SPECS))
    if len(runs) == 2:
        a, b = runs[1], runs[0]
        same = all(a["counts"][s] == b["counts"][s] for s in (*SPECS, "rows"))
        print(f"tokviz / peer: {a['wall'] / b['wall']:.2f}x wall time; same counts: {'yes' if same else 'NO'}")
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
