"""The tokenizer child process of a compare pane: Qt-free, and its columns are the core's tokens."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys

from tokviz.core.columns import TokenColumns
from tokviz.core.encode_server import encode, serve
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import TokenKind


def test_columns_rebuild_exactly_the_core_tokens(vocab) -> None:
    qwen = vocab("qwen")
    text = "根 안녕 👋🏽 <|endoftext|> plain"
    policy = SpecialPolicy.parse("all")
    expected = qwen.encode_with(text, policy)
    tokens = TokenColumns(encode(qwen, text, policy))
    assert tokens == expected and len(tokens) == len(expected)
    assert tokens[-1] == expected[-1] and tokens[1:3] == expected[1:3]
    assert {t.kind for t in tokens} >= {TokenKind.FRAGMENT, TokenKind.SPECIAL, TokenKind.NORMAL}


def test_the_child_loads_encodes_and_stops(vocab) -> None:
    expected = vocab("cl100k_base").encode_ids("hello world")
    ctx = multiprocessing.get_context("spawn")
    conn, child_conn = ctx.Pipe()
    child = ctx.Process(target=serve, args=(child_conn, "cl100k_base"), daemon=True)
    child.start()
    child_conn.close()
    try:
        kind, info = conn.recv()
        assert kind == "loaded" and info.name == "cl100k_base"
        conn.send(("encode", 7, "hello world", SpecialPolicy.parse("none")))
        kind, gen, cols = conn.recv()
        assert (kind, gen) == ("done", 7) and cols.ids.tolist() == expected
        conn.send(None)
        child.join(30)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.terminate()
        conn.close()


def test_an_unknown_spec_is_a_load_failure_not_a_hang() -> None:
    ctx = multiprocessing.get_context("spawn")
    conn, child_conn = ctx.Pipe()
    child = ctx.Process(target=serve, args=(child_conn, "no-such-tokenizer"), daemon=True)
    child.start()
    child_conn.close()
    kind, message = conn.recv()
    child.join(30)
    assert kind == "load_failed" and "no-such-tokenizer" in message


def test_the_child_modules_do_not_import_qt() -> None:
    code = (
        "import sys, tokviz.core.encode_server, tokviz.training.process\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
