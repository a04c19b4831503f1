"""Discovery of the tokenizers on a machine, on real layouts built in tmp_path: a Hugging Face
cache whose snapshot files are symlinks into blobs/, an Ollama store whose blob is a real llama.cpp
GGUF, an LM Studio folder, llama.cpp's cache and a user folder with a symlink loop."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.local_models import DEEPSEEK_CONFIG, REV, hf_repo
from tokviz.core import catalog, discovery
from tokviz.core.tokenizer import TokenizerError


def by_spec(scan: discovery.Scan) -> dict[str, discovery.Found]:
    return {f.spec: f for f in scan.found}


def test_every_store_is_found_with_names_formats_sizes_and_specs(machine):
    scan = discovery.scan()
    found = by_spec(scan)
    lms = "lmstudio:lmstudio-community/Meta-Llama-3-8B-GGUF/Meta-Llama-3-8B-Q4_K_M.gguf"
    spm = str(machine / "llama-cache" / "ggml-org_llama-spm.gguf")
    assert set(found) == {
        "hf:deepseek-ai/DeepSeek-V3", "hf:Qwen/Qwen-7B", "hf:mistralai/Mistral-7B-v0.1",
        "hf:meta-llama/Meta-Llama-3-8B", "ollama:qwen2:7b", "ollama:someone/llama3.2:3b", lms, spm,
    }
    deepseek = found["hf:deepseek-ai/DeepSeek-V3"]
    assert (deepseek.name, deepseek.format, deepseek.vocab_size) == (
        "deepseek-ai/DeepSeek-V3", "tokenizer.json", 129280
    )
    assert deepseek.path.name == "tokenizer.json" and deepseek.path.parent.name == REV
    assert found["hf:Qwen/Qwen-7B"].format == "tiktoken"
    assert found["hf:Qwen/Qwen-7B"].vocab_size == 151643  # its last rank + 1
    assert found["hf:mistralai/Mistral-7B-v0.1"].format == "sentencepiece"
    # no config.json to say it: the model file's own count of pieces (sentencepiece's get_piece_size)
    assert found["hf:mistralai/Mistral-7B-v0.1"].vocab_size == 32000
    llama3 = found["hf:meta-llama/Meta-Llama-3-8B"]  # a rank file by content, whatever its name
    assert (llama3.format, llama3.vocab_size) == ("tiktoken", 128000)
    qwen2 = found["ollama:qwen2:7b"]
    assert (qwen2.label, qwen2.format, qwen2.vocab_size) == ("ollama qwen2:7b", "gguf", 151936)
    assert qwen2.path.parent.name == "blobs" and qwen2.path.name.startswith("sha256-")
    assert qwen2.detail == "GGUF gpt2 · pre-tokenizer qwen2"
    assert found[lms].name == "llama-bpe"  # the GGUF's general.name
    assert found[lms].vocab_size == 128256
    assert found[spm].source == "llama.cpp" and found[spm].vocab_size == 32000
    assert any("embed/latest" in n and "no application/vnd.ollama.image.model layer" in n for n in scan.notes)


def test_refs_main_picks_the_revision(machine):
    hub = machine / "hf" / "hub"
    older = hf_repo(hub, "org/two-revisions", {"tokenizer.model": b"\x0a\x00"}, rev="a" * 40)
    newer = hub / "models--org--two-revisions" / "snapshots" / ("b" * 40)
    newer.mkdir()
    shutil.copyfile(older / "tokenizer.model", newer / "tokenizer.model")
    found = by_spec(discovery.scan())["hf:org/two-revisions"]
    assert found.path.parent.name == "a" * 40  # refs/main, not the newest folder
    (hub / "models--org--two-revisions" / "refs" / "main").unlink()
    assert by_spec(discovery.scan())["hf:org/two-revisions"].path.parent.name == "b" * 40


def test_a_user_folder_is_remembered_and_a_symlink_loop_is_a_note(machine):
    folder = machine / "mine"
    (folder / "a" / "b").mkdir(parents=True)
    shutil.copyfile(machine / "spare" / "gpt2.gguf", folder / "a" / "gpt2.gguf")
    (folder / "a" / "b" / "loop").symlink_to(folder / "a")  # back up the tree: a loop
    (folder / "out").symlink_to(machine / "ollama")  # out of the tree: not followed
    (folder / "gone.gguf").symlink_to(folder / "missing.gguf")
    assert discovery.add_folder(folder) == folder
    assert discovery.add_folder(folder) == folder  # once
    saved = json.loads((machine / "data" / "folders.json").read_text())
    assert saved == {"format": "tokviz-folders v1", "folders": [str(folder)]}
    scan = discovery.scan()
    mine = [f for f in scan.found if f.source == "folder"]
    assert [(f.name, f.spec) for f in mine] == [("gpt-2", str(folder / "a" / "gpt2.gguf"))]
    assert any("symlink loop" in n for n in scan.notes)
    assert any("a symlink out of" in n for n in scan.notes)
    assert any("gone.gguf: broken symlink" in n for n in scan.notes)
    assert discovery.remove_folder(folder) and discovery.user_folders() == []


def test_unreadable_entries_are_skipped_with_a_note(machine):
    bad = machine / "llama-cache" / "truncated.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 8 + b"\xff" * 8)
    scan = discovery.scan()
    assert str(bad) not in by_spec(scan)
    assert any(str(bad) in n for n in scan.notes)
    assert len(scan.found) == 8


def test_nothing_installed_finds_nothing(tmp_path, monkeypatch):
    for key in ("HF_HUB_CACHE", "OLLAMA_MODELS", "LLAMA_CACHE", "HF_HOME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path / "data"))
    scan = discovery.scan()
    assert scan.found == [] and scan.notes == []
    assert discovery.hf_hub_dir() == tmp_path / ".cache" / "huggingface" / "hub"


def test_hf_home_names_the_hub(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert discovery.hf_hub_dir() == tmp_path / "hf" / "hub"


# -- specs ---------------------------------------------------------------------------------------


def test_hf_spec_loads_the_snapshot_with_its_own_settings(machine, vocab):
    tok = catalog.load("hf:deepseek-ai/DeepSeek-V3")
    assert tok.name == "deepseek-ai/DeepSeek-V3"
    reference = vocab("deepseek-v3")
    text = "Hello world, 你好 <｜User｜> hi"
    plain = reference.encode_ids("Hello world, 你好")
    assert tok.encode_ids("Hello world, 你好") == plain
    # added_tokens_decoder marks <｜User｜> special: parsed only when allowed, like the others
    assert tok.special_tokens["<｜User｜>"] == 128803
    assert "<｜User｜>" not in reference.special_tokens
    assert 128803 in tok.encode_ids(text, allowed_special="all")
    # add_bos_token: BOS in front "as the model sees it" (the post-processor alone adds nothing)
    added = tok.specials_added(text)
    assert added is not None and added.before == (0,) and added.after == ()
    assert reference.specials_added(text) in (None, type(added)())
    assert tok.chat_template == DEEPSEEK_CONFIG["chat_template"]


def test_ollama_and_lmstudio_specs_load_their_gguf(machine, vocab):
    qwen2 = catalog.load("ollama:qwen2:7b")
    assert qwen2.name == "qwen2:7b" and qwen2.family == "gguf"
    assert qwen2.encode_ids("Hello world") == vocab("ggml-vocab-qwen2").encode_ids("Hello world")
    assert catalog.load("ollama:someone/llama3.2:3b").vocab_size == 128256
    lms = catalog.load("lmstudio:lmstudio-community/Meta-Llama-3-8B-GGUF")
    assert lms.vocab_size == 128256


def test_other_specs_load_as_listed(machine):
    for found in discovery.scan().found:
        assert catalog.load(found.spec).vocab_size > 0, found.spec


@pytest.mark.parametrize(("spec", "message"), [
    ("hf:nobody/nothing", "is not in the Hugging Face cache"),
    ("hf:nobody/x-GGUF/x.Q4_K_M.gguf", "`huggingface-cli download nobody/x-GGUF x.Q4_K_M.gguf`"),
    ("hf:deepseek-ai/DeepSeek-V3@deadbeef", "has no revision 'deadbeef'"),
    ("hf:no-slash", "expected hf:ORG/NAME"),
    ("hf:", "name a model after hf:"),
    ("ollama:qwen2:70b", "run `ollama pull qwen2:70b`"),
    ("ollama:nomodel", "run `ollama pull nomodel:latest`"),
    ("ollama:embed:latest", "no application/vnd.ollama.image.model layer"),
    ("ollama:../x:1", "expected ollama:MODEL:TAG"),
    ("lmstudio:nobody/nothing", "is not in LM Studio's models folder"),
])
def test_bad_specs_say_what_is_missing(machine, spec, message):
    with pytest.raises(TokenizerError) as e:
        catalog.load(spec)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_model_folder_path_loads_with_its_config(machine):
    snapshot = next((machine / "hf" / "hub" / "models--deepseek-ai--DeepSeek-V3" / "snapshots").iterdir())
    tok = catalog.load(str(snapshot))
    assert tok.special_tokens["<｜User｜>"] == 128803


def test_the_chat_code_finds_a_local_models_template(machine):
    from tokviz.analysis.chat_sources import templates_for

    template = templates_for("hf:deepseek-ai/DeepSeek-V3")["default"]
    assert template.source == DEEPSEEK_CONFIG["chat_template"]
    assert template.special_strings["bos_token"] == "<｜begin▁of▁sentence｜>"
    assert "<|im_start|>" in templates_for("ollama:qwen2:7b")["default"].source  # the GGUF's own


def test_a_gguf_repository_lists_each_file_under_an_hf_spec_that_loads(machine):
    hub = machine / "hf" / "hub"
    qwen2 = by_spec(discovery.scan())["ollama:qwen2:7b"].path.read_bytes()  # ggml-vocab-qwen2.gguf
    hf_repo(hub, "Qwen/Qwen2-7B-Instruct-GGUF", {"qwen2-7b-instruct-q8_0.gguf": qwen2,
                                                 "qwen2-7b-instruct-q4_k_m.gguf": qwen2})
    found = by_spec(discovery.scan())
    specs = sorted(s for s in found if s.startswith("hf:Qwen/Qwen2-7B-Instruct-GGUF"))
    assert specs == ["hf:Qwen/Qwen2-7B-Instruct-GGUF/qwen2-7b-instruct-q4_k_m.gguf",
                     "hf:Qwen/Qwen2-7B-Instruct-GGUF/qwen2-7b-instruct-q8_0.gguf"]
    first = found[specs[0]]
    assert (first.name, first.source, first.format, first.vocab_size) == (
        "Qwen/Qwen2-7B-Instruct-GGUF/qwen2-7b-instruct-q4_k_m.gguf", "hf", "gguf", 151936)
    for spec in specs:
        tokenizer = catalog.load(spec)
        assert tokenizer.vocab_size == 151936 and tokenizer.encode_ids("hello world") == [14990, 1879]
    # the repository alone: its first file (the quantizations share one vocabulary)
    alone = catalog.load("hf:Qwen/Qwen2-7B-Instruct-GGUF")
    assert alone.name == "Qwen/Qwen2-7B-Instruct-GGUF/qwen2-7b-instruct-q4_k_m.gguf"
    with pytest.raises(TokenizerError, match="holds no nope.gguf"):
        catalog.load("hf:Qwen/Qwen2-7B-Instruct-GGUF/nope.gguf")
    with pytest.raises(TokenizerError, match="expected hf:ORG/NAME or hf:ORG/NAME/FILE.gguf"):
        catalog.load("hf:Qwen/Qwen2-7B-Instruct-GGUF/config.json")


def test_a_sentencepiece_size_is_counted_from_the_model_file(tmp_path, vocab_path):
    import sentencepiece

    for name in ("mistral-7b-v0.1", "mistral-instruct-v3", "botchan-unigram-1k", "kyoto-ja-unigram-8k"):
        path = vocab_path(name)
        model = sentencepiece.SentencePieceProcessor(model_file=str(path))
        assert discovery.sentencepiece_size(path, []) == model.get_piece_size(), name
    notes: list[str] = []
    junk = tmp_path / "tokenizer.model"
    junk.write_bytes(b"\x0a\xff\xff\x03abc")  # a piece whose length runs past the end
    assert discovery.sentencepiece_size(junk, notes) is None and "not a SentencePiece model" in notes[0]
