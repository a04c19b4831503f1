"""Benchmark finding the tokenizers on a machine (`tokviz.core.discovery.scan`) on a generated tree.

    python bench/bench_discovery.py [--models 100] [--repeat 5] [--keep DIR]

The tree has the stores' real layouts: a Hugging Face hub cache (half the models; snapshot files
are symlinks into blobs/, the blobs symlinks to the provisioned tokenizer files, a config.json
each), an Ollama store (three tenths; manifests naming blobs that are the provisioned llama.cpp
GGUF vocabularies, two tags sharing a blob where the count allows) and an LM Studio folder (the
rest; a few of its GGUFs get a sparse 4 GB tail standing for weights, to show the weights are
never read). Prints the first scan's time and the best of `--repeat`. This is not a test: it
asserts nothing. It needs the provisioned vocabularies (`tokviz vocabs fetch`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from tokviz.core import catalog, discovery

HF_FILES = ["deepseek-v3", "qwen", "mistral-7b-v0.1", "llama3"]  # tokenizer.json, .tiktoken, .model, .model
WEIGHTS_TAIL = 4 << 30


def _gguf_paths() -> list[Path]:
    return [e.verified_path() for e in catalog.entries() if e.format == "gguf" and e.available]


def build(root: Path, models: int) -> dict[str, int]:
    ggufs = _gguf_paths()
    hf_sources = [catalog.find(n).verified_path() for n in HF_FILES]  # type: ignore[union-attr]
    n_hf, n_ollama = models // 2, models * 3 // 10
    n_lms = models - n_hf - n_ollama
    hub = root / "hf" / "hub"
    for k in range(n_hf):
        source = hf_sources[k % len(hf_sources)]
        name = {".json": "tokenizer.json", ".tiktoken": "qwen.tiktoken"}.get(source.suffix, "tokenizer.model")
        repo = hub / f"models--org{k % 7}--model-{k}"
        rev = hashlib.sha1(str(k).encode()).hexdigest()
        snapshot = repo / "snapshots" / rev
        snapshot.mkdir(parents=True)
        (repo / "blobs").mkdir()
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(rev)
        for file, target in ((name, source), ("config.json", None)):
            blob = repo / "blobs" / hashlib.sha256(f"{k}{file}".encode()).hexdigest()
            if target is None:
                blob.write_text(json.dumps({"vocab_size": 32000 + k}))
            else:
                blob.symlink_to(target)
            (snapshot / file).symlink_to(os.path.relpath(blob, snapshot))
    store = root / "ollama"
    (store / "blobs").mkdir(parents=True)
    for k in range(n_ollama):
        gguf = ggufs[(k // 2) % len(ggufs)]  # pairs of tags share a blob, as latest and 7b do
        digest = hashlib.sha256(gguf.name.encode()).hexdigest()  # names a blob; not checked by a scan
        blob = store / "blobs" / f"sha256-{digest}"
        if not blob.exists():
            blob.symlink_to(gguf)
        tag = "latest" if k % 2 else "7b"
        manifest = store / "manifests" / "registry.ollama.ai" / "library" / f"model{k // 2}" / tag
        manifest.parent.mkdir(parents=True, exist_ok=True)
        layer = {"mediaType": discovery.OLLAMA_MODEL_LAYER, "digest": f"sha256:{digest}", "size": 1}
        manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [layer]}))
    lms = root / "home" / ".lmstudio" / "models"
    for k in range(n_lms):
        folder = lms / f"publisher{k % 3}" / f"Model-{k}-GGUF"
        folder.mkdir(parents=True)
        path = folder / f"Model-{k}-Q4_K_M.gguf"
        if k < 3:  # a model with weights: the vocabulary, then a 4 GB sparse tail
            shutil.copyfile(ggufs[k], path)
            with open(path, "r+b") as f:
                f.truncate(path.stat().st_size + WEIGHTS_TAIL)
        else:
            path.symlink_to(ggufs[k % len(ggufs)])
    return {"hf": n_hf, "ollama": n_ollama, "lmstudio": n_lms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the tree here and keep it (for screenshots)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="tokviz-discovery-"))
    try:
        t0 = time.perf_counter()
        counts = build(root, args.models)
        built = time.perf_counter() - t0
        os.environ.update(HF_HUB_CACHE=str(root / "hf" / "hub"), OLLAMA_MODELS=str(root / "ollama"),
                          HOME=str(root / "home"), LLAMA_CACHE=str(root / "llama-cache"),
                          TOKVIZ_DATA_DIR=str(root / "data"))
        times = []
        for _ in range(max(args.repeat, 1)):
            t0 = time.perf_counter()
            found = discovery.scan()
            times.append(time.perf_counter() - t0)
        print(f"tree: {counts} models built in {built:.2f} s under {root}")
        print(f"scan: {len(found.found)} tokenizers, {len(found.notes)} notes; "
              f"first {times[0] * 1000:.1f} ms, best of {len(times)} {min(times) * 1000:.1f} ms")
    finally:
        if args.keep is None:
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
