"""Where a chat template comes from: a GGUF file's `tokenizer.chat_template`, a Hugging Face
`tokenizer_config.json` (`chat_template` as a string or a list of named templates) or
`chat_template.jinja`, a `.jinja` file, or one of the built-in templates for vocabularies that
ship none (ChatML, Llama 3, Mistral `[INST]`).

>>> sorted(BUILTIN)
['chatml', 'llama3', 'mistral']
>>> builtin("chatml").special_strings["eos_token"]
'<|im_end|>'
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tokviz.analysis.chat_template import ChatTemplate
from tokviz.core import catalog, discovery
from tokviz.core.gguf import GGUFError, read_metadata
from tokviz.core.tokenizer import TokenizerError

#: the tokenizer's special token strings a template may use as variables (transformers' names)
SPECIAL_VARIABLES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

_CHATML = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

_LLAMA3 = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim"
    " + '<|eot_id|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)

# Mistral's instruct format: a system message is put in front of the first user turn
_MISTRAL = (
    "{% if messages and messages[0]['role'] == 'system' %}"
    "{% set system = messages[0]['content'] + '\\n\\n' %}{% set turns = messages[1:] %}"
    "{% else %}{% set system = '' %}{% set turns = messages %}{% endif %}"
    "{{ bos_token }}"
    "{% for message in turns %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}"
    "{% if message['role'] == 'user' %}"
    "{% if loop.first %}{{ '[INST] ' + system + message['content'] + ' [/INST]' }}"
    "{% else %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% endif %}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}"
    "{% else %}{{ raise_exception('Only system, user and assistant roles are supported') }}"
    "{% endif %}"
    "{% endfor %}"
)

#: name -> (source, special strings)
BUILTIN: dict[str, tuple[str, dict[str, str]]] = {
    "chatml": (_CHATML, {"eos_token": "<|im_end|>"}),
    "llama3": (_LLAMA3, {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
    "mistral": (_MISTRAL, {"bos_token": "<s>", "eos_token": "</s>"}),
}

#: catalog vocabularies that ship no template -> the built-in that matches their chat format
CATALOG_DEFAULTS = {
    "qwen": "chatml",
    "cl100k_base": "chatml",
    "o200k_base": "chatml",
    "llama3": "llama3",
    "mistral-7b-v0.1": "mistral",
    "mistral-instruct-v3": "mistral",
}


class TemplateSourceError(ValueError):
    """No template could be read from where the user pointed: the message says what to do."""


def builtin(name: str) -> ChatTemplate:
    try:
        source, strings = BUILTIN[name]
    except KeyError:
        raise TemplateSourceError(
            f"no built-in chat template {name!r}; built-ins: {', '.join(sorted(BUILTIN))}"
        ) from None
    return ChatTemplate(source, name=name, origin="built-in", special_strings=dict(strings))


# -- GGUF ---------------------------------------------------------------------------------------

#: transformers' variable -> llama.cpp's key stem (`tokenizer.ggml.<stem>_id`), where they differ
_GGUF_ID_KEYS = {"unk_token": "unknown_token", "sep_token": "seperator_token", "pad_token": "padding_token"}


def gguf_templates(path: str | os.PathLike[str]) -> dict[str, ChatTemplate]:
    """`tokenizer.chat_template` as "default" and `tokenizer.chat_template.NAME` as NAME."""
    try:
        meta = read_metadata(path).fields
    except GGUFError as e:
        raise TemplateSourceError(str(e)) from e
    tokens = meta.get("tokenizer.ggml.tokens") or []
    strings: dict[str, str] = {}
    for var in SPECIAL_VARIABLES:
        token_id = meta.get(f"tokenizer.ggml.{_GGUF_ID_KEYS.get(var, var)}_id")
        if isinstance(token_id, int) and 0 <= token_id < len(tokens):
            strings[var] = tokens[token_id]
    found = {}
    for key, value in meta.items():
        if key == "tokenizer.chat_template" or key.startswith("tokenizer.chat_template."):
            name = key.removeprefix("tokenizer.chat_template").lstrip(".") or "default"
            if isinstance(value, str):
                found[name] = ChatTemplate(value, name=name, origin=str(path), special_strings=strings)
    return found


# -- Hugging Face -------------------------------------------------------------------------------


def _token_string(value: Any) -> str | None:
    if isinstance(value, Mapping):  # {"content": "<s>", "lstrip": false, ...}
        value = value.get("content")
    return value if isinstance(value, str) else None


def hf_templates(folder: str | os.PathLike[str]) -> dict[str, ChatTemplate]:
    """The templates of a Hugging Face snapshot folder: `chat_template.jinja` (which transformers
    prefers) as "default", `additional_chat_templates/NAME.jinja`, and `tokenizer_config.json`'s
    `chat_template`, a string or a list of `{"name": ..., "template": ...}`."""
    folder = Path(folder)
    config: dict[str, Any] = {}
    config_path = folder / "tokenizer_config.json"
    if config_path.is_file():
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise TemplateSourceError(f"cannot read {config_path}: {e}") from e
    strings = {v: s for v in SPECIAL_VARIABLES if (s := _token_string(config.get(v))) is not None}
    sources: dict[str, tuple[str, str]] = {}
    value = config.get("chat_template")
    if isinstance(value, str):
        sources["default"] = (value, str(config_path))
    elif isinstance(value, list):
        for entry in value:
            if isinstance(entry, Mapping) and isinstance(entry.get("template"), str):
                sources[str(entry.get("name", "default"))] = (entry["template"], str(config_path))
    for path in sorted((folder / "additional_chat_templates").glob("*.jinja")):
        sources[path.stem] = (path.read_text(encoding="utf-8"), str(path))
    if (jinja := folder / "chat_template.jinja").is_file():
        sources["default"] = (jinja.read_text(encoding="utf-8"), str(jinja))
    return {
        name: ChatTemplate(source, name=name, origin=origin, special_strings=strings)
        for name, (source, origin) in sources.items()
    }


# -- choosing -----------------------------------------------------------------------------------


def templates_for(spec: str) -> dict[str, ChatTemplate]:
    """The templates a tokenizer spec carries with it: a GGUF file's (a path or a catalog entry), a
    Hugging Face folder's (or the folder of its `tokenizer.json`), else the built-in default of a
    catalog vocabulary. A `hf:` / `ollama:` / `lmstudio:` spec is its snapshot folder or GGUF."""
    if discovery.is_local_spec(spec):
        try:
            found = discovery.resolve(spec)
        except TokenizerError as e:
            raise TemplateSourceError(str(e)) from e
        return hf_templates(found.folder) if found.folder is not None else gguf_templates(found.path)
    entry = catalog.find(spec)
    if entry is not None and entry.path.suffix == ".gguf" and entry.available:
        return gguf_templates(entry.path)  # a catalog GGUF carries its own templates
    path = Path(spec)
    if path.suffix == ".gguf" and path.is_file():
        return gguf_templates(path)
    if path.is_dir():
        return hf_templates(path)
    if path.is_file() and path.suffix == ".json":
        return hf_templates(path.parent)
    if spec in CATALOG_DEFAULTS:
        return {"default": builtin(CATALOG_DEFAULTS[spec])}
    return {}


def choose_template(spec: str, choice: str | None = None) -> ChatTemplate:
    """The template to render `spec`'s chats with: `choice` is a file (`.jinja`, a
    `tokenizer_config.json`, a `.gguf`), the name of one of the spec's own templates (`tool_use`),
    or a built-in name; without it, the spec's default template."""
    own = templates_for(spec)
    if choice is None:
        if "default" in own:
            return own["default"]
        if own:
            return own[sorted(own)[0]]
        raise TemplateSourceError(
            f"{spec} carries no chat template: pass --template FILE or a built-in name "
            f"({', '.join(sorted(BUILTIN))})"
        )
    path = Path(choice)
    if path.is_file():
        if path.suffix == ".gguf":
            templates = gguf_templates(path)
        elif path.suffix == ".json":
            templates = hf_templates(path.parent)
        else:
            try:
                source = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise TemplateSourceError(f"cannot read template {path}: {e}") from e
            strings = next(iter(own.values())).special_strings if own else {}
            return ChatTemplate(source, name=path.name, origin=str(path), special_strings=strings)
        if "default" not in templates:
            raise TemplateSourceError(f"{path} holds no default chat template")
        return templates["default"]
    if choice in own:
        return own[choice]
    if choice in BUILTIN:
        return builtin(choice)
    names = sorted(own) + sorted(BUILTIN)
    raise TemplateSourceError(f"no chat template {choice!r} for {spec} (no such file); choose from: {', '.join(names)}")
