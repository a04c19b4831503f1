"""The tokenizer child process of a compare pane: Qt-free, and its columns are the core's tokens."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np

from tokviz.core.encode_server import encode, receive_reply, serve
from tokviz.core.encoding import TokenTable
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import TokenKind


def test_columns_rebuild_exactly_the_core_tokens(vocab) -> None:
    qwen = vocab("qwen")
    text = "根 안녕 👋🏽 <|endoftext|> plain"
    policy = SpecialPolicy.parse("all")
    expected = qwen.encode_with(text, policy)
    tokens = encode(qwen, text, policy)
    assert tokens == expected and len(tokens) == len(expected)
    assert tokens[-1] == expected[-1] and tokens[1:3] == expected[1:3]
    assert {t.kind for t in tokens} >= {TokenKind.FRAGMENT, TokenKind.SPECIAL, TokenKind.NORMAL}


def test_compact_columns_are_the_same_tokens_in_fewer_bytes(vocab) -> None:

    qwen = vocab("qwen")
    text = "根 안녕 👋🏽 <|endoftext|> plain" * 50
    policy = SpecialPolicy.parse("all")
    cols = encode(qwen, text, policy)
    small = cols.compact()
    assert small.key_index.dtype == np.uint16 and small.ids.dtype == np.int32
    assert same_columns(small, cols)
    assert small == qwen.encode_with(text, policy)
    rows = cols.table.rows()
    many = replace(cols, table=TokenTable.of_rows(rows * (65536 // len(rows) + 1)))  # more keys than 16 bits count
    assert many.compact().key_index.dtype == cols.key_index.dtype


def start_server():
    ctx = multiprocessing.get_context("spawn")
    conn, child_conn = ctx.Pipe()
    child = ctx.Process(target=serve, args=(child_conn,), daemon=True)
    child.start()
    child_conn.close()
    return conn, child


def test_the_child_loads_encodes_for_several_keys_and_stops(vocab) -> None:
    conn, child = start_server()
    try:
        conn.send(("load", 1, "cl100k_base"))
        conn.send(("load", 2, "qwen"))
        assert [receive_reply(conn)[:2] for _ in range(2)] == [("loaded", 1), ("loaded", 2)]
        conn.send(("encode", 1, 7, "hello world", SpecialPolicy.parse("none"), False))
        conn.send(("encode", 2, 3, "hello world", SpecialPolicy.parse("none"), False))
        replies = {r[1]: r for r in (receive_reply(conn), receive_reply(conn))}
        assert replies[1][:3] == ("done", 1, 7)
        assert replies[1][3].ids.tolist() == vocab("cl100k_base").encode_ids("hello world")
        assert replies[2][:3] == ("done", 2, 3)
        assert replies[2][3].ids.tolist() == vocab("qwen").encode_ids("hello world")
        if hasattr(os, "getpriority"):  # the window gets the cores first
            assert os.getpriority(os.PRIO_PROCESS, child.pid) >= min(os.getpriority(os.PRIO_PROCESS, 0) + 1, 19)
        conn.send(None)
        child.join(30)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.terminate()
        conn.close()


def test_an_encode_with_a_newer_one_waiting_is_superseded(vocab) -> None:
    conn, child = start_server()
    try:
        conn.send(("load", 1, "cl100k_base"))
        assert receive_reply(conn)[0] == "loaded"
        text = "a long text " * 20000
        conn.send(("encode", 1, 1, text, SpecialPolicy(), False))
        conn.send(("encode", 1, 2, text, SpecialPolicy(), False))  # waits while the first encodes
        conn.send(("encode", 1, 3, "newest", SpecialPolicy(), False))
        first, second, third = receive_reply(conn), receive_reply(conn), receive_reply(conn)
        assert first[:3] == ("superseded", 1, 1) and second[:3] == ("superseded", 1, 2)
        assert third[:3] == ("done", 1, 3) and third[3].ids.tolist() == vocab("cl100k_base").encode_ids("newest")
        conn.send(("cancel", 1))  # for an answered encode: no reply, and the next one is done
        conn.send(("encode", 1, 4, "next", SpecialPolicy(), False))
        assert receive_reply(conn)[:3] == ("done", 1, 4)
    finally:
        conn.close()
        child.join(30)


def test_an_unknown_spec_is_a_load_failure_not_a_hang() -> None:
    conn, child = start_server()
    try:
        conn.send(("load", 5, "no-such-tokenizer"))
        kind, key, message = receive_reply(conn)
        assert (kind, key) == ("load_failed", 5) and "no-such-tokenizer" in message
        conn.send(("encode", 5, 1, "text", SpecialPolicy(), False))  # that pane's requests fail
        assert receive_reply(conn)[:3] == ("failed", 5, 1)
    finally:
        conn.close()
        child.join(30)
        assert child.exitcode == 0  # the pipe closing ends it


def test_the_child_modules_do_not_import_qt() -> None:
    code = (
        "import sys, tokviz.core.encode_server, tokviz.training.process\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_loaded_panes_requests_go_before_the_next_load() -> None:
    from tokviz.core.encode_server import _Requests

    requests = _Requests()
    for message in [("load", 2, "qwen"), ("load", 3, "o200k_base"), ("encode", 1, 1, "a", None, False),
                    ("drop", 3), ("stream", 1, 0, [1])]:
        requests.put(message)
    assert [requests.get()[:2] for _ in range(4)] == [("encode", 1), ("drop", 3), ("stream", 1), ("load", 2)]
    assert requests._items == []  # the dropped pane's load went with it


def same_columns(a, b) -> bool:
    names = ("ids", "byte_starts", "byte_ends", "starts", "ends", "key_index")
    return (all(getattr(a, n).tolist() == getattr(b, n).tolist() for n in names)
            and a.table.rows() == b.table.rows() and a.n_bytes == b.n_bytes)


def test_concurrent_encodes_of_several_panes_give_the_serial_columns(vocab) -> None:

    specs = ["cl100k_base", "qwen", "mistral-7b-v0.1", "cl100k_base"]  # two panes share a vocabulary
    text = "根 안녕 👋🏽 <|endoftext|> plain  text\n\n\tindented " * 3000
    policy = SpecialPolicy.parse("all")
    conn, child = start_server()
    try:
        for key, spec in enumerate(specs, 1):
            conn.send(("load", key, spec))
        assert sorted(receive_reply(conn)[:2] for _ in specs) == [("loaded", k) for k in range(1, 5)]
        for key in range(1, 5):
            conn.send(("encode", key, key * 10, text, policy, key == 3))
        replies = {r[1]: r for r in (receive_reply(conn) for _ in specs)}
        for key, spec in enumerate(specs, 1):
            assert replies[key][:3] == ("done", key, key * 10)
            serial = encode(vocab(spec), text, policy, model_adds=key == 3).compact()
            assert same_columns(replies[key][3], serial), spec
    finally:
        conn.close()
        child.join(30)


def test_the_encode_threads_take_turns_per_pane_and_per_vocabulary() -> None:
    from tokviz.core.encode_server import _Requests

    requests = _Requests(threads=2)
    spec_of = {1: "qwen", 2: "qwen", 3: "cl100k_base", 4: "o200k_base"}
    requests.hold(1, "qwen")  # key 1's encode is at hand on one thread
    for message in [("cancel", 1), ("encode", 1, 2, "b", None, False), ("encode", 2, 1, "a", None, False),
                    ("encode", 3, 1, "a", None, False), ("encode", 4, 1, "a", None, False), ("drop", 4)]:
        requests.put(message)
    # not key 1's (its encode sees its cancel and next encode waiting), not key 2's (same vocabulary)
    assert requests.newer_encode(1) and requests.get(spec_of)[:2] == ("encode", 3)
    requests.hold(3, "cl100k_base")  # both threads at work: no encode goes, a drop may
    assert requests.get(spec_of)[:2] == ("drop", 4)
    requests.done(1, "qwen")
    assert requests.get(spec_of)[:2] == ("cancel", 1)
    assert requests.get(spec_of)[:2] == ("encode", 1)


def test_the_waiting_encode_expected_to_take_longest_goes_first() -> None:
    from tokviz.core.encode_server import _Requests

    requests = _Requests(threads=1)
    spec_of = {1: "cl100k_base", 2: "mistral-7b-v0.1", 3: "qwen"}
    rate = {"cl100k_base": 1.0, "mistral-7b-v0.1": 3.0, "qwen": 1.0}
    for message in [("encode", 1, 1, "x" * 100, None, False), ("encode", 2, 1, "x" * 100, None, False),
                    ("encode", 3, 1, "x" * 400, None, False)]:
        requests.put(message)

    def cost(message):
        return len(message[3]) * rate[spec_of[message[1]]]

    assert requests.get(spec_of, cost)[1] == 3  # 400 chars at 1.0 before 100 at 3.0
    requests.hold(3, "qwen")
    requests.done(3, "qwen")
    assert [requests.get(spec_of, cost)[1] for _ in range(2)] == [2, 1]


def test_a_server_knows_each_vocabularys_speed_from_a_sample(vocab) -> None:
    from tokviz.core.encode_server import _Requests, _Server

    server = _Server(None, _Requests())  # no pipe: nothing is sent
    server._measure("cl100k_base", vocab("cl100k_base"))  # what its load does once it is loaded
    server.spec_of[1] = "cl100k_base"
    assert server.rate["cl100k_base"] > 0
    assert server.cost(("encode", 1, 1, "x" * 1000, None, False)) == 1000 * server.rate["cl100k_base"]


def test_sending_a_text_leaves_no_utf8_copy_on_it() -> None:
    """Pickling a str that is not ASCII caches its UTF-8 on it (`sys.getsizeof` counts the
    cache): a text sent as a str would hold a second copy in the window for as long as it lives."""
    import pickle

    from tokviz.core.encode_server import text_message

    text = "안녕하세요 " * 1000
    before = sys.getsizeof(text)
    assert pickle.loads(pickle.dumps(text_message(1, text)))[3].decode("utf-8") == text
    assert sys.getsizeof(text) == before
    pickle.dumps(("text", 0, 1, text))  # what the message was
    assert sys.getsizeof(text) > before + 10_000


def test_a_text_sent_once_serves_every_encode_that_names_it(vocab) -> None:
    from tokviz.core.encode_server import TextRef, text_message

    conn, child = start_server()
    try:
        conn.send(("load", 1, "cl100k_base"))
        conn.send(("load", 2, "qwen"))
        assert sorted(receive_reply(conn)[:2] for _ in range(2)) == [("loaded", 1), ("loaded", 2)]
        conn.send(text_message(7, "hello world"))
        conn.send(("encode", 1, 1, TextRef(7), SpecialPolicy(), False))
        conn.send(("encode", 2, 1, TextRef(7), SpecialPolicy(), False))
        replies = {r[1]: r for r in (receive_reply(conn), receive_reply(conn))}
        assert replies[1][3].ids.tolist() == vocab("cl100k_base").encode_ids("hello world")
        assert replies[2][3].ids.tolist() == vocab("qwen").encode_ids("hello world")
        conn.send(text_message(8, "another"))
        conn.send(("encode", 1, 2, TextRef(7), SpecialPolicy(), False))  # not the last text: refused
        reply = receive_reply(conn)
        assert reply[:3] == ("failed", 1, 2) and "did not arrive" in reply[3]
        odd = "나\ud800 \r\n😀"  # a lone surrogate (Qt's text can hold one) goes through as it is
        conn.send(text_message(9, odd))
        conn.send(("encode", 1, 3, TextRef(9), SpecialPolicy(), False))
        assert receive_reply(conn)[3] == vocab("cl100k_base").encode(odd)
    finally:
        conn.close()
        child.join(30)


def test_the_last_text_is_kept_as_bytes_and_decoded_once_while_encodes_wait() -> None:
    from tokviz.core.encode_server import _LastText

    texts = _LastText()
    texts.put(3, "나\ud800 ok".encode("utf-8", "surrogatepass"))
    first = texts.get(3)
    assert first == "나\ud800 ok" and texts.get(3) is first  # waiting encodes share one str
    assert texts.get(2) is None  # not the last text
    texts.forget("an older text")  # an encode of another text is done: this one is kept
    assert texts.get(3) is first
    texts.forget(first)  # an encode of it is done: the str is the waiting requests' to hold, not this one's
    again = texts.get(3)
    assert again == first and again is not first


def test_encodes_that_come_together_are_handed_over_together_so_the_longest_goes_first() -> None:
    """Three panes send their encodes of a new text one after the other: the reader gives them
    to the serving loop at once, so the first to go is the most costly, not the first to come."""
    from tokviz.core.encode_server import TextRef, _burst, _LastText, _Requests, text_message

    parent, child = multiprocessing.Pipe()
    requests, texts = _Requests(threads=1), _LastText()
    parent.send(text_message(1, "a text"))
    for key in (1, 2, 3):
        parent.send(("encode", key, 1, TextRef(1), SpecialPolicy(), False))
    parent.send(("drop", 9))
    # all of them are in the pipe already; no limit on the gathering's length, which a loaded
    # machine could otherwise reach between two reads
    assert _burst(child, texts, max_s=3600.0) == []  # the text: kept, not a request
    burst = _burst(child, texts, max_s=3600.0)
    assert [m[0] for m in burst] == ["encode"] * 3 + ["drop"] and not child.poll()
    assert all(m[3] == "a text" for m in burst[:3])  # the text each TextRef named
    requests.put(*burst)
    spec_of = {1: "cl100k_base", 2: "mistral-7b-v0.1", 3: "qwen"}
    rate = {"cl100k_base": 1.0, "mistral-7b-v0.1": 3.0, "qwen": 1.0}
    assert requests.get(spec_of, lambda m: len(m[3]) * rate[spec_of[m[1]]])[1] == 2
    parent.send(("drop", 5))
    assert _burst(child, texts) == [("drop", 5)]  # not an encode: handed over at once


def test_an_encode_never_goes_ahead_of_its_own_panes_earlier_cancel() -> None:
    """The cancel of pane 2's previous encode came after that encode was answered, and pane 2's
    next encode (the most costly one waiting) after it. Taken first, that encode saw the cancel
    waiting, was answered `superseded` and never done: the pane had no result and waited for
    none. The cancel goes first; the encode after it is not superseded."""
    from tokviz.core.encode_server import _Requests

    requests = _Requests(threads=2)
    spec_of = {1: "cl100k_base", 2: "mistral-7b-v0.1"}
    requests.put(("encode", 1, 1, "x" * 100, None, False), ("cancel", 2), ("encode", 2, 5, "x" * 100, None, False))

    def cost(message):
        return len(message[3]) * (3.0 if message[1] == 2 else 1.0)

    first = requests.get(spec_of, cost)
    assert first[:2] == ("encode", 1)  # pane 2's encode waits for its cancel
    requests.hold(1, "cl100k_base")
    assert requests.get(spec_of, cost) == ("cancel", 2)
    encode = requests.get(spec_of, cost)
    assert encode[:3] == ("encode", 2, 5) and not requests.newer_encode(2)  # done, not superseded


def test_a_drop_goes_ahead_and_takes_its_panes_waiting_load() -> None:
    from tokviz.core.encode_server import _Requests

    requests = _Requests()
    requests.put(("load", 1, "cl100k_base"), ("load", 2, "qwen"), ("drop", 2))
    assert requests.get() == ("drop", 2)
    assert requests.get() == ("load", 1, "cl100k_base")
    assert not requests._items
