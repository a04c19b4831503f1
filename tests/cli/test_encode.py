"""`tokviz encode` / `tokviz vocabs` as a script user sees them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tokviz.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_encode_json_shape_and_known_answer(capsys):
    code, out, _ = run(capsys, "encode", "--json", "-t", "cl100k_base", "hello world")
    assert code == 0
    [result] = json.loads(out)
    assert result["tokenizer"] == "cl100k_base" and result["count"] == 2
    assert [t["id"] for t in result["tokens"]] == [15339, 1917]
    assert result["tokens"][1] == {
        "id": 1917, "bytes": "20776f726c64", "start": 5, "end": 11, "kind": "normal", "text": " world",
        "piece": "Ġworld",
    }


def test_encode_several_tokenizers_and_fragments(capsys):
    code, out, _ = run(capsys, "encode", "--json", "-t", "qwen", "-t", "mistral-7b-v0.1", " 根")
    assert code == 0
    qwen, mistral = json.loads(out)
    assert [t["id"] for t in qwen["tokens"]] == [51461, 117]
    assert [t["kind"] for t in qwen["tokens"]] == ["fragment", "fragment"]
    assert qwen["tokens"][0]["bytes"] == "20e6a0" and qwen["tokens"][0]["text"] == " \ufffd"
    assert mistral["family"] == "sentencepiece"


@pytest.mark.parametrize("special, expected", [
    ("none", [1350, 9639, 91, 8691, 723, 427, 91, 82598]),
    ("all", [1350, 445, 151643, 899]),
    ("<|endoftext|>", [1350, 445, 151643, 899]),
    ("<|im_end|>", [1350, 9639, 91, 8691, 723, 427, 91, 82598]),
])
def test_special_policy(capsys, special, expected):
    code, out, _ = run(capsys, "encode", "--json", "-t", "qwen", "--special", special, 'print("<|endoftext|>")')
    assert code == 0 and [t["id"] for t in json.loads(out)[0]["tokens"]] == expected


def test_disallowed_special_is_one_clear_line(capsys):
    code, out, err = run(capsys, "encode", "-t", "qwen", "--special", "raise", "<|endoftext|>")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "disallowed special token '<|endoftext|>'" in err


def test_terminal_output_shows_boundaries_ids_and_counts(capsys):
    code, out, _ = run(capsys, "encode", "--color", "never", "-t", "qwen", "a b 根")
    assert code == 0
    assert "[a][·b][·�⟨20 e6 a0⟩][�⟨b9⟩]" in out
    assert "ids: 64 293 51461 117" in out and "4 tokens" in out


@pytest.mark.parametrize("argv, message", [
    (["encode", "-t", "nope", "x"], "unknown tokenizer 'nope'"),
    (["encode", "-t", "/no/such/file.tiktoken", "x"], "no such file"),
    (["encode", "--file", "/no/such/input.txt"], "/no/such/input.txt"),
    (["vocabs", "fetch", "nope"], "unknown vocabulary 'nope'"),
    (["encode", "-t", "cl100k", "x"], "unknown tokenizer 'cl100k': not a catalog name nor a file; "
                                      "did you mean cl100k_base?"),
    (["encode", "-t", "gemma", "x"], "did you mean ggml-vocab-gemma-4?"),
    (["vocabs", "fetch", "o200k"], "unknown vocabulary 'o200k': not in the catalog; did you mean o200k_base?"),
])
def test_bad_input_is_one_line_and_nonzero(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code != 0 and message in err and "Traceback" not in err and err.count("\n") == 1


def test_corrupt_vocab_file_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\n!!! 1\n")
    code, _, err = run(capsys, "encode", "-t", str(bad), "x")
    assert code == 1 and str(bad) in err and "line 2" in err


def test_undecodable_stdin_via_the_real_script():
    proc = subprocess.run(
        [sys.executable, "-m", "tokviz", "encode", "-t", "cl100k_base", "-"],
        input=b"ok \xff\xfe", capture_output=True,
    )
    assert proc.returncode == 1
    assert b"stdin is not UTF-8 text (byte 0xff at offset 3)" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_stdin_text(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"hello world")))
    code, out, _ = run(capsys, "encode", "--json", "-")
    assert code == 0 and json.loads(out)[0]["count"] == 2


def test_vocabs_lists_availability(capsys):
    code, out, _ = run(capsys, "vocabs")
    assert code == 0
    assert "cl100k_base" in out and "deepseek-v3" in out and "vocabulary folder" in out


def test_encode_a_gguf_file(capsys, tmp_path, vocab_path):
    model = tmp_path / "model.gguf"
    model.write_bytes(vocab_path("ggml-vocab-llama-bpe").read_bytes())
    code, out, _ = run(capsys, "encode", "--json", "-t", str(model), "Hello world")
    assert code == 0
    [result] = json.loads(out)
    assert [t["id"] for t in result["tokens"]] == [9906, 1917]  # llama.cpp's (and Llama 3's) ids
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00")
    code, _, err = run(capsys, "encode", "-t", str(broken), "hi")
    assert code != 0 and "broken.gguf: truncated GGUF header" in err and "Traceback" not in err


def test_special_set_naming_a_token_no_vocabulary_has_is_an_error(capsys):
    code, out, err = run(capsys, "encode", "-t", "qwen", "--special", "<|endoftext|>,<|bogus|>", "a<|endoftext|>")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "'<|bogus|>'" in err and "qwen" in err


def test_special_set_missing_from_one_vocabulary_warns_and_encodes(capsys):
    code, out, err = run(capsys, "encode", "--json", "-t", "qwen", "-t", "cl100k_base",
                         "--special", "<|im_start|>", "a<|im_start|>")
    assert code == 0
    qwen, cl100k = json.loads(out)
    assert [t["kind"] for t in qwen["tokens"]][-1] == "special"
    assert "special" not in [t["kind"] for t in cl100k["tokens"]]
    assert err == "tokviz: warning: '<|im_start|>' is not a special token of cl100k_base: plain text there\n"


def test_a_closed_pipe_ends_quietly():
    """`tokviz encode ... | head`: the reader leaves after one read; no traceback, no error line."""
    text = "hello world " * 100_000  # far more output than a pipe buffer holds
    proc = subprocess.Popen([sys.executable, "-m", "tokviz", "encode", "-t", "cl100k_base", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(text.encode())
    proc.stdin.close()
    assert proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait() == 141
    assert err == b""


def test_html_into_a_folder_that_does_not_exist_is_refused_and_creates_nothing(capsys, tmp_path):
    out = tmp_path / "no" / "such" / "page.html"
    code, _, err = run(capsys, "encode", "-t", "cl100k_base", "--html", str(out), "hi")
    assert code == 1 and err.count("\n") == 1
    assert "no such folder" in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()


def _rank_file(path, last_rank: int):
    """A rank file of the 256 bytes and one merge, `ab`, at rank `last_rank`."""
    import base64

    lines = [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]
    lines.append(f"{base64.b64encode(b'ab').decode()} {last_rank}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="an address-space limit (RLIMIT_AS)")
def test_a_rank_near_two_to_the_31_costs_memory_by_tokens_not_by_id(tmp_path):
    """One extra rank at 2**31 - 1: encode and stats once sized arrays by the largest id (8 GiB)
    and were killed or printed a traceback. Under a 3 GiB address-space limit both answer."""
    import resource

    ranks = _rank_file(tmp_path / "far.tiktoken", 2**31 - 1)
    text = tmp_path / "in.txt"
    text.write_text("abab hello ab\n")

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    for argv in (["encode", "-t", str(ranks), "abab hello"], ["stats", str(text), "-t", str(ranks)]):
        done = subprocess.run([sys.executable, "-m", "tokviz", *argv], capture_output=True, text=True,
                              preexec_fn=limited, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    encoded = subprocess.run([sys.executable, "-m", "tokviz", "encode", "-t", str(ranks), "abab"],
                             capture_output=True, text=True, preexec_fn=limited, timeout=300)
    assert "ids: 2147483647 2147483647" in encoded.stdout


def test_a_rank_past_what_tiktoken_holds_is_one_line_naming_the_file(capsys, tmp_path):
    ranks = _rank_file(tmp_path / "past.tiktoken", 2**32)
    code, out, err = run(capsys, "encode", "-t", str(ranks), "abab")
    assert code != 0 and "past.tiktoken" in err and "rank 4294967296" in err and len(err.strip().splitlines()) == 1


def test_text_a_model_drops_is_said_to_be_in_no_token(capsys):
    """A normalizing SentencePiece model drops the space before a special token: the token spans
    `<s>` alone (characters 1-4, as in the library) and the output says where the gap is."""
    code, out, err = run(capsys, "encode", "--special", "all", "-t", "botchan-unigram-1k", " <s> hello  </s>  ")
    assert code == 0
    assert "ids: 1 " in out and "in no token (the model drops them): chars 0-1, 16-18" in out
    code, out, _ = run(capsys, "encode", "--json", "--special", "all", "-t", "botchan-unigram-1k", " <s>")
    [record] = json.loads(out)
    assert [(t["start"], t["end"], t["piece"]) for t in record["tokens"]] == [(1, 4, "<s>")]
    code, out, _ = run(capsys, "encode", "-t", "cl100k_base", "no gaps here")
    assert "in no token" not in out


def test_a_broken_pipe_that_is_not_the_output_is_an_error():
    """A pipe to one of tokviz's own processes breaking (a worker killed) is an error line, not the
    quiet exit of a reader that left: the output's reader is still there."""
    code = ("import argparse, sys\n"
            "from tokviz.cli import run_command\n"
            "def run(args):\n"
            "    raise BrokenPipeError(32, 'Broken pipe')\n"
            "sys.exit(run_command(argparse.Namespace(run=run)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr == "tokviz: error: [Errno 32] Broken pipe\n"


def test_utf16_and_utf32_input_say_what_they_are(capsys, tmp_path):
    """A UTF-16 file (Notepad's "Unicode") was "binary (NUL byte at offset 3)" for stats and
    train, and "not UTF-8 ... iconv -f LATIN1" for encode: advice that garbles it."""
    for encoding, bom in (("UTF-16", "utf-16"), ("UTF-32", "utf-32")):
        path = tmp_path / f"{bom}.txt"
        path.write_bytes("hello world".encode(bom))
        reason = (f"{encoding} text, not UTF-8 (it starts with a {encoding} byte-order mark): "
                  f"save it as UTF-8 first (e.g. iconv -f {encoding} -t UTF-8)")
        assert main(["encode", "-t", "cl100k_base", "-f", str(path)]) == 1
        err = capsys.readouterr().err
        assert err == f"tokviz: error: {path} is not UTF-8 text (byte 0xff at offset 0): it is {reason}\n"
        assert main(["stats", "-t", "cl100k_base", str(path)]) == 1
        assert f"tokviz: skipped {path}: {reason}" in capsys.readouterr().err
        assert main(["train", str(path), "--vocab-size", "300", "-o", str(tmp_path / "v")]) == 1
        assert f"all 1 files skipped (1 {encoding} text, not UTF-8)" in capsys.readouterr().err
