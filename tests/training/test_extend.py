"""Vocabulary extension on the real Qwen vocabulary: the seed's worked example, exactly."""

from __future__ import annotations

import base64

import pytest

from tokviz.cli import main
from tokviz.core import catalog
from tokviz.core.sidecar import extended_tokenizer
from tokviz.core.tokenizer import TokenizerError
from tokviz.training.extend import ExtensionError, learn_extension, read_word_list, save_extension

SEED_WORDS = "我是一只猫\t20\n你是一只猫\t10\n他是一只猫\t5\n一只\t200\n一只猫\t100\n夸张的 比喻手法\t20\n"
SEED_MERGES = [("一只猫", 151851), ("只猫", 151852), ("是一只猫", 151853), ("我是一只猫", 151854),
               ("你是一只猫", 151855), ("他是一只猫", 151856)]


@pytest.fixture
def words_file(tmp_path):
    path = tmp_path / "qwen_extra_vocab.txt"
    path.write_text(SEED_WORDS, encoding="utf-8")
    return path


def test_seed_example_learns_six_merges_in_qwens_order(vocab, words_file):
    qwen = vocab("qwen")
    extension = learn_extension(qwen, read_word_list(words_file))
    assert [(m.token.decode(), m.id) for m in extension.merges] == SEED_MERGES
    assert [m.frequency for m in extension.merges] == [100, 35, 35, 20, 10, 5]
    assert any("'一只' is already a token" in w for w in extension.warnings)
    assert any("['夸张的', ' 比喻手法']" in w for w in extension.warnings)
    extended = extended_tokenizer(qwen, extension.ranks)
    assert extended.encode_ids("我是一只猫") == [151854]
    assert extended.vocab_size == 151857
    assert extended.decode([151854, 151856]) == "我是一只猫他是一只猫"
    assert qwen.encode_ids("我是一只猫") != [151854]  # the base is untouched


def test_saved_extension_loads_alone_and_as_base_plus_extra(vocab, words_file, tmp_path):
    extension = learn_extension(vocab("qwen"), read_word_list(words_file))
    out = save_extension(
        extension, tmp_path / "qwen_extra.tiktoken", base_spec="qwen", base_sha256=catalog.find("qwen").sha256
    )
    lines = out.read_text().splitlines()
    assert lines[0] == f"{base64.b64encode('一只猫'.encode()).decode()} 151851" and len(lines) == 6
    for spec in (str(out), f"qwen+{out}"):
        tok = catalog.load(spec)
        assert tok.encode_ids("你是一只猫") == [151855]
        assert tok.special_tokens["<|endoftext|>"] == 151643


def test_nfc_normalisation_and_repeated_words_add_up(tmp_path):
    path = tmp_path / "w.tsv"
    path.write_text("cafe\u0301\t2\ncafé\t3\n", encoding="utf-8")
    assert read_word_list(path) == {"café": 5}


@pytest.mark.parametrize("content, message", [
    ("", "no words"),
    ("word only\n", "line 1 is not 'word<TAB>frequency'"),
    ("ok\t1\nbad\tmany\n", "line 2: frequency 'many' is not a whole number"),
    ("ok\t0\n", "line 1: frequency must be positive"),
])
def test_bad_word_lists_name_the_line(tmp_path, content, message):
    path = tmp_path / "w.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ExtensionError, match=message):
        read_word_list(path)


def test_start_id_inside_existing_ids_is_refused(vocab):
    with pytest.raises(ExtensionError, match="inside the base's existing ids.*151851"):
        learn_extension(vocab("qwen"), {"我是一只猫": 1}, start_id=151700)


def test_explicit_start_id_after_the_base(vocab):
    extension = learn_extension(vocab("qwen"), {"我是一只猫": 1}, start_id=160000)
    assert extension.merges[0].id == 160000


def test_extra_ranks_that_reuse_base_ids_are_refused(vocab, tmp_path):
    bad = tmp_path / "bad_extra.tiktoken"
    bad.write_text(f"{base64.b64encode('我是一只猫'.encode()).decode()} 151643\n")
    with pytest.raises(TokenizerError, match="reuse ids of the base"):
        catalog.load(f"qwen+{bad}")


def test_cli_prints_merges_and_warnings_and_writes_nothing_on_error(capsys, words_file, tmp_path):
    out = tmp_path / "extra.tiktoken"
    assert main(["extend", "qwen", str(words_file), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("merge: ") == 6 and printed.count("warning: ") == 2
    assert "id 151854 (frequency 20)" in printed

    bad = tmp_path / "bad.tsv"
    bad.write_text("我是一只猫\tx\n", encoding="utf-8")
    out2 = tmp_path / "extra2.tiktoken"
    assert main(["extend", "qwen", str(bad), "-o", str(out2)]) == 1
    err = capsys.readouterr().err
    assert "line 1" in err and not out2.exists()

    assert main(["extend", "qwen", str(words_file), "-o", str(out2), "--start-id", "10"]) == 1
    assert "inside the base's existing ids" in capsys.readouterr().err and not out2.exists()


def test_only_skipped_words_write_nothing(capsys, tmp_path):
    words = tmp_path / "w.tsv"
    words.write_text("一只\t5\n", encoding="utf-8")
    out = tmp_path / "none.tiktoken"
    assert main(["extend", "qwen", str(words), "-o", str(out)]) == 1
    assert "nothing written" in capsys.readouterr().err and not out.exists()


def test_a_base_without_bpe_ranks_is_refused_first(vocab, capsys, words_file, tmp_path):
    with pytest.raises(ExtensionError, match="mistral-7b-v0.1: extension needs a byte-level BPE"):
        learn_extension(vocab("mistral-7b-v0.1"), {"我是一只猫": 1})
    out = tmp_path / "x.tiktoken"
    assert main(["extend", "mistral-7b-v0.1", str(tmp_path / "no-such-words.txt"), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "extension needs a byte-level BPE (.tiktoken) base, not sentencepiece" in err and not out.exists()


def test_a_failed_extension_save_leaves_the_old_pair(vocab, words_file, tmp_path):
    """The sidecar's place is taken by a folder, so its rename fails after the ranks were
    renamed: the old extra ranks come back, byte-identical, and no temporary is left."""
    from tokviz.core.files import SaveError

    extension = learn_extension(vocab("qwen"), read_word_list(words_file))
    out = tmp_path / "x.tiktoken"
    out.write_bytes(b"old")
    (tmp_path / "x.json").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(SaveError, match=r"cannot save .*x\.json: Is a directory; nothing was changed"):
        save_extension(extension, out, base_spec="qwen", base_sha256=catalog.find("qwen").sha256)
    assert out.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == before
