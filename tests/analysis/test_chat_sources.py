"""Where templates come from: GGUF metadata, Hugging Face folders, files, built-ins."""

from __future__ import annotations

import json

import pytest

from tests.analysis.chat_helpers import gguf_file
from tokviz.analysis.chat_sources import (
    BUILTIN,
    TemplateSourceError,
    choose_template,
    gguf_templates,
    hf_templates,
)


def test_gguf_metadata_gives_the_template_and_the_special_strings():
    templates = gguf_templates(gguf_file("phi-3"))
    assert set(templates) == {"default"}
    assert templates["default"].special_strings["bos_token"] == "<s>"
    assert "<|user|>" in templates["default"].source


@pytest.mark.parametrize("cut", [3, 30, 200])
def test_a_truncated_or_foreign_file_is_a_clear_error(tmp_path, cut):
    data = gguf_file("phi-3").read_bytes()[:cut]
    path = tmp_path / "cut.gguf"
    path.write_bytes(data)
    with pytest.raises(TemplateSourceError, match=r"cut.gguf"):
        gguf_templates(path)


def test_hugging_face_config_string_list_and_jinja_file(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": {"content": "<s>", "lstrip": False}, "eos_token": "</s>",
        "chat_template": [{"name": "default", "template": "A{{ bos_token }}"}, {"name": "tool_use", "template": "T"}],
    }))
    templates = hf_templates(tmp_path)
    assert set(templates) == {"default", "tool_use"}
    assert templates["default"].render([]).text == "A<s>"
    (tmp_path / "chat_template.jinja").write_text("J{{ eos_token }}")
    assert hf_templates(tmp_path)["default"].render([]).text == "J</s>"  # the .jinja file wins, as in transformers
    assert choose_template(str(tmp_path / "tokenizer_config.json"), "tool_use").source == "T"
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "S"}))
    assert hf_templates(tmp_path)["default"].source == "J{{ eos_token }}"


def test_choosing_by_name_file_or_builtin(tmp_path):
    assert choose_template("qwen").name == "chatml"
    assert choose_template("mistral-7b-v0.1").name == "mistral"
    assert choose_template("qwen", "llama3").source == BUILTIN["llama3"][0]
    own = tmp_path / "mine.jinja"
    own.write_text("{{ eos_token }}!")
    chosen = choose_template("qwen", str(own))
    assert (chosen.name, chosen.render([]).text) == ("mine.jinja", "<|im_end|>!")  # the spec's strings
    assert choose_template(str(gguf_file("command-r")), "rag").name == "rag"
    assert choose_template("ggml-vocab-command-r").source == gguf_templates(gguf_file("command-r"))["default"].source
    with pytest.raises(TemplateSourceError, match="deepseek-v3 carries no chat template: pass --template"):
        choose_template("deepseek-v3")
    with pytest.raises(TemplateSourceError, match="no chat template 'nope' for qwen"):
        choose_template("qwen", "nope")
