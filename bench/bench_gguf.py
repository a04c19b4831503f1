"""Benchmark reading GGUF vocabularies: tokviz's lazy metadata reader against the `gguf` package's
`GGUFReader` (llama.cpp's own, which parses every field and tensor info eagerly), and tokviz's
GGUF encode on ~1 MB of mixed text (as the panes cut it, `encode_columns`), beside the original
library on the same vocabulary where the catalog has one (tiktoken's qwen, Llama 3's tiktoken
ranks), with whether its ids are the same.

    python bench/bench_gguf.py [--repeat 3] [--mb 1] [--big-gb 5] [--no-reader] [-t ggml-vocab-gemma-4 ...]

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
from bench_encode import bare, corpus  # noqa: E402

#: the catalog vocabulary a llama.cpp test vocabulary was converted from (or shares its vocabulary)
ORIGINAL = {"ggml-vocab-qwen2": "qwen", "ggml-vocab-llama-bpe": "llama3"}

DEFAULT = ["ggml-vocab-gemma-4", "ggml-vocab-qwen2", "ggml-vocab-llama-bpe", "ggml-vocab-llama-spm",
           "ggml-vocab-bert-bge", "ggml-vocab-command-r", "ggml-vocab-deepseek-llm"]


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
    parser.add_argument("--no-reader", action="store_true", help="skip GGUFReader (minutes on 150k vocabularies)")
    args = parser.parse_args()
    GGUFReader = None
    if not args.no_reader:
        try:
            from gguf import GGUFReader
        except ImportError:
            print("(the gguf package is not installed: `pip install gguf` to compare with GGUFReader)")
    names = args.names or DEFAULT
    text = corpus(args.mb)
    print(f"{'vocabulary':26} {'ids':>8} {'read':>7} {'GGUFReader':>10} {'load':>6} "
          f"{'encode':>7} {'original':>22} {'same ids':>8} {'tokens':>8}")
    for name in names:
        path = catalog.find(name).verified_path()
        ours = best(lambda p=path: read_metadata(p), args.repeat)
        theirs = best(lambda p=path: GGUFReader(p), args.repeat) if GGUFReader else float("nan")
        t = time.perf_counter()
        tok = catalog.load(name)
        load = time.perf_counter() - t
        encode = best(lambda tok=tok: tok.encode_columns(text), args.repeat)
        ids = tok.encode_columns(text).ids.tolist()
        original, same_ids = "-", "-"
        if name in ORIGINAL:
            lib = catalog.load(ORIGINAL[name])
            fn = bare(lib)
            seconds = best(lambda fn=fn: fn(text), args.repeat)
            original = f"{ORIGINAL[name]} {lib.family} {seconds:.2f}s"
            same_ids = "yes" if list(fn(text)) == ids else "no"
        print(f"{name:26} {tok.vocab_size:8,} {ours:6.3f}s {theirs:9.3f}s {load:5.2f}s "
              f"{encode:6.2f}s {original:>22} {same_ids:>8} {len(ids):8,}", flush=True)
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
