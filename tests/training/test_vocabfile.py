"""Saved vocabularies: tiktoken's format, the sidecar, atomic writes, HF tokenizer.json, round trips."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import tiktoken.load

from tests.training.texts import HELD_OUT, TRAINING
from tokviz.core.sidecar import load_trained, read_sidecar
from tokviz.core.tokenizer import TokenizerError
from tokviz.training.trainer import train_texts
from tokviz.training.vocabfile import (
    hf_tokenizer_json,
    output_paths,
    save,
    trained_tokenizer,
)

SPECIALS = ["<|endoftext|>", "<|pad|>"]


@pytest.fixture(scope="module", params=["cl100k", "none", "o200k"])
def result(request):
    return train_texts(TRAINING * 2, vocab_size=700, pattern=request.param, special_tokens=SPECIALS)


def test_save_writes_tiktoken_and_sidecar(result, tmp_path: Path):
    written = save(result, tmp_path / "mine", hf_json=True)
    ranks_path, sidecar_path, hf_path = output_paths(tmp_path / "mine")
    assert written == [ranks_path, hf_path, sidecar_path]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json", "mine.tiktoken", "mine.tokenizer.json"]
    ranks = tiktoken.load.load_tiktoken_bpe(str(ranks_path))
    assert ranks == result.ranks()
    assert [ranks[bytes([i])] for i in range(256)] == list(range(256))
    meta = json.loads(sidecar_path.read_text())
    assert meta["format"] == "tokviz-bpe" and meta["version"] == 1
    assert meta["pattern"] == result.pattern and meta["pattern_preset"] == result.pattern_preset
    assert meta["special_tokens"] == {s: 256 + len(result.merges) + i for i, s in enumerate(SPECIALS)}
    assert meta["vocab_size"] == 256 + len(result.merges) + 2 and meta["requested_vocab_size"] == 700
    assert meta["merges"] == [list(m) for m in result.merges]
    assert set(meta["corpus"]) >= {"files_read", "files_skipped", "bytes", "unique_chunks"}
    assert meta["training"]["min_frequency"] == 2


def test_output_name_with_suffix(tmp_path: Path):
    assert output_paths(tmp_path / "x.tiktoken")[1] == tmp_path / "x.json"


def test_load_trained_encodes_like_in_memory(result, tmp_path: Path):
    save(result, tmp_path / "v")
    loaded = load_trained(tmp_path / "v.tiktoken")
    assert load_trained(tmp_path / "v.json").vocab_size == loaded.vocab_size == result.vocab_size
    assert loaded.family == "trained" and loaded.special_tokens == result.special_tokens
    memory = trained_tokenizer(result)
    for text in HELD_OUT.values():
        ids = loaded.encoding.encode_ordinary(text)
        assert ids == memory.encoding.encode_ordinary(text)
        assert loaded.encoding.decode(ids) == text  # exact round trip on held-out text


def test_special_tokens_follow_merges(result):
    enc = trained_tokenizer(result).encoding
    ids = enc.encode("a<|endoftext|>b", allowed_special="all")
    assert result.special_tokens["<|endoftext|>"] in ids


def test_hf_tokenizer_json_gives_same_ids(result):
    from tokenizers import Tokenizer

    hf = Tokenizer.from_str(hf_tokenizer_json(result))
    enc = trained_tokenizer(result).encoding
    assert hf.get_vocab_size() == result.vocab_size
    for name, text in HELD_OUT.items():
        text = text.replace("<|endoftext|>", "")
        ids = enc.encode_ordinary(text)
        assert hf.encode(text, add_special_tokens=False).ids == ids, name
        assert hf.decode(ids) == text, name
    assert hf.token_to_id("<|pad|>") == result.special_tokens["<|pad|>"]


def test_atomic_write_leaves_no_temp_files(result, tmp_path: Path):
    save(result, tmp_path / "a")
    save(result, tmp_path / "a")  # overwrite in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.tiktoken"]
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o666 & ~umask


def test_save_into_missing_folder_is_an_error(result, tmp_path: Path):
    with pytest.raises(TokenizerError, match="does not exist"):
        save(result, tmp_path / "nope" / "x")
    assert not (tmp_path / "nope").exists()


def test_bad_sidecars(tmp_path: Path):
    (tmp_path / "x.json").write_text('{"format": "other"}')
    with pytest.raises(TokenizerError, match="not a tokviz-bpe sidecar"):
        read_sidecar(tmp_path / "x.json")
    (tmp_path / "y.json").write_text('{"format": "tokviz-bpe", "version": 99}')
    with pytest.raises(TokenizerError, match="version 99"):
        read_sidecar(tmp_path / "y.json")
    with pytest.raises(TokenizerError, match="cannot read"):
        load_trained(tmp_path / "missing.tiktoken")


SAVE_UNDER_LIMIT = r"""
import pickle, resource, signal, sys
from tokviz.training.vocabfile import save

result = pickle.loads(sys.stdin.buffer.read())
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as a full disk would
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
try:
    save(result, sys.argv[1])
except OSError as e:
    print(e)
"""


def test_a_failed_second_save_leaves_the_first_pair_byte_identical(tmp_path: Path):
    """The issue's case: a save over a first one fails on the sidecar (the kernel refuses the
    write): the old ranks must not be replaced, so the pair never loads as a hybrid."""
    import pickle
    import subprocess
    import sys

    first = train_texts(TRAINING, vocab_size=300, pattern="cl100k", special_tokens=["<|endoftext|>"])
    second = train_texts(TRAINING * 2, vocab_size=600, pattern="none", special_tokens=["<|endoftext|>"])
    (tmp_path / "sizes").mkdir()
    ranks, side = (path.stat().st_size for path in save(second, tmp_path / "sizes" / "v"))
    assert side > ranks  # so that a limit between them fails the sidecar's write alone
    (tmp_path / "v").mkdir()
    tmp_path = tmp_path / "v"
    save(first, tmp_path / "v")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    limit = (ranks + side) // 2  # room for the ranks, not the sidecar
    out = subprocess.run([sys.executable, "-c", SAVE_UNDER_LIMIT, str(tmp_path / "v"), str(limit)],
                         input=pickle.dumps(second), capture_output=True)
    assert out.stdout.decode().strip() == f"cannot save {tmp_path / 'v.json'}: File too large; nothing was changed"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert load_trained(tmp_path / "v.tiktoken").special_tokens == {
        "<|endoftext|>": first.special_tokens["<|endoftext|>"]
    }


def test_a_pair_from_two_saves_is_refused(tmp_path: Path):
    """Ranks from one save beside the sidecar of another (a copy, or a kill between the renames)."""
    save(train_texts(TRAINING, vocab_size=300, pattern="cl100k"), tmp_path / "a")
    save(train_texts(TRAINING, vocab_size=310, pattern="cl100k"), tmp_path / "b")
    os.replace(tmp_path / "b.tiktoken", tmp_path / "a.tiktoken")
    with pytest.raises(TokenizerError, match=r"a\.tiktoken is not the rank file a\.json was saved with"):
        load_trained(tmp_path / "a.tiktoken")


KILL_BETWEEN_RENAMES = r"""
import os, signal, sys
from pathlib import Path
from tokviz.core.files import AtomicGroup

class KillBeforeSecondRename(AtomicGroup):
    renames = 0
    def step(self, what, path):
        if what == "replace":
            KillBeforeSecondRename.renames += 1
            if KillBeforeSecondRename.renames == 2:
                os.kill(os.getpid(), signal.SIGKILL)

old, new = Path(sys.argv[1]), Path(sys.argv[2])
files = [(old / "v.tiktoken", (new / "v.tiktoken").read_bytes()), (old / "v.json", (new / "v.json").read_bytes())]
KillBeforeSecondRename(files).commit()
"""


def test_a_save_killed_between_its_renames_is_refused_and_recoverable(tmp_path: Path):
    """kill -9 in the one window the renames leave: the pair does not load as a hybrid, and the
    message names the backup that restores the old pair."""
    import subprocess
    import sys

    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    save(train_texts(TRAINING, vocab_size=300, pattern="cl100k"), tmp_path / "old" / "v")
    save(train_texts(TRAINING, vocab_size=320, pattern="none"), tmp_path / "new" / "v")
    before = {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir()}
    proc = subprocess.run([sys.executable, "-c", KILL_BETWEEN_RENAMES, str(tmp_path / "old"), str(tmp_path / "new")])
    assert proc.returncode == -9
    with pytest.raises(TokenizerError, match=r"the pair was not saved together; the old rank file is kept: mv ") as e:
        load_trained(tmp_path / "old" / "v.tiktoken")
    backup = Path(str(e.value).split("mv ")[1].split(" ")[0])
    os.replace(backup, tmp_path / "old" / "v.tiktoken")
    after = {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir() if not p.name.startswith(".")}
    assert after == before
    assert load_trained(tmp_path / "old" / "v.tiktoken").vocab_size == 300
