"""The model names people know, for the catalog's vocabularies: `o200k_base` is what GPT-4o cuts
with, `llama3` is Llama 3's. The Add menu lists vocabularies by these names and its search box
finds them by any of them.

>>> names_for("o200k_base")[:2]
('GPT-4o', 'GPT-4.1')
>>> matches("gpt4o", "o200k_base", *names_for("o200k_base")), matches("llama 2", "cl100k_base")
(True, False)
"""

from __future__ import annotations

import re

#: catalog name -> the models that use exactly that vocabulary (a GGUF test vocabulary of
#: llama.cpp's is the vocabulary of the models it was converted from)
MODEL_NAMES: dict[str, tuple[str, ...]] = {
    "o200k_base": ("GPT-4o", "GPT-4.1", "o1", "o3", "o4-mini"),
    "cl100k_base": ("GPT-4", "GPT-3.5 Turbo", "text-embedding-3"),
    "p50k_base": ("text-davinci-003", "Codex"),
    "r50k_base": ("GPT-3", "GPT-2"),
    "qwen": ("Qwen", "Qwen-7B", "Qwen-72B"),
    "llama3": ("Llama 3", "Llama 3.1", "Llama 3.2", "Llama 3.3"),
    "mistral-7b-v0.1": ("Mistral 7B", "Mixtral 8x7B"),
    "mistral-instruct-v3": ("Mistral 7B Instruct v0.3", "Mixtral 8x22B"),
    "deepseek-v3": ("DeepSeek-V3", "DeepSeek-R1"),
    "ggml-vocab-qwen2": ("Qwen2", "Qwen2.5", "Qwen3"),
    "ggml-vocab-qwen35": ("Qwen3.5",),
    "ggml-vocab-llama-bpe": ("Llama 3",),
    "ggml-vocab-llama-spm": ("Llama 2", "Llama"),
    "ggml-vocab-phi-3": ("Phi-3",),
    "ggml-vocab-deepseek-llm": ("DeepSeek LLM",),
    "ggml-vocab-deepseek-coder": ("DeepSeek Coder",),
    "ggml-vocab-falcon": ("Falcon",),
    "ggml-vocab-mpt": ("MPT",),
    "ggml-vocab-starcoder": ("StarCoder",),
    "ggml-vocab-refact": ("Refact",),
    "ggml-vocab-command-r": ("Command R",),
    "ggml-vocab-gemma-4": ("Gemma 4",),
    "ggml-vocab-bert-bge": ("BGE", "BERT"),
    "ggml-vocab-gpt-2": ("GPT-2",),
}


def names_for(catalog_name: str) -> tuple[str, ...]:
    return MODEL_NAMES.get(catalog_name, ())


def label(catalog_name: str, title: str) -> str:
    """A menu line: the model names, then the vocabulary's own name (or its title when no model
    name is known).

    >>> label("cl100k_base", "OpenAI cl100k")
    'GPT-4, GPT-3.5 Turbo, text-embedding-3 — cl100k_base'
    >>> label("botchan-bpe-1k", "a small BPE model")
    'botchan-bpe-1k — a small BPE model'
    """
    names = names_for(catalog_name)
    return f"{', '.join(names)} — {catalog_name}" if names else f"{catalog_name} — {title}"


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def matches(query: str, *texts: str) -> bool:
    """Whether every word of `query` occurs in one of `texts`, ignoring case, spaces and
    punctuation (`gpt4o` finds GPT-4o, `qwen 2.5` finds Qwen2.5)."""
    haystack = " ".join(_squash(t) for t in texts)
    words = query.split()
    return all(_squash(w) in haystack for w in words) if words else True
