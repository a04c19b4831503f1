"""`tokviz vocabs --local` / `--json` on model stores built in tmp_path (the `machine` fixture)."""

from __future__ import annotations

import json

from tokviz.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_local_lists_every_store_as_a_table(machine, capsys):
    code, out, err = run(capsys, "vocabs", "--local")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "where", "format", "ids", "spec", "(-t)"]
    row = next(line for line in lines if line.startswith("ollama qwen2:7b"))
    assert row.rstrip().endswith("ollama:qwen2:7b") and "Ollama" in row and "151,936" in row
    deepseek = next(line for line in lines if line.startswith("deepseek-ai/DeepSeek-V3"))
    assert "Hugging Face cache" in deepseek and deepseek.rstrip().endswith("hf:deepseek-ai/DeepSeek-V3")
    assert "no application/vnd.ollama.image.model layer" in err  # the manifest it skipped
    assert "searched: Hugging Face cache" in out


def test_local_json_has_names_specs_and_notes(machine, capsys):
    code, out, _ = run(capsys, "vocabs", "--local", "--json")
    assert code == 0
    data = json.loads(out)
    specs = {t["spec"]: t for t in data["tokenizers"]}
    assert specs["ollama:qwen2:7b"]["vocab_size"] == 151936
    assert specs["hf:deepseek-ai/DeepSeek-V3"]["format"] == "tokenizer.json"
    assert {"name", "source", "format", "vocab_size", "path", "spec", "detail"} <= set(specs["hf:Qwen/Qwen-7B"])
    assert any("embed" in n for n in data["notes"])
    assert {s["source"] for s in data["searched"]} >= {"hf", "ollama", "lmstudio", "llama.cpp"}


def test_catalog_json(capsys):
    code, out, _ = run(capsys, "vocabs", "--json")
    names = {e["name"]: e for e in json.loads(out)["entries"]}
    assert code == 0 and names["cl100k_base"]["format"] == "tiktoken"


def test_added_folders_are_scanned_and_forgotten(machine, capsys, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "gpt2.gguf").write_bytes((tmp_path / "spare" / "gpt2.gguf").read_bytes())
    assert run(capsys, "vocabs", "--add-folder", str(folder))[0] == 0
    code, out, _ = run(capsys, "vocabs", "--local")
    assert any(line.startswith("gpt-2 ") and "your folders" in line for line in out.splitlines())
    assert run(capsys, "vocabs", "--remove-folder", str(folder))[0] == 0
    code, _, err = run(capsys, "vocabs", "--remove-folder", str(folder))
    assert code != 0 and "is not one of the added folders" in err and "Traceback" not in err
    code, _, err = run(capsys, "vocabs", "--add-folder", str(tmp_path / "nope"))
    assert code != 0 and "is not a folder" in err
