"""Benchmark reading GGUF vocabularies: tokviz's lazy metadata reader against the `gguf` package's
`GGUFReader` (llama.cpp's own, which parses every field and tensor info eagerly), and tokviz's
GGUF encode on ~1 MB of mixed text.

    python bench/bench_gguf.py [--repeat 3] [--mb 1] [--big-gb 5] [-t ggml-vocab-gemma-4 ...]

`--big-gb N` also writes a temporary N GB file (the vocabulary's metadata followed by N GB of
zeros standing for weights; sparse where the file system allows) and times opening it, to show
that the weights are never read. This is not a test: it asserts nothing. It needs the provisioned
vocabularies (`tokviz vocabs fetch`) and `pip install gguf`.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from tokviz.core import catalog
from tokviz.core.gguf import read_metadata

sys.path.insert(0, str(Path(__file__).parent))
from bench_encode import corpus  # noqa: E402

DEFAULT = ["ggml-vocab-gemma-4", "ggml-vocab-qwen2", "ggml-vocab-llama-bpe", "ggml-vocab-llama-spm",
           "ggml-vocab-bert-bge"]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-t", dest="names", action="append")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--big-gb", type=float, default=0.0)
    args = parser.parse_args()
    try:
        from gguf import GGUFReader
    except ImportError:
        GGUFReader = None
        print("(the gguf package is not installed: `pip install gguf` to compare with GGUFReader)")
    names = args.names or DEFAULT
    text = corpus(args.mb)
    print(f"{'vocabulary':26} {'ids':>8} {'tokviz read':>12} {'GGUFReader':>11} {'ratio':>6} "
          f"{'load':>6} {'encode':>7} {'tokens':>8}")
    for name in names:
        path = catalog.find(name).verified_path()
        ours = best(lambda p=path: read_metadata(p), args.repeat)
        theirs = best(lambda p=path: GGUFReader(p), args.repeat) if GGUFReader else float("nan")
        t = time.perf_counter()
        tok = catalog.load(name)
        load = time.perf_counter() - t
        t = time.perf_counter()
        cols = tok.encode_columns(text)
        encode = time.perf_counter() - t
        print(f"{name:26} {tok.vocab_size:8,} {ours:11.3f}s {theirs:10.3f}s {theirs / ours:5.1f}x "
              f"{load:5.2f}s {encode:6.2f}s {len(cols.ids):8,}")
    if args.big_gb:
        source = catalog.find(names[0]).verified_path()
        with tempfile.TemporaryDirectory() as tmp:
            big = Path(tmp) / "big.gguf"
            with open(big, "wb") as f:
                f.write(source.read_bytes())
                f.truncate(f.tell() + int(args.big_gb * (1 << 30)))
            size = os.path.getsize(big)
            ours = best(lambda: read_metadata(big), args.repeat)
            t = time.perf_counter()
            catalog.load(str(big))
            load = time.perf_counter() - t
            print(f"{size / (1 << 30):.1f} GB file ({names[0]}'s metadata + zeros): "
                  f"metadata {ours:.3f}s, whole vocabulary loaded {load:.2f}s")


if __name__ == "__main__":
    main()
