"""The window's side of the tokenizer service: replies come through one callback from one reader
thread; a process that dies is reported once and replaced on the next request."""

from __future__ import annotations

import os
import queue
import signal
import sys

import pytest

from tokviz.core.tokenizer import SpecialPolicy
from tokviz.service import protocol as p
from tokviz.service.client import Died, ServiceClient

WAIT_S = 60  # a bound for a reply that comes; never reached when the code works


@pytest.fixture
def client():
    replies: queue.Queue = queue.Queue()
    client = ServiceClient(replies.put, name="tokviz-test-service")
    client.replies = replies
    yield client
    client.stop()


def next_reply(client):
    return client.replies.get(timeout=WAIT_S)


def test_panes_load_encode_and_share_one_text(client, vocab) -> None:
    a, b = client.attach("cl100k_base"), client.attach("qwen")
    assert sorted((type(r), r.key) for r in (next_reply(client), next_reply(client))) == [(p.Loaded, a), (p.Loaded, b)]
    client.encode(a, 1, "hello world", SpecialPolicy())
    client.encode(b, 1, "hello world", SpecialPolicy())
    assert client._last_text[0] == 1  # the text went once
    replies = {r.key: r for r in (next_reply(client), next_reply(client))}
    assert replies[a].encoding.ids.tolist() == vocab("cl100k_base").encode_ids("hello world")
    assert replies[b].encoding.ids.tolist() == vocab("qwen").encode_ids("hello world")
    client.stream(a, 2, [15339, 1917])
    streamed = next_reply(client)
    assert isinstance(streamed, p.Streamed) and "".join(streamed.buffered) == "hello world"


def test_a_killed_process_is_reported_once_and_the_next_request_starts_a_new_one(client, vocab) -> None:
    key = client.attach("cl100k_base")
    assert isinstance(next_reply(client), p.Loaded)
    first = client.process
    os.kill(first.pid, signal.SIGKILL)
    died = next_reply(client)
    assert isinstance(died, Died) and died.generation == 1 and "exit code -9" in died.message
    assert client.process is None
    generation = client.encode(key, 2, "after the death", SpecialPolicy())
    assert generation == 2 and client.process.pid != first.pid
    loaded, encoded = next_reply(client), next_reply(client)  # the pane's vocabulary was loaded again first
    assert isinstance(loaded, p.Loaded) and loaded.key == key
    assert encoded.encoding.ids.tolist() == vocab("cl100k_base").encode_ids("after the death")


def test_the_last_pane_to_go_stops_the_process_and_no_death_is_reported(client) -> None:
    a, b = client.attach("cl100k_base"), client.attach("cl100k_base")
    next_reply(client), next_reply(client)
    process = client.process
    client.detach(a)
    assert process.is_alive() and client.process is process
    client.detach(b)
    assert client.process is None and not process.is_alive() and process.exitcode == 0
    client.detach(b)  # again: nothing
    key = client.attach("o200k_base")  # a new pane: a new process
    reply = next_reply(client)
    assert isinstance(reply, p.Loaded) and reply.key == key  # and no Died came before it


def test_a_pane_that_failed_to_load_gets_failures_not_silence(client) -> None:
    key = client.attach("no-such-tokenizer")
    reply = next_reply(client)
    assert isinstance(reply, p.LoadFailed) and "no-such-tokenizer" in reply.message
    client.encode(key, 1, "text", SpecialPolicy())
    reply = next_reply(client)
    assert isinstance(reply, p.Failed) and reply.gen == 1


def _children() -> set[int]:
    """This process's child processes (Linux: /proc)."""
    from pathlib import Path

    kids = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                kids.add(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return kids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_service_is_the_only_process_it_starts(client) -> None:
    """No resource tracker (multiprocessing's spawn starts one beside its first child, for
    semaphores the service never makes): one process, and only while a pane is attached."""
    before = _children()
    key = client.attach("cl100k_base")
    assert isinstance(next_reply(client), p.Loaded)
    assert _children() - before == {client.process.pid}
    client.detach(key)
    assert _children() - before == set()
