"""The compiled merge loop (`tokviz/training/_merge.c`): built where a compiler is, checked at its
edges, and a package built without a compiler still trains (with the Python loop), identically.

That both loops learn the same merges is `test_bpe`'s (every property test runs both)."""

from __future__ import annotations

import json
import os
from array import array
from pathlib import Path

import pytest

from tests.wheel import build_wheel, run_unpacked
from tokviz.training import bpe
from tokviz.training.trainer import train_texts


def test_the_compiled_loop_is_built():
    # setup.sh installs a C compiler, so the loop users run is the compiled one; built without
    # one, the package still works (the Python loop) and only this test says so
    assert bpe._merge is not None, "tokviz/training/_merge.c was not built: pip install -e . with a C compiler"
    # in a checkout, an edit of the C file is not tested until it is built again
    source = Path(bpe.__file__).with_name("_merge.c")
    built = Path(bpe._merge.__file__)
    if source.is_file() and built.parent == source.parent:
        assert built.stat().st_mtime >= source.stat().st_mtime, f"{built.name} is older than _merge.c: pip install -e ."


def test_the_compiled_loop_checks_what_it_is_given():
    from tokviz.training import _merge

    ab = 97 << 21 | 98
    tok, nxt, prv, fr = array("i", [97, 98, -1]), array("i", [1, 2, 2]), array("i", [2, 0, 2]), array("i", [2, 2, 0])
    with pytest.raises(ValueError, match="outside the arrays"):
        _merge.Loop(tok, nxt, prv, fr, {ab: 2}, {ab: array("i", [3])}, 2)
    with pytest.raises(ValueError, match="nxt"):
        _merge.Loop(tok, array("q", [1, 2, 2]), prv, fr, {}, {}, 2)
    with pytest.raises(KeyError):
        _merge.Loop(tok, nxt, prv, fr, {ab: 2}, {}, 2)
    with pytest.raises(TypeError, match="keyword"):
        _merge.Loop(tok, nxt, prv, fr, {}, {}, min_frequency=2)
    loop = _merge.Loop(tok, nxt, prv, fr, {ab: 2}, {ab: array("i", [0])}, 2)
    assert loop.run(5, 256) == [(97, 98, 2, 2)]
    assert list(tok) == [256, -1, -1] and list(nxt)[0] == 2
    assert loop.run(5, 257) == []


@pytest.mark.slow
def test_without_a_c_compiler_the_package_builds_and_trains_the_same(tmp_path: Path):
    # `CC=false`: every compile fails, as on a machine without gcc; the optional extension is
    # left out and the build goes on
    site, build = build_wheel(tmp_path, env={**os.environ, "CC": "false"})
    built = [p for p in site.glob("tokviz/training/_merge.*") if p.suffix in (".so", ".pyd")]
    assert not built, "the extension was built with CC=false"
    assert 'extension "tokviz.training._merge" failed' in build.stdout + build.stderr  # and says so
    texts = ["aaabdaaabac", "the cat sat on the mat; the hat", "한국어 텍스트 한국어 텍스트"] * 3
    code = (
        "import json, sys\n"
        "from tokviz.training import bpe\n"
        "from tokviz.training.trainer import train_texts\n"
        "assert bpe._merge is None\n"
        "from tokviz.cli import _merge_loop\n"
        "assert _merge_loop() == 'Python', _merge_loop()\n"
        f"r = train_texts({texts!r}, vocab_size=300)\n"
        "print(json.dumps([r.merges, r.replaced]))"
    )
    done = run_unpacked(site, code)
    assert done.returncode == 0, done.stderr
    here = train_texts(texts, vocab_size=300)  # the compiled loop
    assert len(here.merges) > 10
    assert json.loads(done.stdout) == [[list(m) for m in here.merges], here.replaced]


def test_the_version_says_which_merge_loop_runs(capsys):
    from tokviz.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip().endswith("(compiled merge loop)")
