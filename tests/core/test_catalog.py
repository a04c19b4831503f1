from __future__ import annotations

import json
import shutil

import pytest

from tokviz.core import catalog
from tokviz.core.tokenizer import TokenizerError


def test_every_builtin_entry_is_provisioned_and_verified():
    for entry in catalog.builtin_entries():
        assert entry.available, f"{entry.name} missing: run tokviz vocabs fetch"
        assert entry.verified_path() == entry.path
        for extra in entry.extras:
            assert entry.extra_path(extra.file[-4:]) == extra.path


def test_names_and_aliases_resolve():
    assert catalog.find("gpt2").name == "r50k_base"
    assert catalog.find("QWEN").name == "qwen"
    assert catalog.find("nope") is None


def test_qwen_special_tokens_expand_the_extra_range():
    qwen = catalog.find("qwen")
    assert len(qwen.special_tokens) == 208
    assert qwen.special_tokens["<|extra_0|>"] == 151646


def test_unknown_spec_lists_the_catalog():
    with pytest.raises(TokenizerError, match="unknown tokenizer 'nope'.*cl100k_base"):
        catalog.load("nope")


def test_hash_mismatch_is_refused_with_the_way_out(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path))
    entry = catalog.find("qwen")
    entry.path.parent.mkdir(parents=True)
    entry.path.write_bytes(b"IQ== 0\n")
    with pytest.raises(TokenizerError, match="sha256 .* does not match.*tokviz vocabs fetch qwen"):
        catalog.load("qwen")


def test_missing_entry_says_how_to_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path))
    with pytest.raises(TokenizerError, match="not provisioned.*tokviz vocabs fetch cl100k_base"):
        catalog.load("cl100k_base")


def test_a_copied_file_is_recognised_by_its_hash(tmp_path):
    copy = tmp_path / "my-qwen-copy.tiktoken"
    shutil.copy(catalog.find("qwen").path, copy)
    tok = catalog.load(str(copy))
    assert tok.name == "qwen" and tok.special_tokens["<|im_end|>"] == 151645


def test_llama3_rank_file_named_model_is_sniffed_as_tiktoken():
    assert catalog.sniff_format(catalog.find("llama3").path) == "tiktoken"
    assert catalog.sniff_format(catalog.find("mistral-7b-v0.1").path) == "sentencepiece"
    assert catalog.sniff_format(catalog.find("deepseek-v3").path) == "tokenizer.json"


@pytest.mark.parametrize("content", [b"", b"\x00\x01garbage", b"hello there\n"])
def test_unrecognisable_files_name_the_file(tmp_path, content):
    path = tmp_path / "weird.bin"
    path.write_bytes(content)
    with pytest.raises(TokenizerError) as info:
        catalog.load(str(path))
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(TokenizerError, match="no such file"):
        catalog.load(str(tmp_path / "absent.tiktoken"))


def test_user_catalog_entries_extend_the_builtin_ones(tmp_path, monkeypatch):
    r50k = catalog.find("r50k_base")
    (tmp_path / "data" / "vocabs").mkdir(parents=True)
    shutil.copy(r50k.path, tmp_path / "data" / "vocabs" / "own.tiktoken")
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data" / "catalog.json").write_text(json.dumps({"entries": [{
        "name": "my-gpt2", "format": "tiktoken", "file": "own.tiktoken", "sha256": r50k.sha256,
        "pattern": r50k.pattern, "special_tokens": {"<|endoftext|>": 50256},
    }]}))
    entry = catalog.find("my-gpt2")
    assert entry.user and entry.available
    assert catalog.load("my-gpt2").encode_ids("hello world") == [31373, 995]


def test_broken_user_catalog_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path))
    (tmp_path / "catalog.json").write_text("{not json")
    with pytest.raises(TokenizerError, match="catalog.json: not a valid tokviz catalog"):
        catalog.user_entries()
    with pytest.warns(catalog.CatalogWarning, match="not a valid tokviz catalog .*; its entries are skipped"):
        assert [e.name for e in catalog.entries()] == [e.name for e in catalog.builtin_entries()]


def test_default_specs_prefer_the_provisioned_preferred_ones():
    specs = catalog.default_specs()
    available = {e.name for e in catalog.entries() if e.available}
    assert len(specs) >= 3 and set(specs) <= available
    preferred = [n for n in catalog.PREFERRED if n in available]
    assert specs[: len(preferred)] == preferred
    assert catalog.missing_preferred() == [n for n in catalog.PREFERRED if n not in available]


def test_a_fresh_machine_with_a_broken_user_catalog_misses_every_preferred_one(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path))
    (tmp_path / "catalog.json").write_text("{not json")
    with pytest.warns(catalog.CatalogWarning):
        assert catalog.missing_preferred() == list(catalog.PREFERRED)
        assert set(catalog.default_specs()) <= {e.name for e in catalog.builtin_entries() if e.available}


def test_a_path_in_a_hub_cache_snapshot_is_named_after_its_repository(tmp_path):
    """`-t .../models--org--name/snapshots/REV` (or a file in it) goes by `org/name`, as `hf:`
    specs do, not by the revision hash; elsewhere a file goes by its stem."""
    import base64

    snapshot = tmp_path / "hub" / "models--someorg--tiny-bpe" / "snapshots" / ("0123abcd" * 5)
    snapshot.mkdir(parents=True)
    ranks = "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))
    (snapshot / "tokenizer.tiktoken").write_text(ranks)
    (tmp_path / "mine.tiktoken").write_text(ranks)
    assert catalog.load_path(snapshot / "tokenizer.tiktoken").name == "someorg/tiny-bpe"
    assert catalog.load_path(tmp_path / "mine.tiktoken").name == "mine"
    deepseek = catalog.find("deepseek-v3").verified_path()  # a real tokenizer.json, in a snapshot folder
    (snapshot / "tokenizer.json").symlink_to(deepseek)
    assert catalog.load_path(snapshot).name == "someorg/tiny-bpe"
