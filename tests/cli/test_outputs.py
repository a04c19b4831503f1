"""`train -o` / `extend -o` write only their own vocabularies, never a stranger's file or the base."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.training.texts import TRAINING
from tokviz.cli import main
from tokviz.core import catalog

WORDS = "我是一只猫\t20\n一只猫\t100\n"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("".join(TRAINING), encoding="utf-8")
    return path


@pytest.fixture
def words(tmp_path: Path) -> Path:
    path = tmp_path / "words.tsv"
    path.write_text(WORDS, encoding="utf-8")
    return path


def train(corpus: Path, out: Path, *extra: str) -> int:
    return main(["train", str(corpus), "-o", str(out), "--vocab-size", "300", "--jobs", "1", *extra])


def test_train_refuses_a_json_it_does_not_own(corpus, tmp_path, capsys):
    package = tmp_path / "package.json"
    package.write_text('{"name": "my-app"}')
    assert train(corpus, tmp_path / "package") == 1
    err = capsys.readouterr().err
    assert err.strip() == (f"tokviz train: error: {package} exists and is not a tokviz vocabulary named "
                           f"'package'; refusing to overwrite it (choose another -o, or --force)")
    assert package.read_text() == '{"name": "my-app"}' and not (tmp_path / "package.tiktoken").exists()
    assert train(corpus, tmp_path / "package", "--force") == 0
    assert catalog.load(str(tmp_path / "package.tiktoken")).family == "trained"


def test_train_replaces_its_own_vocabulary_but_not_another_name(corpus, tmp_path, capsys):
    assert train(corpus, tmp_path / "mine") == 0
    assert train(corpus, tmp_path / "mine") == 0  # its own: replaced
    (tmp_path / "mine.json").rename(tmp_path / "other.json")
    (tmp_path / "mine.tiktoken").rename(tmp_path / "other.tiktoken")
    (tmp_path / "lone.tiktoken").write_bytes((tmp_path / "other.tiktoken").read_bytes())
    capsys.readouterr()
    assert train(corpus, tmp_path / "lone") == 1  # a rank file without our sidecar
    assert "lone.tiktoken exists and is not a tokviz vocabulary named 'lone'" in capsys.readouterr().err


@pytest.mark.parametrize("out", ["mine.json", "mine.TIKTOKEN", "mine.tokenizer.json"])
def test_train_output_named_by_any_file_it_writes(corpus, tmp_path, capsys, out):
    """`-o mine.json` names the vocabulary `mine`, as `extend -o` does: never `mine.json.tiktoken`."""
    assert train(corpus, tmp_path / out) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("mine")) == ["mine.json", "mine.tiktoken"]
    assert f"wrote {tmp_path / 'mine.tiktoken'}, {tmp_path / 'mine.json'}" in capsys.readouterr().err
    assert catalog.load(str(tmp_path / "mine.json")).name == "mine"


def test_an_output_naming_a_folder_is_refused_before_any_work(vocab, words, corpus, tmp_path, capsys, monkeypatch):
    """`-o out/` (or `.`, `..`, an existing folder) wrote `out.tiktoken` beside the folder, or
    `...tiktoken` into the working folder; `~` in a quoted -o was a file named `~.tiktoken`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    for out in ("out/", "out", ".", "..", f"{tmp_path}/"):
        for argv in (["train", str(corpus), "-o", out, "--vocab-size", "300"],
                     ["extend", "qwen", str(words), "-o", out]):
            assert main(argv) == 1
            err = capsys.readouterr().err
            assert err.endswith(f"-o {out} names a folder; name the vocabulary in it: -o {out.rstrip('/')}/NAME\n")
    assert main(["train", str(corpus), "-o", "", "--vocab-size", "300"]) == 1
    assert "-o is empty" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", corpus.name, words.name])
    monkeypatch.setenv("HOME", str(tmp_path / "out"))
    assert train(corpus, Path("~/mine")) == 0  # as the shell would have it
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["mine.json", "mine.tiktoken"]


def test_extend_refuses_a_settings_file_and_never_writes_the_base(vocab, words, tmp_path, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text('{"theme": "dark"}')
    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "settings.tiktoken")]) == 1
    assert "settings.json exists and is not a tokviz-extension vocabulary" in capsys.readouterr().err
    assert settings.read_text() == '{"theme": "dark"}' and not (tmp_path / "settings.tiktoken").exists()

    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "ext")]) == 0
    base = tmp_path / "ext.tiktoken"
    before = base.read_bytes(), (tmp_path / "ext.json").read_bytes()
    capsys.readouterr()
    for out in (base, tmp_path / "ext", tmp_path / "ext.json"):
        assert main(["extend", str(base), str(words), "-o", str(out), "--force"]) == 1
        err = capsys.readouterr().err
        assert "is the base vocabulary's own file; write the output elsewhere" in err and "Traceback" not in err
    assert (base.read_bytes(), (tmp_path / "ext.json").read_bytes()) == before
    assert catalog.load(str(base)).encode_ids("我是一只猫") == [151854]


def test_extend_output_named_json_writes_the_pair(vocab, words, tmp_path, capsys):
    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "ext.json")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ext")) == ["ext.json", "ext.tiktoken"]
    assert catalog.load(str(tmp_path / "ext.tiktoken")).encode_ids("一只猫") == [151851]
    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "ext.json")]) == 0  # its own: replaced
    for out in ("ext.JSON", "ext.Tiktoken"):  # a suffix is a suffix in any case
        assert main(["extend", "qwen", str(words), "-o", str(tmp_path / out)]) == 0
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ext")) == ["ext.json", "ext.tiktoken"]


def test_extend_refuses_a_missing_folder_before_learning(vocab, words, tmp_path, capsys):
    out = tmp_path / "missing" / "ext"
    assert main(["extend", "qwen", str(words), "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # no merge was learnt and reported
    assert captured.err.strip() == f"tokviz: error: cannot save to {out}: folder {out.parent} does not exist"


def test_a_sidecar_named_with_t_loads_its_vocabulary(vocab, words, corpus, tmp_path, capsys):
    """`extend -o ext.json` says it wrote ext.tiktoken + ext.json; `-t ext.json` is the same
    vocabulary (it was read as a Hugging Face tokenizer.json and refused); so for a trained one."""
    assert main(["extend", "qwen", str(words), "-o", str(tmp_path / "ext.json")]) == 0
    capsys.readouterr()
    assert main(["encode", "-t", str(tmp_path / "ext.json"), "一只猫"]) == 0
    assert "ids: 151851" in capsys.readouterr().out
    assert train(corpus, tmp_path / "mine") == 0
    assert catalog.load(str(tmp_path / "mine.json")).encode_ids("hello") == catalog.load(
        str(tmp_path / "mine.tiktoken")).encode_ids("hello")
    (tmp_path / "ext.tiktoken").unlink()
    capsys.readouterr()
    assert main(["encode", "-t", str(tmp_path / "ext.json"), "x"]) != 0
    err = capsys.readouterr().err
    assert "ext.tiktoken" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
