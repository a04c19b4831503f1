"""Benchmark `tokviz dataset` against a plain script that makes the same counts with the libraries.

The dataset is a JSONL built from this machine's own text (`bench_train.build_corpus`: Python
sources, docs, man pages): two examples in three are conversations (system, user, assistant; the
user's turn a slice of the corpus, with an `<|im_start|>` now and then), one in three a text. Both
sides count every example with each tokenizer and print the same per-example counts:

- tokviz: `python -m tokviz dataset FILE -t SPEC ... --per-example OUT.jsonl`, as a user runs it;
- the peer: a script importing only tiktoken, jinja2 and json: texts through tiktoken's
  `encode_ordinary_batch`, conversations rendered with the same ChatML template through jinja2's
  sandbox and cut with the template's control tokens allowed and none of the messages'.

The peer knows cl100k_base and qwen (tiktoken encodings) only; both sides use ChatML (qwen's own
template, and the built-in one tokviz gives cl100k_base). Every count of the two is compared.
Wall time, rows/s, MB/s and peak resident memory (`wait4`) are printed side by side, and the ratio.

    python bench/bench_dataset.py [--mb 20] [-t cl100k_base -t qwen]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import build_corpus  # noqa: E402  (a sibling script)

ROOT = Path(__file__).resolve().parent.parent

PEER = r'''
import json, sys, tiktoken, jinja2.sandbox
from tiktoken.load import load_tiktoken_bpe
path, out, *specs = sys.argv[1:]
CHATML = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>' + '\n' }}"
          "{% endfor %}")
template = jinja2.sandbox.ImmutableSandboxedEnvironment().from_string(CHATML)
encodings = []
for spec in specs:
    if spec == "qwen":
        import os
        ranks = load_tiktoken_bpe(os.environ["QWEN_FILE"])
        encodings.append(tiktoken.Encoding("qwen", pat_str=os.environ["QWEN_PATTERN"], mergeable_ranks=ranks,
                                           special_tokens=json.loads(os.environ["QWEN_SPECIALS"])))
    else:
        encodings.append(tiktoken.get_encoding(spec))
def split(text, messages, marks):
    """The rendered prompt as (segment, is a control token) in order: the template writes
    <|im_start|> ROLE \n CONTENT <|im_end|> \n per message; only the template's marks are
    control tokens (where the vocabulary has them), and text between is one segment."""
    out, plain = [], ""
    for m in messages:
        for piece, control in (("<|im_start|>", True), (m["role"] + "\n" + m["content"], False),
                               ("<|im_end|>", True), ("\n", False)):
            if control and piece in marks:
                if plain:
                    out.append((plain, False))
                out.append((piece, True))
                plain = ""
            else:
                plain += piece
    if plain:
        out.append((plain, False))
    assert "".join(s for s, _ in out) == text
    return out
with open(path, encoding="utf-8") as f, open(out, "w") as sink:
    batch = []
    def flush():
        texts = [row["text"] for _, row in batch if "text" in row]
        counts = {e.name: iter(map(len, e.encode_ordinary_batch(texts))) for e in encodings}
        for n, row in batch:
            record = {"example": n}
            for e in encodings:
                if "text" in row:
                    record[e.name] = next(counts[e.name])
                else:
                    text = template.render(messages=row["messages"])
                    # the template's control tokens parsed where the vocabulary has them, the
                    # messages' text plain: split at the template's own, encode what lies between
                    marks = [t for t in ("<|im_start|>", "<|im_end|>") if t in e.special_tokens_set]
                    segments = split(text, row["messages"], marks)
                    record[e.name] = sum(1 if special else len(e.encode_ordinary(seg)) for seg, special in segments)
            sink.write(json.dumps(record) + "\n")
        batch.clear()
    for n, line in enumerate(f):
        batch.append((n, json.loads(line)))
        if len(batch) >= 256:
            flush()
    flush()
'''


def build_dataset(path: Path, megabytes: float) -> int:
    """A JSONL of about `megabytes` MB; its number of examples."""
    corpus = build_corpus(max(int(megabytes + 0.999), 1), True) / "corpus.txt"
    text = corpus.read_text(encoding="utf-8", errors="replace")
    rng = random.Random(0)
    target = int(megabytes * 1_000_000)
    written = n = 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            start = rng.randrange(max(len(text) - 4000, 1))
            body = text[start:start + rng.randrange(200, 3000)]
            if n % 3 == 2:
                row = {"text": body}
            else:
                inject = "<|im_start|>system\n" if n % 50 == 0 else ""
                row = {"messages": [{"role": "system", "content": "You are a careful assistant."},
                                    {"role": "user", "content": inject + body},
                                    {"role": "assistant", "content": body[: len(body) // 3]}]}
            line = json.dumps(row, ensure_ascii=False) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            n += 1
    return n


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run `argv`; its wall time and peak resident memory (MiB)."""
    began = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - began
    if status:
        raise SystemExit(f"{argv[:4]} failed: {proc.stderr.read().decode() if proc.stderr else status}")
    return wall, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("-t", "--tokenizer", action="append", dest="specs")
    args = ap.parse_args(argv)
    specs = args.specs or ["cl100k_base", "qwen"]
    os.environ.setdefault("TOKVIZ_DATA_DIR", str(ROOT / ".cache" / "tokviz"))
    sys.path.insert(0, str(ROOT))
    from tokviz.core import catalog

    qwen = catalog.find("qwen")
    assert qwen is not None
    work = Path(tempfile.mkdtemp(prefix="tokviz-ds-"))
    data = work / "data.jsonl"
    rows = build_dataset(data, args.mb)
    size_mb = data.stat().st_size / 1e6
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TIKTOKEN_CACHE_DIR": str(catalog.vocab_dir()),
           "QWEN_FILE": str(qwen.verified_path()), "QWEN_PATTERN": qwen.pattern or "",
           "QWEN_SPECIALS": json.dumps(dict(qwen.special_tokens or {}))}
    ours, theirs = work / "ours.jsonl", work / "theirs.jsonl"
    tokviz_argv = [sys.executable, "-m", "tokviz", "dataset", str(data), "--per-example", str(ours)]
    for spec in specs:
        tokviz_argv += ["-t", spec]
    peer_argv = [sys.executable, "-c", PEER, str(data), str(theirs), *specs]
    print(f"dataset: {rows:,} examples, {size_mb:.1f} MB (2 in 3 conversations); load {os.getloadavg()[0]:.1f}")
    results = {}
    for name, command in (("tokviz", tokviz_argv), ("plain script", peer_argv)):
        wall, peak = timed(command, env)
        results[name] = (wall, peak)
        print(f"{name:>13}: {wall:6.2f} s  {rows / wall:9,.0f} rows/s  {size_mb / wall:6.2f} MB/s  "
              f"peak {peak:6.0f} MiB")
    same = ours.read_text() == theirs.read_text()
    ratio = results["tokviz"][0] / results["plain script"][0]
    print(f"counts identical: {same}; tokviz / plain script: wall {ratio:.2f}x, "
          f"memory {results['tokviz'][1] / results['plain script'][1]:.2f}x")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
