"""The README's command-line examples, run as written: every output the README shows is what the
command prints, and the commands it shows without output run and succeed on files made here."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.peers.cli import run

ROOT = Path(__file__).resolve().parents[2]


def console_examples() -> list[tuple[list[str], list[str]]]:
    """(argv after `tokviz`, the output lines the README shows) for each `$ tokviz` line."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n(.*?)```", text, re.S)
    assert block, "the README has a console block"
    examples: list[tuple[list[str], list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            command = shlex.split(line[2:], comments=True)
            examples.append((command[1:] if command[:1] == ["tokviz"] else [], []))
        elif examples:
            examples[-1][1].append(line)
    return examples


SHOWN = [(argv, shown) for argv, shown in console_examples() if argv and shown]


def test_the_readme_shows_outputs():
    assert [argv[0] for argv, _ in SHOWN][:3] == ["encode", "diff", "overlap"]


@pytest.mark.parametrize(("argv", "shown"), SHOWN, ids=[" ".join(a)[:50] for a, _ in SHOWN])
def test_every_output_the_readme_shows_is_printed(capsys, argv, shown):
    code, out, err = run(capsys, *argv)
    assert code in (0, 1), err  # diff exits 1 when the ids differ, as its comment says
    lines = out.splitlines()
    pos = 0
    for want in shown:
        if want.strip() == "…":  # the README leaves lines out here
            continue
        assert want in lines[pos:], f"{want!r} not printed (in order) by tokviz {' '.join(argv)}"
        pos = lines.index(want, pos) + 1


def test_the_commands_shown_without_output_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    samples = ROOT / "tokviz" / "resources" / "samples"
    shutil.copy(samples / "korean.txt", "korean.txt")
    shutil.copy(samples / "english.txt", "english.txt")
    shutil.copy(ROOT / "docs" / "chat-example.json", "chat.json")
    Path("prompt.txt").write_text("Hello, world! 대한민국 🤗\n", encoding="utf-8")
    Path("corpus").mkdir()
    for f in ("english.txt", "korean.txt", "python_code.py"):
        shutil.copy(samples / f, Path("corpus") / f)
    Path("words.tsv").write_text("我是一只猫\t20\n一只猫\t100\n", encoding="utf-8")
    Path("my_template.jinja").write_text(
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n{% endif %}",
        encoding="utf-8")

    def ok(*argv: str) -> str:
        code, out, err = run(capsys, *argv)
        assert code == 0, f"tokviz {' '.join(argv)}: {err}"
        return out

    [cl100k, mistral] = json.loads(ok("encode", "--json", "-t", "cl100k_base", "-t", "mistral-7b-v0.1", "hello world"))
    assert [t["id"] for t in cl100k["tokens"]] == [15339, 1917]
    assert "<|endoftext|>" in ok("encode", "-t", "qwen", "--special", "all", 'print("<|endoftext|>")')
    with open("prompt.txt", encoding="utf-8") as prompt:  # `- < prompt.txt`
        monkeypatch.setattr("sys.stdin", prompt)
        assert json.loads(ok("diff", "--json", "-t", "llama3", "-t", "ggml-vocab-llama-bpe", "-"))["identical"] is True
    ok("overlap", "--json", "-t", "qwen", "-t", "cl100k_base")
    assert "cl100k_base" in ok("vocabs")
    ok("train", "corpus", "-o", "mybpe", "--vocab-size", "600", "--pattern", "cl100k", "--special", "<|endoftext|>")
    assert "ids:" in ok("encode", "-t", "mybpe.tiktoken", "trained here")
    ok("extend", "qwen", "words.tsv", "-o", "qwen_extra.tiktoken")
    assert json.loads(ok("overlap", "--json", "-t", "qwen", "-t", "qwen_extra.tiktoken"))
    ok("stats", "korean.txt", "english.txt", "-t", "cl100k_base", "-t", "qwen", "--price", "cl100k_base=2.5",
       "--limit", "4096")
    ok("chat", "-t", "qwen", "-t", "mistral-instruct-v3", "--generation-prompt", "--context", "4096", "chat.json")
    ok("chat", "-t", "qwen", "--template", "my_template.jinja", "--set", "enable_thinking=false", "chat.json")
