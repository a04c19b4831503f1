"""A large file counted in blocks (`large_text`) gives the whole text's statistics: small blocks
and windows are forced, so that every cut meets Korean, emoji, marks, CRLF runs and specials.
Every figure is identical, floats included."""

from __future__ import annotations

import random

import pytest

from tokviz.analysis import large_text, stats
from tokviz.analysis.large_text import LargeText, _last_cut
from tokviz.analysis.stats import StatsOptions, analyze_paths
from tokviz.core import stream
from tokviz.core.tokenizer import SpecialPolicy

_ATOMS = ["word ", "e\u0301", "\u200d", "👍🏽", "1\ufe0f\u20e3", "🇰🇷", "\n", "\r\n\r\n", "\n\u0301", "  \n",
          "한국어 ", "根", "123456", "<|endoftext|>", "<s>", "\t", "ｈｉ", "\n\n\n", "Hello, world. "]


def mixed_text(seed: int, n: int = 4000) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(_ATOMS) for _ in range(n)) + " " * 300 + "\n" + "9" * 400 + "x"


def analysis_dict(paths, tokenizers, options):
    d = analyze_paths(paths, tokenizers, options=options).to_dict()
    return d


@pytest.mark.parametrize("names", [("cl100k_base", "qwen"), ("mistral-7b-v0.1", "botchan-bpe-1k"),
                                   ("deepseek-v3", "ggml-vocab-llama-spm"), ("kyoto-ja-unigram-8k",)])
@pytest.mark.parametrize("special", ["none", "all"])
def test_blocks_give_the_whole_texts_statistics(vocab, tmp_path, monkeypatch, names, special):
    tokenizers = [vocab(n) for n in names]
    for i in range(2):
        (tmp_path / f"f{i}.txt").write_bytes(mixed_text(i + len(special)).encode())
    options = StatsOptions(limit=3000, policy=SpecialPolicy.parse(special))
    whole = analysis_dict([tmp_path], tokenizers, options)
    monkeypatch.setattr(stats, "LARGE_FILE_BYTES", 0)
    monkeypatch.setattr(large_text, "BLOCK_BYTES", 101)
    if not any(t.scores_whole_text for t in tokenizers):  # a unigram text is exact within a window
        monkeypatch.setattr(stream, "WINDOW", 1500)
        monkeypatch.setattr(stream, "OVERLAP", 200)
    blocked = analysis_dict([tmp_path], tokenizers, options)
    assert blocked == whole  # tokens per script too: summed as whole numbers


def test_blocks_are_cut_after_a_newline_before_ascii(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(mixed_text(7).encode())
    blocks = list(LargeText(path, block_bytes=64).blocks())
    assert "".join(blocks) == mixed_text(7) and len(blocks) > 10
    assert all(b.endswith("\n") and nxt[0].isascii() for b, nxt in zip(blocks, blocks[1:]))
    assert _last_cut("a\n\u0301b\nc") == 5 and _last_cut("a\n\u0301") == 0


@pytest.mark.parametrize("data, reason", [
    (b"ab\xffcd" + b"x" * 300 + b"\0", "binary (NUL byte at offset 305)"),
    (b"x" * 200 + "根".encode() + b"\xe6\xa0", "not UTF-8 (byte 0xe6 at offset 203)"),
    (b"x" * 99 + b"\xe6\xa0\x41" + b"y" * 50, "not UTF-8 (byte 0xe6 at offset 99)"),
])
def test_skipped_reasons_are_the_whole_reads(vocab, tmp_path, monkeypatch, data, reason):
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    assert stats.read_text_file(path).reason == reason
    monkeypatch.setattr(large_text, "BLOCK_BYTES", 100)
    assert LargeText(path).problem().reason == reason


def test_a_file_over_a_megabyte_is_counted_in_blocks(tmp_path):
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    small.write_bytes(b"a" * stats.LARGE_FILE_BYTES)
    large.write_bytes(b"a" * (stats.LARGE_FILE_BYTES + 1))
    assert stats.LARGE_FILE_BYTES <= 1 << 20
    assert isinstance(stats._read_file(small), str)
    assert isinstance(stats._read_file(large), LargeText)
