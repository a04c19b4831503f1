"""The training child's protocol: typed messages, checked on receipt, one terminal reply per run."""

from __future__ import annotations

import multiprocessing
import random
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from tests.training.texts import TRAINING
from tokviz.core.messages import ProtocolError
from tokviz.training.process import TrainingJob, serve_training
from tokviz.training.protocol import (
    TERMINAL,
    Cancel,
    Failed,
    Finished,
    Progressed,
    Reply,
    RunCancelled,
    receive_reply,
    receive_request,
    send_reply,
    send_request,
)
from tokviz.training.trainer import TrainOptions

WAIT_S = 120  # a generous bound on a spawned child's answer, not a timing


@contextmanager
def training_child(job: TrainingJob, *waiting: object) -> Iterator[Connection]:
    """`serve_training` in a spawned child, as the trainer panel's worker runs it; the parent's end.

    `waiting` messages are sent before the child starts: they wait in the pipe for it."""
    ctx = multiprocessing.get_context("spawn")
    conn, child_conn = ctx.Pipe()
    for message in waiting:
        if isinstance(message, Cancel):
            send_request(conn, message)
        else:
            conn.send(message)
    process = ctx.Process(target=serve_training, args=(child_conn, job), daemon=False)
    process.start()
    child_conn.close()
    try:
        yield conn
    finally:
        conn.close()
        process.join(WAIT_S)
        assert process.exitcode == 0


def next_reply(conn: Connection) -> Reply:
    assert conn.poll(WAIT_S), "the training child did not answer"
    return receive_reply(conn)


def replies_to_the_end(conn: Connection, first: list[Reply] | None = None) -> list[Reply]:
    """Every reply up to the terminal one; then check that nothing follows it."""
    replies = list(first or [])
    while not replies or not isinstance(replies[-1], TERMINAL):
        replies.append(next_reply(conn))
    assert conn.poll(WAIT_S)  # the child ends and its end of the pipe closes: nothing after the terminal reply
    with pytest.raises(EOFError):
        conn.recv()
    return replies


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, text in enumerate(TRAINING):
        (folder / f"doc{i}.txt").write_text(text * 2, encoding="utf-8")
    return folder


def test_a_run_sends_progress_then_its_result_last(corpus: Path) -> None:
    with training_child(TrainingJob((str(corpus),), TrainOptions(vocab_size=300))) as conn:
        replies = replies_to_the_end(conn)
    *progress, last = replies
    assert progress and all(isinstance(r, Progressed) for r in progress)
    assert isinstance(last, Finished) and last.result.vocab_size == 300
    events = [r.event for r in progress if isinstance(r, Progressed)]
    assert [e.phase for e in events][-1] == "merging"
    learned = [m for e in events for m in e.new_merges]
    assert learned == last.result.merges  # the live merges are the result's, each once, in order


def test_a_bad_input_fails_with_the_files_left_out(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"\x00\x01binary")
    with training_child(TrainingJob((str(tmp_path),), TrainOptions(vocab_size=300))) as conn:
        last = replies_to_the_end(conn)[-1]
    assert isinstance(last, Failed) and "no readable text" in last.message
    assert [s.path for s in last.skipped] == [str(tmp_path / "a.bin")]


@pytest.fixture
def long_job(tmp_path: Path) -> TrainingJob:
    """A run with many merges to learn."""
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghij한글") for _ in range(rng.randint(3, 12))) for _ in range(40000)]
    (tmp_path / "words.txt").write_text(" ".join(words), encoding="utf-8")
    return TrainingJob((str(tmp_path / "words.txt"),), TrainOptions(vocab_size=256 + 20000, min_frequency=1))


def until_merging(conn: Connection) -> list[Reply]:
    """The replies up to the first merging progress (driven by the run's own progress, no timer)."""
    seen: list[Reply] = []
    while not seen or not (isinstance(seen[-1], Progressed) and seen[-1].event.phase == "merging"):
        seen.append(next_reply(conn))
    return seen


def test_a_cancel_waiting_when_the_child_starts_stops_the_run_before_it_begins(long_job: TrainingJob) -> None:
    with training_child(long_job, Cancel()) as conn:
        assert replies_to_the_end(conn) == [RunCancelled()]


def test_a_cancel_during_the_run_gets_exactly_one_terminal_reply(long_job: TrainingJob) -> None:
    """The cancel races the run's end (the merge loop may finish first): either way, one answer."""
    with training_child(long_job) as conn:
        seen = until_merging(conn)
        send_request(conn, Cancel())
        replies = replies_to_the_end(conn, seen)
    assert isinstance(replies[-1], (RunCancelled, Finished))
    assert sum(isinstance(r, TERMINAL) for r in replies) == 1


def test_a_message_that_is_not_a_request_fails_the_run_saying_so(long_job: TrainingJob) -> None:
    with training_child(long_job, "cancel") as conn:  # the old positional protocol: not a request any more
        replies = replies_to_the_end(conn)
    assert replies == [Failed("training stopped: not a request to the training process: str 'cancel'")]


def test_each_side_receives_only_its_own_messages() -> None:
    a, b = multiprocessing.Pipe()
    with a, b:
        send_request(a, Cancel())
        assert receive_request(b) == Cancel()
        send_reply(a, RunCancelled())
        assert receive_reply(b) == RunCancelled()
        a.send(("failed", "a message", ()))
        with pytest.raises(ProtocolError, match=r"^not a reply of the training process: tuple \('failed'"):
            receive_reply(b)
        send_reply(a, RunCancelled())
        with pytest.raises(ProtocolError, match="^not a request to the training process: RunCancelled"):
            receive_request(b)
        send_request(a, Cancel())
        with pytest.raises(ProtocolError, match="^not a reply of the training process: Cancel"):
            receive_reply(b)
