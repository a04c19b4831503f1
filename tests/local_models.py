"""Real model stores built in tmp_path for the discovery tests: a Hugging Face cache whose snapshot
files are symlinks into blobs/, an Ollama store whose blobs are real llama.cpp GGUFs, an LM Studio
folder and llama.cpp's cache (the `machine` fixture points the environment at them)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

REV = "0123456789abcdef0123456789abcdef01234567"

DEEPSEEK_CONFIG = {  # the fields of deepseek-ai/DeepSeek-V3's tokenizer_config.json that matter here
    "add_bos_token": True,
    "add_eos_token": False,
    "bos_token": {"__type": "AddedToken", "content": "<｜begin▁of▁sentence｜>", "lstrip": False,
                  "normalized": True, "rstrip": False, "single_word": False},
    "eos_token": {"__type": "AddedToken", "content": "<｜end▁of▁sentence｜>", "lstrip": False,
                  "normalized": True, "rstrip": False, "single_word": False},
    "legacy": True,
    "model_max_length": 131072,
    "pad_token": {"__type": "AddedToken", "content": "<｜end▁of▁sentence｜>", "lstrip": False,
                  "normalized": True, "rstrip": False, "single_word": False},
    "tokenizer_class": "LlamaTokenizerFast",
    "unk_token": None,
    "added_tokens_decoder": {
        "128803": {"content": "<｜User｜>", "lstrip": False, "normalized": True, "rstrip": False,
                   "single_word": False, "special": True},
    },
    "chat_template": "{{ bos_token }}{% for m in messages %}<｜{{ m['role'] }}｜>{{ m['content'] }}{% endfor %}",
}


def _blob(repo: Path, data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    blob = repo / "blobs" / digest
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    return blob


def hf_repo(hub: Path, repo_id: str, files: dict[str, bytes], *, rev: str = REV) -> Path:
    """A hub-cache repository as huggingface_hub writes it: blobs by hash, a snapshot of symlinks."""
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / rev
    snapshot.mkdir(parents=True)
    for name, data in files.items():
        blob = _blob(repo, data)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / name)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(rev)
    return snapshot


def ollama_model(store: Path, name: str, tag: str, gguf: Path, *, namespace: str = "library") -> Path:
    data = gguf.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    (store / "blobs").mkdir(parents=True, exist_ok=True)
    (store / "blobs" / f"sha256-{digest}").write_bytes(data)
    manifest = store / "manifests" / "registry.ollama.ai" / namespace / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": len(data)},
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64, "size": 10},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))
    return manifest


@pytest.fixture
def machine(tmp_path, monkeypatch, vocab_path, vocab):
    """A home folder with every kind of store in it, and the environment pointing at it (the
    data folder too: the real vocabularies the tests compare with are loaded first)."""
    vocab("deepseek-v3"), vocab("ggml-vocab-qwen2")
    (tmp_path / "spare").mkdir()
    shutil.copyfile(vocab_path("ggml-vocab-gpt-2"), tmp_path / "spare" / "gpt2.gguf")
    deepseek = vocab_path("deepseek-v3").read_bytes()
    qwen_ranks = vocab_path("qwen").read_bytes()
    mistral = vocab_path("mistral-7b-v0.1").read_bytes()
    llama3_ranks = vocab_path("llama3").read_bytes()  # Llama 3's tokenizer.model is a rank file
    qwen2_gguf, llama_gguf = vocab_path("ggml-vocab-qwen2"), vocab_path("ggml-vocab-llama-bpe")
    spm_gguf = vocab_path("ggml-vocab-llama-spm")
    home = tmp_path / "home"
    hub = tmp_path / "hf" / "hub"
    hf_repo(hub, "deepseek-ai/DeepSeek-V3", {
        "tokenizer.json": deepseek,
        "tokenizer_config.json": json.dumps(DEEPSEEK_CONFIG).encode(),
        "config.json": json.dumps({"vocab_size": 129280}).encode(),
    })
    hf_repo(hub, "Qwen/Qwen-7B", {"qwen.tiktoken": qwen_ranks, "config.json": b'{"vocab_size": 151936}'})
    hf_repo(hub, "mistralai/Mistral-7B-v0.1", {"tokenizer.model": mistral})
    hf_repo(hub, "meta-llama/Meta-Llama-3-8B", {"tokenizer.model": llama3_ranks})
    hf_repo(hub, "someone/weights-only", {"config.json": b"{}"})  # no tokenizer: not listed
    (hub / "datasets--someone--data").mkdir()
    store = tmp_path / "ollama"
    ollama_model(store, "qwen2", "7b", qwen2_gguf)
    ollama_model(store, "llama3.2", "3b", llama_gguf, namespace="someone")
    broken = store / "manifests" / "registry.ollama.ai" / "library" / "embed" / "latest"
    broken.parent.mkdir(parents=True)
    broken.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.license"}]}))
    lms = home / ".lmstudio" / "models" / "lmstudio-community" / "Meta-Llama-3-8B-GGUF"
    lms.mkdir(parents=True)
    shutil.copyfile(llama_gguf, lms / "Meta-Llama-3-8B-Q4_K_M.gguf")
    llama_cache = tmp_path / "llama-cache"
    llama_cache.mkdir()
    shutil.copyfile(spm_gguf, llama_cache / "ggml-org_llama-spm.gguf")
    data = tmp_path / "data"
    for key, value in {"HOME": home, "HF_HUB_CACHE": hub, "OLLAMA_MODELS": store, "LLAMA_CACHE": llama_cache,
                       "TOKVIZ_DATA_DIR": data}.items():
        monkeypatch.setenv(key, str(value))
    monkeypatch.delenv("HF_HOME", raising=False)
    return tmp_path
