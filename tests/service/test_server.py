"""The tokenizer service: Qt-free, typed messages, and its encodings are the core's tokens."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from tokviz.core.encoding import TokenTable
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import TokenKind
from tokviz.service import protocol as p
from tokviz.service.server import encode, serve


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


def send(conn, *messages) -> None:
    for message in messages:
        p.send(conn, message)


def receive(conn):
    return p.receive_reply(conn)


def test_the_child_loads_encodes_for_several_keys_and_stops(vocab) -> None:
    conn, child = start_server()
    try:
        send(conn, p.Load(1, "cl100k_base"))
        send(conn, p.Load(2, "qwen"))
        assert [(type(r), r.key) for r in (receive(conn), receive(conn))] == [(p.Loaded, 1), (p.Loaded, 2)]
        send(conn, p.Encode(1, 7, "hello world", SpecialPolicy.parse("none")))
        send(conn, p.Encode(2, 3, "hello world", SpecialPolicy.parse("none")))
        replies = {r.key: r for r in (receive(conn), receive(conn))}
        assert isinstance(replies[1], p.Encoded) and replies[1].gen == 7
        assert replies[1].encoding.ids.tolist() == vocab("cl100k_base").encode_ids("hello world")
        assert isinstance(replies[2], p.Encoded) and replies[2].gen == 3
        assert replies[2].encoding.ids.tolist() == vocab("qwen").encode_ids("hello world")
        if hasattr(os, "getpriority"):  # the window gets the cores first
            assert os.getpriority(os.PRIO_PROCESS, child.pid) >= min(os.getpriority(os.PRIO_PROCESS, 0) + 1, 19)
        send(conn, p.Stop())
        child.join(30)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.terminate()
        conn.close()


def test_an_encode_with_a_newer_one_waiting_is_superseded(vocab) -> None:
    conn, child = start_server()
    try:
        send(conn, p.Load(1, "cl100k_base"))
        assert isinstance(receive(conn), p.Loaded)
        text = "a long text " * 20000
        send(conn, p.Encode(1, 1, text, SpecialPolicy()))
        send(conn, p.Encode(1, 2, text, SpecialPolicy()))  # waits while the first encodes
        send(conn, p.Encode(1, 3, "newest", SpecialPolicy()))
        first, second, third = receive(conn), receive(conn), receive(conn)
        assert first == p.Superseded(1, 1) and second == p.Superseded(1, 2)
        assert isinstance(third, p.Encoded) and third.gen == 3
        assert third.encoding.ids.tolist() == vocab("cl100k_base").encode_ids("newest")
        send(conn, p.Cancel(1))  # for an answered encode: no reply, and the next one is done
        send(conn, p.Encode(1, 4, "next", SpecialPolicy()))
        reply = receive(conn)
        assert isinstance(reply, p.Encoded) and reply.gen == 4
    finally:
        conn.close()
        child.join(30)


def test_an_unknown_spec_is_a_load_failure_not_a_hang() -> None:
    conn, child = start_server()
    try:
        send(conn, p.Load(5, "no-such-tokenizer"))
        reply = receive(conn)
        assert isinstance(reply, p.LoadFailed) and reply.key == 5 and "no-such-tokenizer" in reply.message
        send(conn, p.Encode(5, 1, "text", SpecialPolicy()))  # that pane's requests fail
        reply = receive(conn)
        assert isinstance(reply, p.Failed) and (reply.key, reply.gen) == (5, 1)
    finally:
        conn.close()
        child.join(30)
        assert child.exitcode == 0  # the pipe closing ends it


def test_the_child_modules_do_not_import_qt() -> None:
    code = (
        "import sys, tokviz.service.server, tokviz.training.process\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_loaded_panes_requests_go_before_the_next_load() -> None:
    from tokviz.service.server import _Requests

    requests = _Requests()
    for message in [p.Load(2, "qwen"), p.Load(3, "o200k_base"), p.Encode(1, 1, "a", SpecialPolicy()),
                    p.Drop(3), p.Stream(1, 0, (1,))]:
        requests.put(message)
    got = [requests.get() for _ in range(4)]
    assert [(type(m), m.key) for m in got] == [(p.Encode, 1), (p.Drop, 3), (p.Stream, 1), (p.Load, 2)]
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
            send(conn, p.Load(key, spec))
        loaded = [receive(conn) for _ in specs]
        assert all(isinstance(r, p.Loaded) for r in loaded) and sorted(r.key for r in loaded) == [1, 2, 3, 4]
        for key in range(1, 5):
            send(conn, p.Encode(key, key * 10, text, policy, key == 3))
        replies = {r.key: r for r in (receive(conn) for _ in specs)}
        for key, spec in enumerate(specs, 1):
            assert isinstance(replies[key], p.Encoded) and replies[key].gen == key * 10
            serial = encode(vocab(spec), text, policy, model_adds=key == 3).compact()
            assert same_columns(replies[key].encoding, serial), spec
    finally:
        conn.close()
        child.join(30)


def E(key, gen, text="a"):  # noqa: N802 (an encode request, short)
    return p.Encode(key, gen, text, SpecialPolicy())


def test_the_encode_threads_take_turns_per_pane_and_per_vocabulary() -> None:
    from tokviz.service.server import _Requests

    requests = _Requests(threads=2)
    spec_of = {1: "qwen", 2: "qwen", 3: "cl100k_base", 4: "o200k_base"}
    requests.hold(1, "qwen")  # key 1's encode is at hand on one thread
    for message in [p.Cancel(1), E(1, 2, "b"), E(2, 1), E(3, 1), E(4, 1), p.Drop(4)]:
        requests.put(message)
    # not key 1's (its encode sees its cancel and next encode waiting), not key 2's (same vocabulary)
    assert requests.newer_encode(1) and requests.get(spec_of) == E(3, 1)
    requests.hold(3, "cl100k_base")  # both threads at work: no encode goes, a drop may
    assert requests.get(spec_of) == p.Drop(4)
    requests.done(1, "qwen")
    assert requests.get(spec_of) == p.Cancel(1)
    assert requests.get(spec_of) == E(1, 2, "b")


def test_the_waiting_encode_expected_to_take_longest_goes_first() -> None:
    from tokviz.service.server import _Requests

    requests = _Requests(threads=1)
    spec_of = {1: "cl100k_base", 2: "mistral-7b-v0.1", 3: "qwen"}
    rate = {"cl100k_base": 1.0, "mistral-7b-v0.1": 3.0, "qwen": 1.0}
    for message in [E(1, 1, "x" * 100), E(2, 1, "x" * 100), E(3, 1, "x" * 400)]:
        requests.put(message)

    def cost(message):
        return len(message.text) * rate[spec_of[message.key]]

    assert requests.get(spec_of, cost).key == 3  # 400 chars at 1.0 before 100 at 3.0
    requests.hold(3, "qwen")
    requests.done(3, "qwen")
    assert [requests.get(spec_of, cost).key for _ in range(2)] == [2, 1]


def test_a_server_knows_each_vocabularys_speed_from_a_sample(vocab) -> None:
    from tokviz.service.server import _Requests, _Server

    server = _Server(None, _Requests())  # no pipe: nothing is sent
    server._measure("cl100k_base", vocab("cl100k_base"))  # what its load does once it is loaded
    server.spec_of[1] = "cl100k_base"
    assert server.rate["cl100k_base"] > 0
    assert server.cost(E(1, 1, "x" * 1000)) == 1000 * server.rate["cl100k_base"]


def test_sending_a_text_leaves_no_utf8_copy_on_it() -> None:
    """Pickling a str that is not ASCII caches its UTF-8 on it (`sys.getsizeof` counts the
    cache): a text sent as a str would hold a second copy in the window for as long as it lives."""
    import pickle

    text = "안녕하세요 " * 1000
    before = sys.getsizeof(text)
    assert pickle.loads(pickle.dumps(p.Text.of(1, text))).text() == text
    assert sys.getsizeof(text) == before
    pickle.dumps(("text", 0, 1, text))  # what the message would be with the str in it
    assert sys.getsizeof(text) > before + 10_000


def test_a_text_sent_once_serves_every_encode_that_names_it(vocab) -> None:
    conn, child = start_server()
    try:
        send(conn, p.Load(1, "cl100k_base"), p.Load(2, "qwen"))
        assert sorted(receive(conn).key for _ in range(2)) == [1, 2]
        send(conn, p.Text.of(7, "hello world"))
        send(conn, p.Encode(1, 1, p.TextRef(7), SpecialPolicy()), p.Encode(2, 1, p.TextRef(7), SpecialPolicy()))
        replies = {r.key: r for r in (receive(conn), receive(conn))}
        assert replies[1].encoding.ids.tolist() == vocab("cl100k_base").encode_ids("hello world")
        assert replies[2].encoding.ids.tolist() == vocab("qwen").encode_ids("hello world")
        send(conn, p.Text.of(8, "another"))
        send(conn, p.Encode(1, 2, p.TextRef(7), SpecialPolicy()))  # not the last text: refused
        reply = receive(conn)
        assert isinstance(reply, p.Failed) and reply.gen == 2 and "did not arrive" in reply.message
        odd = "나\ud800 \r\n😀"  # a lone surrogate (Qt's text can hold one) goes through as it is
        send(conn, p.Text.of(9, odd), p.Encode(1, 3, p.TextRef(9), SpecialPolicy()))
        assert receive(conn).encoding == vocab("cl100k_base").encode(odd)
    finally:
        conn.close()
        child.join(30)


def test_anything_but_a_message_of_the_protocol_is_refused() -> None:
    parent, child = multiprocessing.Pipe()
    parent.send_bytes((0).to_bytes(4, "little") + __import__("pickle").dumps(("encode", 1, 1, "a")))
    from tokviz.core.messages import ProtocolError

    with pytest.raises(ProtocolError, match="not a request"):
        p.receive_request(child)
    p.send(parent, p.Load(1, "qwen"))  # a request is no reply
    with pytest.raises(ProtocolError, match="not a reply"):
        p.receive_reply(child)


def test_the_last_text_is_kept_as_bytes_and_decoded_once_while_encodes_wait() -> None:
    from tokviz.service.server import _LastText

    texts = _LastText()
    texts.put(p.Text.of(3, "나\ud800 ok"))
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
    from tokviz.service.server import _burst, _LastText, _Requests

    parent, child = multiprocessing.Pipe()
    requests, texts = _Requests(threads=1), _LastText()
    send(parent, p.Text.of(1, "a text"))
    for key in (1, 2, 3):
        send(parent, p.Encode(key, 1, p.TextRef(1), SpecialPolicy()))
    send(parent, p.Drop(9))
    # all of them are in the pipe already; no limit on the gathering's length, which a loaded
    # machine could otherwise reach between two reads
    assert _burst(child, texts, max_s=3600.0) == []  # the text: kept, not a request
    burst = _burst(child, texts, max_s=3600.0)
    assert [type(m) for m in burst] == [p.Encode] * 3 + [p.Drop] and not child.poll()
    assert all(m.text == "a text" for m in burst[:3])  # the text each TextRef named
    requests.put(*burst)
    spec_of = {1: "cl100k_base", 2: "mistral-7b-v0.1", 3: "qwen"}
    rate = {"cl100k_base": 1.0, "mistral-7b-v0.1": 3.0, "qwen": 1.0}
    assert requests.get(spec_of, lambda m: len(m.text) * rate[spec_of[m.key]]).key == 2
    send(parent, p.Drop(5))
    assert _burst(child, texts) == [p.Drop(5)]  # not an encode: handed over at once


def test_an_encode_never_goes_ahead_of_its_own_panes_earlier_cancel() -> None:
    """The cancel of pane 2's previous encode came after that encode was answered, and pane 2's
    next encode (the most costly one waiting) after it. Taken first, that encode saw the cancel
    waiting, was answered `Superseded` and never done: the pane had no result and waited for
    none. The cancel goes first; the encode after it is not superseded."""
    from tokviz.service.server import _Requests

    requests = _Requests(threads=2)
    spec_of = {1: "cl100k_base", 2: "mistral-7b-v0.1"}
    requests.put(E(1, 1, "x" * 100), p.Cancel(2), E(2, 5, "x" * 100))

    def cost(message):
        return len(message.text) * (3.0 if message.key == 2 else 1.0)

    assert requests.get(spec_of, cost) == E(1, 1, "x" * 100)  # pane 2's encode waits for its cancel
    requests.hold(1, "cl100k_base")
    assert requests.get(spec_of, cost) == p.Cancel(2)
    assert requests.get(spec_of, cost) == E(2, 5, "x" * 100) and not requests.newer_encode(2)


def test_a_drop_goes_ahead_and_takes_its_panes_waiting_load() -> None:
    from tokviz.service.server import _Requests

    requests = _Requests()
    requests.put(p.Load(1, "cl100k_base"), p.Load(2, "qwen"), p.Drop(2))
    assert requests.get() == p.Drop(2)
    assert requests.get() == p.Load(1, "cl100k_base")
    assert not requests._items
