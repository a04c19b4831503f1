"""`tokviz encode` on a file or stdin reads blocks and windows, and prints byte for byte what the
whole-text output (`print_encoding`, `encoding_json` over `encode`) prints."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from tests.core.test_stream import tricky_text
from tokviz.cli import encode as encode_cli
from tokviz.cli import encode_stream, main
from tokviz.core import stream
from tokviz.core.tokenizer import SpecialPolicy

VOCABS = ["cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1", "kyoto-ja-unigram-8k", "deepseek-v3",
          "ggml-vocab-llama-spm", "ggml-vocab-bert-bge"]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 7 bytes (characters cut across blocks) and windows of 1200 characters."""
    monkeypatch.setattr(encode_stream, "BLOCK_BYTES", 7)
    monkeypatch.setattr(stream, "WINDOW", 1200)
    monkeypatch.setattr(stream, "OVERLAP", 160)


def whole_output(tokenizers, text, special, *, as_json=False, color=False, visible_whitespace=True):
    policy = SpecialPolicy.parse(special)
    results = [(tok, tok.encode_with(text, policy)) for tok in tokenizers]
    out = io.StringIO()
    if as_json:
        json.dump([encode_cli.encoding_json(tok, tokens) for tok, tokens in results], out, ensure_ascii=False)
        out.write("\n")
    else:
        for tok, tokens in results:
            encode_cli.print_encoding(out, tok, text, tokens, color=color, visible_whitespace=visible_whitespace)
    return out.getvalue()


@pytest.mark.parametrize("name", VOCABS)
@pytest.mark.parametrize("options", [
    ("--color", "never"), ("--color", "always", "--special", "all"), ("--json",), ("--json", "--special", "all"),
    ("--color", "never", "--no-whitespace"),
])
def test_streamed_output_is_the_whole_text_output(vocab, small_blocks, tmp_path, capsys, monkeypatch, name, options):
    if vocab(name).scores_whole_text:  # a unigram text is one call's within a window (tokviz.core.stream)
        monkeypatch.setattr(stream, "WINDOW", 1 << 20)
    text = tricky_text(len(name) + len(options))
    path = tmp_path / "input.txt"
    path.write_bytes(text.encode())
    code = main(["encode", "-t", name, "--file", str(path), *options])
    out, err = capsys.readouterr()
    assert code == 0, err
    special = options[options.index("--special") + 1] if "--special" in options else "none"
    expected = whole_output([vocab(name)], text, special, as_json="--json" in options,
                            color="always" in options, visible_whitespace="--no-whitespace" not in options)
    assert out == expected


@pytest.mark.parametrize("as_json", [False, True])
def test_several_tokenizers_from_stdin(vocab, small_blocks, monkeypatch, capsys, as_json):
    text = tricky_text(5)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    names = ["qwen", "mistral-7b-v0.1"]
    code = main(["encode", "--color", "never", *(["--json"] if as_json else []), *sum((["-t", n] for n in names), [])])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == whole_output([vocab(n) for n in names], text, "none", as_json=as_json)


def test_bad_utf8_across_blocks_names_the_offset(small_blocks, tmp_path, capsys):
    path = tmp_path / "bad.txt"
    path.write_bytes("ab根根".encode() + b"\xff" + b"tail" * 10)
    code = main(["encode", "--file", str(path)])
    _, err = capsys.readouterr()
    assert code == 1 and "byte 0xff at offset 8" in err and err.count("\n") == 1


def test_truncated_last_character_names_its_offset(small_blocks, tmp_path, capsys):
    path = tmp_path / "cut.txt"
    path.write_bytes(b"abcdefghij" + "根".encode()[:2])
    code = main(["encode", "--file", str(path)])
    _, err = capsys.readouterr()
    assert code == 1 and "byte 0xe6 at offset 10" in err


def test_disallowed_special_late_in_a_long_input_prints_nothing(small_blocks, tmp_path, capsys):
    path = tmp_path / "late.txt"
    path.write_text("word " * 2000 + "<|endoftext|>")
    code = main(["encode", "-t", "qwen", "--special", "raise", "--file", str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and "disallowed special token '<|endoftext|>'" in err


def test_stdin_through_a_real_pipe():
    text = "hello world\r\n\r\n  한국어 123456\n"
    done = subprocess.run([sys.executable, "-m", "tokviz", "encode", "--color", "never", "-t", "cl100k_base"],
                          input=text.encode(), capture_output=True, check=True)
    assert done.stdout.decode().startswith("── cl100k_base") and "ids: " in done.stdout.decode()


def test_a_unigram_text_longer_than_a_window_is_said_on_stderr_once(small_blocks, tmp_path, capsys):
    path = tmp_path / "input.txt"
    path.write_bytes("".join(tricky_text(seed) for seed in range(3)).encode())
    assert main(["encode", "-t", "kyoto-ja-unigram-8k", "--file", str(path), "--color", "never"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("tokviz: warning: kyoto-ja-unigram-8k is a unigram model")
    assert "window by window" in err and out
