"""A hand-edited user catalog.json: wrong shapes, paths for names and unpinned packages are one line."""

from __future__ import annotations

import json

import pytest

from tokviz.cli import main
from tokviz.core import catalog
from tokviz.core.catalog_check import check_file_name, check_package
from tokviz.core.tokenizer import TokenizerError

SHA = "a" * 64
GOOD = {"name": "mine", "format": "tiktoken", "file": "mine.tiktoken", "sha256": SHA}


@pytest.fixture
def real_vocabs():
    return catalog.vocab_dir()


@pytest.fixture
def user_catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()

    def write(data) -> None:
        (tmp_path / "data" / "catalog.json").write_text(json.dumps(data))

    return write


@pytest.mark.parametrize("data, message", [
    ({"entries": {"name": "x"}}, 'not a tokviz catalog: it must be an object with an "entries" list, not an object'),
    ([1], 'it must be an object with an "entries" list, not a list'),
    ({"entries": [7]}, "entry 0 must be an object, not 7"),
    ({"entries": [{**GOOD, "sha256": 7}]}, """entry 0 ('mine'): "sha256" must be 64 hex digits, not 7"""),
    ({"entries": [{**GOOD, "name": 7}]}, 'entry 0: "name" must be a non-empty string, not 7'),
    ({"entries": [{**GOOD, "size": "8 MB"}]},
     """"size" must be the file's size in bytes (a positive integer), not '8 MB'"""),
    ({"entries": [{**GOOD, "size": 0}]}, """"size" must be the file's size in bytes (a positive integer), not 0"""),
    ({"entries": [{**GOOD, "size": True}]}, '"size" must be the file\'s size in bytes'),
    ({"entries": [{**GOOD, "extras": [{"file": "x.inp", "member": "m", "sha256": SHA, "size": -1}]}]},
     '"extras" must be a list of {"file", "member", "sha256"} (and "size", a positive integer)'),
    ({"entries": [{k: v for k, v in GOOD.items() if k != "file"}]}, '"file" is missing'),
    ({"entries": [{**GOOD, "format": "zip"}]}, '"format" must be one of tiktoken, sentencepiece'),
    ({"entries": [{**GOOD, "special_tokens": ["<|x|>"]}]}, '"special_tokens" must be an object of token -> id'),
    ({"entries": [{**GOOD, "aliases": "m"}]}, '"aliases" must be a list of strings'),
    ({"entries": [{**GOOD, "special_token_ranges": [{"template": "<{n}>"}]}]}, '"special_token_ranges" must be'),
    ({"entries": [{**GOOD, "file": "../../x.tiktoken"}]},
     """"file" must be a file name inside the vocabulary folder (no '..', not absolute), not '../../x.tiktoken'"""),
    ({"entries": [{**GOOD, "file": "/etc/passwd"}]}, '"file" must be a file name inside'),
    ({"entries": [{**GOOD, "source": {"package": "../../../x==1.0", "member": "x"}}]},
     """"source.package" '../../../x==1.0' is not a requirement"""),
    ({"entries": [{**GOOD, "source": {"package": "dashscope", "member": "x"}}]},
     "'dashscope' is not a pinned requirement (name==version)"),
    ({"entries": [{**GOOD, "extras": [{"file": "../y", "member": "y", "sha256": SHA}]}]},
     '"extras.file" must be a file name inside'),
])
def test_bad_user_catalogs_are_one_line_naming_file_entry_field(user_catalog, data, message):
    user_catalog(data)
    with pytest.raises(TokenizerError) as e:
        catalog.user_entries()
    assert message in str(e.value) and "catalog.json" in str(e.value) and "\n" not in str(e.value)


def test_a_broken_user_catalog_does_not_break_builtin_vocabularies(real_vocabs, user_catalog, capsys, tmp_path):
    user_catalog({"entries": [{**GOOD, "sha256": 7}]})
    (tmp_path / "data" / "vocabs").symlink_to(real_vocabs)  # only read here
    assert main(["encode", "-t", "cl100k_base", "hello world"]) == 0
    out, err = capsys.readouterr()
    assert "15339" in out and "1917" in out
    assert err.splitlines() == [f"tokviz: warning: {catalog.user_catalog_path()}: entry 0 ('mine'): "
                                f'"sha256" must be 64 hex digits, not 7; its entries are skipped']


def test_fetch_never_writes_outside_the_vocabulary_folder(user_catalog, tmp_path, capsys):
    user_catalog({"entries": [{**GOOD, "name": "evil", "file": "../../x.tiktoken",
                               "source": {"package": "../../../x==1.0", "member": "x"}}]})
    assert main(["vocabs", "fetch", "evil"]) == 1
    err = capsys.readouterr().err
    assert "unknown vocabulary 'evil'" in err and '"file" must be a file name inside' in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


@pytest.mark.parametrize("name", ["a.tiktoken", "llama.cpp/x.gguf"])
def test_builtin_names_may_have_subfolders(name):
    assert check_file_name(name, subfolders=True) == name


@pytest.mark.parametrize("name", ["..", "a/../../b", "/abs", "~/x", "C:\\x", "a\\b", ""])
def test_paths_are_not_names(name):
    with pytest.raises(ValueError, match="is a path, not a file name"):
        check_file_name(name, subfolders=True)


@pytest.mark.parametrize("spec", ["x>=1.0", "x==1.*", "x[extra]==1.0", "x==1.0; python_version<'3'", "x @ https://e/x.whl"])
def test_packages_must_be_pinned(spec):
    with pytest.raises(ValueError, match="not a pinned requirement|not a requirement"):
        check_package(spec)


def _pinned_by_packaging(spec: str) -> bool:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(spec)
    except InvalidRequirement:
        return False
    pins = [s for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    return not (req.url or req.marker or req.extras or len(pins) != 1 or len(req.specifier) != 1)


@pytest.mark.parametrize("spec", [
    "llama-cpp-python==0.3.36", "openai-whisper==20250625", "a==1", "A.b_c-D==10.0.0.1", "x==1.0rc1",
    "x==1.", "-x==1.0", "x-==1.0", "x==1.0==2.0", "x ==1.0", "x==1.0 ", "x==.1", "x==1..2", "é==1.0", "x===1.0",
])
def test_a_package_is_pinned_exactly_when_packaging_says_so(spec):
    """Plain `name==release` pins are told without importing `packaging`; every verdict is its."""
    try:
        check_package(spec)
        ours = True
    except ValueError:
        ours = False
    assert ours == _pinned_by_packaging(spec)


def test_the_builtin_catalog_is_checked_without_importing_packaging():
    import subprocess
    import sys

    code = "import sys; from tokviz.core import catalog; catalog.builtin_entries(); print('packaging' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "False"
