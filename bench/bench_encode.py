"""Benchmark tokviz's encode against each library's own encode on ~1 MB of mixed text.

For every tokenizer: the library's bare ids (tiktoken `Encoding.encode`, sentencepiece `encode`,
tokenizers `Tokenizer.encode`), tokviz's `encode_columns` (what the app's panes and the analysis
use) and `encode` (one `Token` object per token), best of N runs each, with the ratios to the bare
library. Run it on an otherwise idle machine; compare ratios from one run.

    python bench/bench_encode.py [--mb 1] [--repeat 3] [-t cl100k_base -t mistral-7b-v0.1 ...]

This is not a test: it asserts nothing. It needs the provisioned vocabularies (`tokviz vocabs fetch`).
"""

from __future__ import annotations

import argparse
import gc
import time

from tokviz.core import catalog
from tokviz.core.resources import samples

DEFAULT = ["cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1", "deepseek-v3"]


def corpus(mb: float) -> str:
    """The shipped samples (prose in five scripts, emoji chat, JSON, logs, code), repeated."""
    block = "\n".join(s.read_text() for s in samples())
    return (block * (int(mb * (1 << 20)) // len(block.encode()) + 1))[: int(mb * (1 << 20))]


def bare(tokenizer):
    """The library's own encode, ids only, no special-token parsing."""
    if hasattr(tokenizer, "encoding"):
        return lambda text: tokenizer.encoding.encode(text, disallowed_special=())
    if hasattr(tokenizer, "sp"):
        return tokenizer.sp.encode
    if hasattr(tokenizer, "tk"):
        return lambda text: tokenizer.tk.encode(text, add_special_tokens=False).ids
    raise TypeError(f"no bare encode for {tokenizer.describe()}")


def best(fn, text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-t", "--tokenizer", action="append", dest="specs")
    args = ap.parse_args()
    text = corpus(args.mb)
    print(f"{len(text):,} characters, {len(text.encode()):,} bytes; best of {args.repeat}\n")
    print(f"{'tokenizer':<18} {'tokens':>9} {'library':>9} {'columns':>9} {'Tokens':>9} {'col/lib':>8} {'Tok/lib':>8}")
    for spec in args.specs or DEFAULT:
        tok = catalog.load(spec)
        lib = bare(tok)
        n = len(lib(text))
        t_lib = best(lib, text, args.repeat)
        t_col = best(tok.encode_columns, text, args.repeat)
        t_tok = best(tok.encode, text, args.repeat)
        print(f"{spec:<18} {n:>9,} {t_lib:>8.3f}s {t_col:>8.3f}s {t_tok:>8.3f}s "
              f"{t_col / t_lib:>7.1f}x {t_tok / t_lib:>7.1f}x")


if __name__ == "__main__":
    main()
