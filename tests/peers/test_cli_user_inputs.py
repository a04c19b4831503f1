"""What people paste into a token tool, through the real `tokviz` command: CRLF, ZWJ emoji,
combining marks, right-to-left text, NUL and other controls, lone surrogates, empty and
whitespace-only input, a 1 MB line; the text as an argument, on stdin and in a file giving the same
ids as the library itself; the JSON shape; exit statuses; every command's --help."""

from __future__ import annotations

import functools
import io
import json
import os
import sys
from collections.abc import Callable

import pytest
import sentencepiece as spm
import tiktoken
import tiktoken.load
import tokenizers

from tests.peers.cli import encode_json, ids_of, run, script
from tokviz.core import catalog

SPECS = ["cl100k_base", "o200k_base", "qwen", "mistral-7b-v0.1", "deepseek-v3", "ggml-vocab-llama-spm"]

PASTES = {
    "crlf": "first line\r\nsecond line\r\n\r\nthird\r\n",
    "zwj_family": "👨‍👩‍👧‍👦 and 🏳️‍🌈 and 👍🏽",
    "combining": "e\u0301 n\u0303 Zalgo: a\u0308\u0308\u0308\u0301 ḛ\u0330",
    "rtl": "שלום עולם, مرحبا بالعالم \u200fهذا\u200e mixed",
    "controls": "bell\x07 esc\x1b[31m form\x0c feed\x0b vt del\x7f",
    "invisible": "soft\u00adhyphen nb\u00a0sp zw\u200bsp bom\ufeff vs16\ufe0f",
    "only_spaces": "     ",
    "only_newlines": "\n\n\n",
    "mixed_ws": " \t \n \r\n\t\t",
    "code": "def f(x):\n\tif x:\n\t\treturn {'a': [1, 2]}\n",
    "cjk": "我是昨天买的苹果，大한민국、日本語のテキスト",
}


@functools.cache
def library(spec: str) -> Callable[[str], list[int]]:
    """The real library's encode for a catalog vocabulary (no special-token parsing, nothing added)."""
    entry = catalog.find(spec)
    path = str(entry.verified_path())
    if entry.format == "sentencepiece":
        return spm.SentencePieceProcessor(model_file=path).encode
    if path.endswith(".json"):
        tk = tokenizers.Tokenizer.from_file(path)
        tk.encode_special_tokens = True
        return lambda text: tk.encode(text, add_special_tokens=False).ids
    if entry.format == "gguf":
        return catalog.load(spec).encode_ids  # llama.cpp's own ids are checked by its 15 suites
    enc = tiktoken.Encoding(spec, pat_str=entry.pattern, special_tokens=dict(entry.special_tokens),
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(path))
    return enc.encode_ordinary


@pytest.mark.parametrize("label", PASTES)
def test_a_pasted_text_gives_the_librarys_ids(vocab, label):
    text = PASTES[label]
    for spec in SPECS:
        tokens = vocab(spec).encode(text)
        assert [t.id for t in tokens] == library(spec)(text), spec
        if tokens:
            assert tokens[0].start == 0 and tokens[-1].end == len(text), spec


def test_argument_stdin_and_file_give_the_same_tokens(capsys, monkeypatch, tmp_path):
    text = "".join(PASTES.values())
    path = tmp_path / "paste.txt"
    path.write_bytes(text.encode("utf-8"))
    argv = [arg for spec in SPECS for arg in ("-t", spec)]
    from_argument = encode_json(capsys, *argv, "--", text)
    from_file = encode_json(capsys, *argv, "-f", str(path))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    from_stdin = encode_json(capsys, *argv)
    assert from_argument == from_file == from_stdin
    for spec, result in zip(SPECS, from_argument):
        assert [t["id"] for t in result["tokens"]] == library(spec)(text), spec
        assert result["tokens"][0]["start"] == 0 and result["tokens"][-1]["end"] == len(text)


def test_crlf_survives_every_path_as_its_own_bytes(capsys, tmp_path):
    path = tmp_path / "windows.txt"
    path.write_bytes(b"a\r\nb\r\n")
    [result] = encode_json(capsys, "-t", "cl100k_base", "-f", str(path))
    assert [(t["id"], t["bytes"]) for t in result["tokens"]] == [(64, "61"), (319, "0d0a"), (65, "62"), (319, "0d0a")]
    code, out, _ = run(capsys, "encode", "--color", "never", "-t", "cl100k_base", "-f", str(path))
    assert code == 0 and "[a][⟨CR⟩↵]\n[b][⟨CR⟩↵]" in out  # CR named, LF still ends the line


def test_nul_bytes_from_a_file_are_tokens_not_the_end_of_the_text(capsys, tmp_path):
    path = tmp_path / "nul.bin"
    path.write_bytes(b"a\x00b\x00\x00c")
    cl100k, mistral = encode_json(capsys, "-t", "cl100k_base", "-t", "mistral-7b-v0.1", "-f", str(path))
    assert [t["id"] for t in cl100k["tokens"]] == tiktoken_ids("a\x00b\x00\x00c")
    assert [t["bytes"] for t in mistral["tokens"] if t["kind"] == "byte_fallback"] == ["00", "00", "00"]
    code, out, _ = run(capsys, "encode", "--color", "never", "-t", "cl100k_base", "-f", str(path))
    assert "\x00" not in out and "⟨NUL⟩" in out  # a terminal never receives the raw control


def tiktoken_ids(text: str) -> list[int]:
    """tiktoken's own ids, its encoding loaded from the provisioned file (tiktoken's cache names),
    the environment as it was afterwards."""
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(catalog.vocab_dir())
    try:
        encoding = tiktoken.get_encoding("cl100k_base")
    finally:
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before
    return encoding.encode_ordinary(text)


def test_controls_never_reach_the_terminal_raw(capsys):
    code, out, _ = run(capsys, "encode", "--color", "never", "-t", "cl100k_base", "-t", "mistral-7b-v0.1",
                       PASTES["controls"])
    assert code == 0
    assert not any(c in out for c in "\x07\x1b\x0b\x0c\x7f")


def test_empty_input_is_no_tokens_everywhere(capsys):
    specs = ["cl100k_base", "mistral-7b-v0.1", "ggml-vocab-llama-spm"]  # a dummy prefix adds nothing either
    results = encode_json(capsys, *[a for s in specs for a in ("-t", s)], "--", "")
    assert [(r["count"], r["tokens"]) for r in results] == [(0, [])] * len(specs)
    proc = script("encode", "--json", "-t", "cl100k_base", stdin=b"")
    assert proc.returncode == 0 and json.loads(proc.stdout)[0]["count"] == 0
    code, out, _ = run(capsys, "encode", "--color", "never", "-t", "cl100k_base", "")
    assert code == 0 and "0 tokens, 0 chars, no tokens" in out


def test_lone_surrogates_in_the_interface_are_replacement_characters(vocab):
    # what tiktoken's test_encode_surrogate_pairs asks of every backend the CLI can load
    for spec in SPECS:
        tok = vocab(spec)
        assert tok.encode_ids("\ud83d") == tok.encode_ids("\ufffd"), spec
        assert tok.encode_ids("\ud83d\udc4d") == tok.encode_ids("👍"), spec


@pytest.mark.parametrize("data", [b"\xed\xa0\xbd", b"ok \xed\xb0\x80 there", b"\xff\xfe"])
def test_surrogates_and_bad_bytes_on_the_command_line_are_refused_in_one_line(data, tmp_path):
    # CESU-8 surrogates are not UTF-8; Python hands them over as lone surrogates (surrogateescape)
    arg = os.fsdecode(data)
    for proc in (script("encode", "-t", "r50k_base", arg), script("encode", "-t", "r50k_base", stdin=data)):
        err = proc.stderr.decode()
        assert proc.returncode == 1 and proc.stdout == b""
        assert err.count("\n") == 1 and "is not UTF-8 text (byte 0x" in err and "Traceback" not in err


def test_a_one_megabyte_line_from_stdin_is_the_librarys_ids():
    text = ("tokviz cuts 대한민국 and 🤗 " * 40_000)[:1_000_000]
    proc = script("encode", "--json", "-t", "cl100k_base", stdin=text.encode("utf-8"))
    assert proc.returncode == 0, proc.stderr.decode()
    [result] = json.loads(proc.stdout)
    assert [t["id"] for t in result["tokens"]] == tiktoken_ids(text)
    assert result["tokens"][-1]["end"] == len(text)


# -- the JSON shape ---------------------------------------------------------------------------

ENCODING_KEYS = ["tokenizer", "family", "count", "tokens"]
TOKEN_KEYS = ["id", "bytes", "start", "end", "kind", "text", "piece"]


def test_json_shape_is_the_same_for_every_family(capsys, tmp_path):
    specs = ["cl100k_base", "mistral-7b-v0.1", "deepseek-v3", "ggml-vocab-gpt-2", "tokviz-samples"]
    results = encode_json(capsys, *[a for s in specs for a in ("-t", s)], "--special", "all", "Hi 根 <|endoftext|>\n")
    assert [r["family"] for r in results] == ["tiktoken", "sentencepiece", "huggingface", "gguf", "trained"]
    for r in results:
        assert list(r) == ENCODING_KEYS and r["count"] == len(r["tokens"])
        for t in r["tokens"]:
            assert list(t) == TOKEN_KEYS
            assert isinstance(t["id"], int) and isinstance(t["start"], int) and isinstance(t["end"], int)
            assert t["kind"] in {"normal", "fragment", "byte_fallback", "special", "unknown"}
            bytes.fromhex(t["bytes"])


# -- exit statuses and help -------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "status", "says"), [
    (["encode", "-t", "cl100k_base", "hi"], 0, ""),
    (["encode", "-t", "no-such-vocabulary", "hi"], 1, "unknown tokenizer 'no-such-vocabulary'"),
    (["encode", "-t", "cl100k_base", "-f", "/no/such/file.txt"], 1, "/no/such/file.txt"),
    (["encode", "--special", "raise", "-t", "cl100k_base", "<|endoftext|>"], 1, "disallowed special token"),
    (["encode", "--no-such-option"], 2, "unrecognized arguments"),
    (["encode", "--color", "sometimes", "hi"], 2, "invalid choice"),
    (["no-such-command"], 2, "invalid choice"),
    (["diff", "-t", "cl100k_base", "-t", "cl100k_base", "same"], 0, ""),
    (["diff", "-t", "cl100k_base", "-t", "o200k_base", "대한민국"], 1, ""),  # 1: the ids differ
    (["diff", "-t", "cl100k_base", "one"], 2, "at least two"),
    (["stats", "/no/such/folder"], 1, "no such file or folder"),
    (["extend", "qwen", "/no/such/words.tsv", "-o", "x.tiktoken"], 1, "/no/such/words.tsv"),
    (["chat", "-t", "qwen", "/no/such/chat.json"], 1, "/no/such/chat.json"),
    (["overlap", "-t", "cl100k_base"], 1, "two"),
])
def test_exit_statuses(capsys, monkeypatch, tmp_path, argv, status, says):
    monkeypatch.chdir(tmp_path)
    try:
        code, _, err = run(capsys, *argv)  # any exception but SystemExit would be a traceback
    except SystemExit as e:  # argparse's usage errors
        code, err = e.code, capsys.readouterr().err
    assert code == status, err
    assert says in err
    if status == 1 and says:  # an error (diff's 1 means "the ids differ")
        assert err.count("\n") == 1  # one line


COMMANDS = {
    "encode": ["--tokenizer", "--special", "--file", "--json", "--color", "--no-whitespace", "--html"],
    "diff": ["--tokenizer", "--special", "--file", "--json", "--limit", "--no-whitespace"],
    "overlap": ["--tokenizer", "--json", "--limit", "--by"],
    "vocabs": ["--local", "--json", "--add-folder", "--remove-folder", "fetch", "list"],
    "train": ["--output", "--vocab-size", "--pattern", "--include", "--exclude", "--gitignore", "--non-utf8",
              "--special", "--min-frequency", "--jobs", "--word-counts", "--hf-json", "--force"],
    "stats": ["--tokenizer", "--text", "--baseline", "--chars-per-token", "--price", "--limit", "--special",
              "--formats", "--include-hidden", "--csv", "--json"],
    "extend": ["--output", "--force", "--start-id"],
    "chat": ["--tokenizer", "--template", "--generation-prompt", "--set", "--context", "--json", "--color"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_naming_its_options(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        run(capsys, command, "--help")
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for option in COMMANDS[command]:
        assert option in out, option


def test_every_option_the_help_names_is_accepted(capsys, tmp_path):
    # the options --help lists do what it says: a few combinations a user would type
    page = tmp_path / "page.html"
    code, _, err = run(capsys, "encode", "-t", "cl100k_base", "--no-whitespace", "--color", "always", "a b")
    assert code == 0
    code, out, _ = run(capsys, "encode", "-t", "cl100k_base", "--no-whitespace", "--color", "never", "a b")
    assert "[a][ b]" in out and "\x1b[" not in out
    code, out, _ = run(capsys, "encode", "-t", "cl100k_base", "--color", "always", "a b")
    assert "\x1b[" in out
    code, _, err = run(capsys, "encode", "-t", "cl100k_base", "--html", str(page), "a b")
    assert code == 0 and page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")


def test_ids_match_for_a_text_given_after_double_dash(capsys):
    # a text that looks like an option is given after `--`
    assert ids_of(capsys, "-t", "cl100k_base", "--", "--json") == [tiktoken_ids("--json")]


def test_the_reference_leaves_the_environment_as_it_was(monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    assert tiktoken_ids("hello world") == [15339, 1917]
    assert "TIKTOKEN_CACHE_DIR" not in os.environ
