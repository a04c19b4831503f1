"""The one sidecar reader: trained and extension sidecars checked for version, shape and base hash."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tokviz.cli import main
from tokviz.core import catalog
from tokviz.core.sidecar import (
    EXTENSION_FORMAT,
    EXTENSION_VERSION,
    TRAINED_FORMAT,
    TRAINED_VERSION,
    find_sidecar,
    load_trained,
    read_sidecar,
)
from tokviz.core.tokenizer import TokenizerError
from tokviz.training.extend import learn_extension, save_extension


def write_ranks(path: Path, ranks: dict[bytes, int]) -> Path:
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    return path


BYTES = {bytes([b]): b for b in range(256)}


@pytest.fixture
def base(tmp_path) -> Path:
    """A tiny byte-level base on disk: the 256 bytes and one merge."""
    return write_ranks(tmp_path / "base.tiktoken", {**BYTES, b"ab": 256})


@pytest.fixture
def extension(tmp_path, base) -> Path:
    """`ab` + `c` -> `abc` on the tiny base, saved as the extend tools save it."""
    tok = catalog.load(str(base))
    learned = learn_extension(tok, {"abc": 3})
    return save_extension(
        learned, tmp_path / "extra.tiktoken", base_spec=str(base), base_sha256=catalog.file_sha256(base)
    )


def rewrite_sidecar(ranks_path: Path, **changes) -> Path:
    path = ranks_path.with_suffix(".json")
    data = json.loads(path.read_text("utf-8"))
    for key, value in changes.items():
        if value is ...:
            del data[key]
        else:
            data[key] = value
    path.write_text(json.dumps(data), "utf-8")
    return path


def test_an_extension_loads_alone_on_the_base_it_names(extension):
    tok = catalog.load(str(extension))
    assert tok.encode_ids("abc") == [257] and tok.name == "base+extra"
    meta = find_sidecar(extension)
    assert meta is not None and meta["format"] == EXTENSION_FORMAT and meta["version"] == EXTENSION_VERSION


def test_a_changed_base_is_refused_naming_file_and_field(extension, base):
    write_ranks(base, {**BYTES, b"ab": 256, b"ba": 257})
    with pytest.raises(TokenizerError, match=r'extra\.json: "base_sha256" [0-9a-f]{64} does not match the base'):
        catalog.load(str(extension))


def test_a_catalog_base_is_checked_against_the_catalog_sha256(vocab, tmp_path):
    learned = learn_extension(vocab("qwen"), {"我是一只猫": 20})
    out = save_extension(learned, tmp_path / "q.tiktoken", base_spec="qwen", base_sha256=catalog.find("qwen").sha256)
    assert catalog.load(str(out)).encode_ids("我是一只猫") == [learned.merges[-1].id]
    rewrite_sidecar(out, base_sha256="0" * 64)
    with pytest.raises(TokenizerError, match='"base_sha256" 0{64} does not match the base \'qwen\''):
        catalog.load(str(out))


@pytest.mark.parametrize("changes, message", [
    ({"version": 2}, r"extra\.json: sidecar version 2 is not supported \(expected 1\)"),
    ({"version": ...}, "sidecar version None is not supported"),
    ({"base": ...}, r'extra\.json: "base" must be the base\'s catalog name or path, not null'),
    ({"base": ["qwen"]}, '"base" must be the base\'s catalog name or path, not a list'),
    ({"base_sha256": ...}, '"base_sha256" must be the base\'s sha256 \\(64 hex digits\\), not null'),
    ({"base_sha256": "abc"}, "\"base_sha256\" must be the base's sha256 \\(64 hex digits\\), not 'abc'"),
])
def test_bad_extension_sidecars(extension, changes, message):
    rewrite_sidecar(extension, **changes)
    with pytest.raises(TokenizerError, match=message):
        catalog.load(str(extension))


@pytest.mark.parametrize("own", ["extra.tiktoken", "extra.json"])
def test_an_extension_naming_itself_is_an_error_not_a_recursion(extension, own):
    rewrite_sidecar(extension, base=str(extension.parent / own))
    with pytest.raises(TokenizerError, match='"base" names the extension itself'):
        catalog.load(str(extension))


def trained(tmp_path: Path, **changes) -> Path:
    ranks = write_ranks(tmp_path / "mine.tiktoken", BYTES)
    meta = {"format": TRAINED_FORMAT, "version": TRAINED_VERSION, "name": "mine", "pattern": None,
            "special_tokens": {"<|end|>": 256}}
    meta.update(changes)
    ranks.with_suffix(".json").write_text(json.dumps(meta), "utf-8")
    return ranks


def test_a_trained_sidecar_loads(tmp_path):
    tok = catalog.load(str(trained(tmp_path)))
    assert tok.family == "trained" and tok.special_tokens == {"<|end|>": 256}
    assert load_trained(tmp_path / "mine.json").vocab_size == 257


@pytest.mark.parametrize("changes, message", [
    ({"special_tokens": ["<|end|>"]}, r'mine\.json: "special_tokens" must be an object of token -> id, not a list'),
    ({"special_tokens": {"<|end|>": "256"}}, '"special_tokens" must be an object of token -> id'),
    ({"pattern": 5}, '"pattern" must be a string, not 5'),
    ({"version": 99}, "sidecar version 99 is not supported"),
])
def test_bad_trained_sidecars(tmp_path, changes, message):
    path = trained(tmp_path, **changes)
    with pytest.raises(TokenizerError, match=message):
        catalog.load(str(path))


def test_unreadable_and_foreign_sidecars(tmp_path):
    path = trained(tmp_path)
    path.with_suffix(".json").write_text("{not json", "utf-8")
    with pytest.raises(TokenizerError, match=r"cannot read sidecar .*mine\.json"):
        catalog.load(str(path))
    path.with_suffix(".json").write_text('{"format": "someone-else"}', "utf-8")
    assert catalog.load(str(path)).family == "tiktoken"  # another tool's NAME.json is not ours
    with pytest.raises(TokenizerError, match='is not a tokviz-bpe sidecar'):
        read_sidecar(path.with_suffix(".json"))
    path.with_suffix(".json").write_text("[1, 2]", "utf-8")
    with pytest.raises(TokenizerError, match='is not a tokviz-extension sidecar'):
        read_sidecar(path.with_suffix(".json"), expected=EXTENSION_FORMAT)


def test_the_cli_says_what_is_wrong_in_one_line(extension, capsys):
    rewrite_sidecar(extension, version=7)
    assert main(["encode", "-t", str(extension), "abc"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sidecar version 7 is not supported" in err and "Traceback" not in err
