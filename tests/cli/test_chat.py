"""`tokviz chat` as a script user sees it."""

from __future__ import annotations

import json

import pytest

from tests.analysis.chat_helpers import CONVERSATION, gguf_file
from tokviz.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def chat_file(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    return path


def test_json_for_several_tokenizers_each_with_its_template(capsys, chat_file):
    code, out, err = run(capsys, "chat", "--json", "-t", "qwen", "-t", "mistral-instruct-v3", "--context", "64",
                         "--generation-prompt", str(chat_file))
    assert (code, err) == (0, "")
    qwen, mistral = json.loads(out)
    assert (qwen["template"]["name"], mistral["template"]["name"]) == ("chatml", "mistral")
    assert qwen["text"].endswith("<|im_start|>assistant\n")
    counts = qwen["counts"]
    assert counts["total"] == len(qwen["tokens"]) == counts["template"] + sum(counts["messages"])
    assert counts["room"] == 64 - counts["total"]
    assert {t["origin"] for t in qwen["tokens"]} == {"template", 0, 1, 2, 3}
    assert [(f["kind"], f["message"], f["text"]) for f in qwen["findings"]] == [
        ("injected-special", 3, "<|im_start|>"), ("injected-special", 3, "<|im_end|>"),
        ("injected-special", 3, "<|endoftext|>")]
    assert ("injected-special", 3, "[INST]") in [(f["kind"], f["message"], f["text"]) for f in mistral["findings"]]


def test_text_output_shows_prompt_origins_counts_and_findings(capsys, chat_file):
    code, out, _ = run(capsys, "chat", "-t", "qwen", "--color", "never", str(chat_file))
    assert code == 0
    assert out.startswith("── qwen · template chatml (built-in): ")
    assert "  message 3   user" in out and "  template " in out
    assert "{<|im_start|>}{system}{↵}‹0 [You][·are][·terse][.]" in out
    assert "! message 3 contains `<|im_start|>`: a naive pipeline" in out
    assert "naive pipeline (every special token parsed):" in out


def test_template_by_name_file_and_gguf(capsys, chat_file, tmp_path):
    template = tmp_path / "plain.jinja"
    template.write_text("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}")
    code, out, _ = run(capsys, "chat", "--json", "-t", "cl100k_base", "--template", str(template), str(chat_file))
    [result] = json.loads(out)
    assert code == 0 and result["text"].startswith("system: You are terse.")
    code, out, _ = run(capsys, "chat", "--json", "-t", "qwen", "--template", str(gguf_file("qwen2")), str(chat_file))
    assert code == 0 and json.loads(out)[0]["template"]["origin"].endswith("ggml-vocab-qwen2.gguf")
    code, out, _ = run(capsys, "chat", "--json", "-t", "qwen", "--template", "llama3", str(chat_file))
    [result] = json.loads(out)
    assert code == 0 and result["text"].startswith("<|begin_of_text|><|start_header_id|>system")
    findings = [(f["kind"], f["text"]) for f in result["findings"]]
    assert ("template-marker-not-special", "<|start_header_id|>") in findings


def test_template_variables(capsys, tmp_path, chat_file):
    template = tmp_path / "think.jinja"
    template.write_text("{% if not enable_thinking %}/no_think {% endif %}{{ messages[0].content }}")
    code, out, _ = run(capsys, "chat", "--json", "-t", "qwen", "--template", str(template),
                       "--set", "enable_thinking=false", str(chat_file))
    assert code == 0 and json.loads(out)[0]["text"].startswith("/no_think You are terse.")


@pytest.mark.parametrize("content, args, message", [
    ("{% for m in messages %}\n{{ m.content }\n{% endfor %}", (), "broken.jinja line 2: unexpected '}'"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", (), "stopped after"),
    ("{{ ''.__class__.__mro__ }}", (), "refused by the sandbox"),
    ("ok", ("--set", "1x=2"), "--set '1x=2' is not KEY=VALUE"),
    ("ok", ("--context", "0"), "--context 0"),
])
def test_errors_are_one_line(capsys, tmp_path, chat_file, content, args, message):
    template = tmp_path / "broken.jinja"
    template.write_text(content)
    code, out, err = run(capsys, "chat", "-t", "qwen", "--template", str(template), *args, str(chat_file))
    assert code == 1 and out == ""
    assert err.startswith("tokviz: error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("content, message", [
    ("not json", "not JSON"),
    ('{"role": "user"}', "must be a JSON list"),
    ('[{"role": "user", "content": 5}]', 'message 0: "content" must be'),
])
def test_bad_messages_are_one_line(capsys, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, _, err = run(capsys, "chat", "-t", "qwen", str(path))
    assert code == 1 and message in err and err.count("\n") == 1


def test_a_spec_without_a_template_says_what_to_do(capsys, chat_file):
    code, _, err = run(capsys, "chat", "-t", "deepseek-v3", str(chat_file))
    assert code == 1 and "deepseek-v3 carries no chat template: pass --template" in err


def test_a_token_merged_across_the_boundary_is_starred(capsys, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "You"}]))
    code, out, _ = run(capsys, "chat", "-t", "mistral-7b-v0.1", "--color", "never", str(path))
    assert code == 0 and "{<s>}{·[}{INST}{]}‹0 [·You]*›" in out


def test_a_gguf_brings_its_tokenizer_and_its_template(capsys, chat_file):
    gguf_file("qwen2")  # provisioned
    code, out, _ = run(capsys, "chat", "--json", "-t", "ggml-vocab-qwen2", "--generation-prompt", str(chat_file))
    [result] = json.loads(out)
    assert code == 0 and result["template"]["origin"].endswith("ggml-vocab-qwen2.gguf")
    specials = [t for t in result["tokens"] if t["kind"] == "special"]
    assert {t["piece"] for t in specials} == {"<|im_start|>", "<|im_end|>"}
    assert all(t["origin"] == "template" for t in specials)
    assert [(f["kind"], f["message"], f["text"]) for f in result["findings"]] == [
        ("injected-special", 3, "<|im_start|>"), ("injected-special", 3, "<|im_end|>"),
        ("injected-special", 3, "<|endoftext|>")]
