"""Datasets and corpora for the cluster tests: real sample texts, cut and mixed at random (a fixed
seed), so that there are many distinct chunks and several shards, pieces and tasks."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tokviz.core.resources import sample_text

NAMES = ["english.txt", "korean.txt", "chinese.txt", "japanese.txt", "mixed.txt", "python_code.py", "logs.log",
         "emoji_chat.txt"]


def texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    samples = [sample_text(name) for name in NAMES]
    out = []
    for _ in range(n):
        text = rng.choice(samples)
        start = rng.randrange(len(text))
        out.append(text[start:start + rng.randint(1, 600)])
    return out


def rows(n: int, seed: int = 0) -> list[dict]:
    """Texts, conversations (`messages`, ShareGPT `conversations`), prompt/completion pairs."""
    rng = random.Random(seed)
    pool = texts(3 * n, seed)
    out: list[dict] = []
    for i in range(n):
        a, b, c = pool[3 * i:3 * i + 3]
        kind = rng.randrange(4)
        if kind == 0:
            out.append({"text": a})
        elif kind == 1:
            out.append({"messages": [{"role": "system", "content": c[:80]}, {"role": "user", "content": a},
                                     {"role": "assistant", "content": b}]})
        elif kind == 2:
            out.append({"conversations": [{"from": "human", "value": a}, {"from": "gpt", "value": b}]})
        else:
            out.append({"prompt": a, "completion": b})
    return out


def write_jsonl(path: Path, records: list[dict], torn_every: int = 0) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, row in enumerate(records):
            if torn_every and i % torn_every == torn_every - 1:
                f.write('{"text": "torn\n')
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def write_parquet(path: Path, records: list[dict], row_group: int) -> Path:
    table = pa.table({"text": [r.get("text") or r.get("prompt") or "" for r in records],
                      "id": list(range(len(records)))})
    pq.write_table(table, path, row_group_size=row_group)
    return path


def write_corpus(folder: Path, seed: int = 0) -> Path:
    """Text files: small ones, one big enough to be cut into pieces, a binary one, one not UTF-8,
    and a big one whose bad byte is in a late piece (skipped whole, after its first pieces were
    counted: the count has to take them back out)."""
    folder.mkdir()
    rng = random.Random(seed)
    for i in range(6):
        (folder / f"small{i}.txt").write_text(" ".join(texts(40, seed + i)), encoding="utf-8")
    big = " ".join(texts(2500, seed + 10))
    (folder / "big.txt").write_text(big, encoding="utf-8")
    bad = (" ".join(texts(1500, seed + 11))).encode("utf-8")
    cut = len(bad) * 3 // 4
    (folder / "late_bad.txt").write_bytes(bad[:cut] + b" \xff " + bad[cut:])
    (folder / "binary.txt").write_bytes(b"abc\0def " * 100)
    (folder / "latin1.txt").write_bytes("caf\xe9 na\xefve ".encode("latin-1") * 50)
    (folder / "notes.md").write_text("\n".join(texts(30, rng.randrange(1000))), encoding="utf-8")
    return folder
