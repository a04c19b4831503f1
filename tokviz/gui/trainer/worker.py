"""Training and re-cutting off the GUI thread, as work for `Worker`s.

`train_in_child(job, training=...)` runs `tokviz.training.trainer.train` in a child process
(`tokviz.training.process`: the merge loop would otherwise starve the GUI thread of the GIL) through
`ChildProcess`, and waits for its messages on the worker's thread. On a `Worker` the run ends in
exactly one of `returned(TrainingResult)`, `errored` (`failure_message` says it in one line) or
`aborted`. The messages are `tokviz.training.protocol`'s typed requests and replies. An abort wakes
the waiting worker, which passes it on to the child as a `Cancel` request; the trainer stops at its
next cancel check and the worker waits for its answer (up to `CANCEL_GRACE_S`) so the child can end
its pool.

Progress is yielded at most every `THROTTLE_S` as a `TrainerProgress`: the newest counters plus
every merge learned since the previous one, so a live table loses nothing. The last merges are
flushed before the result.

`serve_recut(job, inbox=...)` counts a text's tokens with only the first k merges for the
trainer's slider (tiktoken releases the GIL while it encodes); the newest request of each kind
wins and counts go before curves.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, assert_never, cast

from tokviz.core.cancel import Cancelled
from tokviz.gui.work.child import ChildDied, ChildProcess
from tokviz.gui.work.inbox import Inbox
from tokviz.gui.work.worker import Job, Throttle
from tokviz.training.curve import default_ks
from tokviz.training.events import Progress, TrainingError
from tokviz.training.process import TrainingJob, serve_training
from tokviz.training.protocol import (
    Cancel,
    Failed,
    Finished,
    Progressed,
    Reply,
    RunCancelled,
    receive_reply,
    send_request,
)
from tokviz.training.trainer import TrainingResult
from tokviz.training.vocabfile import trained_tokenizer

__all__ = [
    "Counted", "CurvePoints", "RecutFailed", "TrainerProgress", "TrainingJob", "failure_message",
    "recut_inbox", "serve_recut", "train_in_child",
]

THROTTLE_S = 0.05  # at most one progress report per 50 ms (a phase change and the last flush excepted)
CANCEL_GRACE_S = 5.0  # a cancelled child that has not answered by then is terminated


@dataclass(frozen=True)
class TrainerProgress(Progress):
    """The trainer's progress event, plus the curve points since the last report."""

    curve_points: tuple[tuple[int, int], ...] = ()  # (merges learned, corpus tokens)


@dataclass
class _Batch:
    merges: list[tuple[int, int, int]] = field(default_factory=list)
    points: list[tuple[int, int]] = field(default_factory=list)
    latest: Progress | None = None


class ProgressBatcher:
    """Gathers the trainer's events into at most one `TrainerProgress` per `THROTTLE_S`."""

    def __init__(self) -> None:
        self._batch = _Batch()
        self._throttle = Throttle(THROTTLE_S)

    def add(self, event: Progress) -> Iterator[TrainerProgress]:
        latest = self._batch.latest
        new_phase = latest is not None and latest.phase != event.phase
        if new_phase:
            yield from self.flush()  # the previous phase's last counters, then the new phase at once
        batch = self._batch
        batch.merges.extend(event.new_merges)
        if event.corpus_tokens is not None:
            batch.points.append((event.done, event.corpus_tokens))
        batch.latest = event
        if self._throttle.ready(force=new_phase):
            yield from self.flush()

    def flush(self) -> Iterator[TrainerProgress]:
        batch, event = self._batch, self._batch.latest
        if event is None:
            return
        self._batch = _Batch()
        yield TrainerProgress(
            event.phase, event.done, event.total, event.rate, event.eta, event.files_read,
            event.files_skipped, event.bytes_read, tuple(batch.merges), event.corpus_tokens,
            tuple(batch.points),
        )


def train_in_child(job: Job, *, training: TrainingJob) -> Generator[TrainerProgress, None, TrainingResult]:
    """Train in a child process; yield progress, return the result (see the module docstring)."""
    batcher = ProgressBatcher()
    # not a daemon: the trainer's counting pool needs children of its own
    child = ChildProcess(serve_training, training, what="training", name=f"tokviz-train-{training.options.name}",
                         daemon=False, grace_s=2.0, recv=receive_reply, send=send_request)
    with child:
        while True:
            message: Reply = child.receive(job, cancel=Cancel(), grace_s=CANCEL_GRACE_S)
            if isinstance(message, Progressed):
                if not job.aborted:  # cancelled: wait quietly for the child's answer
                    yield from batcher.add(message.event)
            elif isinstance(message, Finished):
                yield from batcher.flush()
                return message.result
            elif isinstance(message, Failed):
                raise TrainingError(message.message, skipped=message.skipped)
            elif isinstance(message, RunCancelled):
                raise Cancelled("training cancelled")
            else:
                assert_never(message)


def failure_message(error: BaseException) -> str:
    """The one line a failed run shows."""
    if isinstance(error, (TrainingError, ChildDied)):
        return str(error)
    return f"cannot run the trainer: {type(error).__name__}: {error}"


# -- re-cutting with the first k merges ------------------------------------------------------------


@dataclass(frozen=True)
class Counted:
    gen: int
    k: int
    tokens: int


@dataclass(frozen=True)
class CurvePoints:
    gen: int
    ks: list[int]
    counts: list[int]


@dataclass(frozen=True)
class RecutFailed:
    gen: int
    message: str


def recut_inbox() -> Inbox:
    return Inbox(("count", "curve"))


class _Encodings:
    """The encoding with the first k merges of one result, cached per k."""

    def __init__(self) -> None:
        self._cache: dict[int, object] = {}
        self._result_id: int | None = None

    def count(self, result: TrainingResult, text: str, k: int) -> int:
        """Tokens of `text` with the first k merges (special-token text counted as plain text)."""
        k = max(0, min(int(k), len(result.merges)))
        if self._result_id != id(result):
            self._cache.clear()
            self._result_id = id(result)
        enc = self._cache.get(k)
        if enc is None:
            if len(self._cache) > 64:
                self._cache.clear()
            enc = self._cache[k] = trained_tokenizer(result, num_merges=k).encoding
        return len(enc.encode_ordinary(text))  # type: ignore[attr-defined]


def serve_recut(job: Job, *, inbox: Inbox) -> Generator[object, None, None]:
    """Answer count and curve requests until aborted: yields `Counted`, `CurvePoints`, `RecutFailed`."""
    encodings = _Encodings()
    while True:
        kind, message = inbox.get(job)
        request = cast(tuple[Any, ...], message)  # (gen, result, text[, k]), as `RecutBox` puts it
        gen = request[0]
        try:
            if kind == "count":
                _, result, text, k = request
                yield Counted(gen, k, encodings.count(result, text, k))
                continue
            _, result, text = request
            ks = default_ks(len(result.merges), 32)
            counts = []
            for k in ks:
                job.check()
                if inbox.pending("curve"):  # a newer result or text: this curve is stale
                    break
                counts.append(encodings.count(result, text, k))
                # Hand the GIL to the GUI thread between points. Building an encoding with k merges is
                # Python that holds the GIL; without a release here the GUI thread gets it back only
                # when the interpreter forces a switch, once per switch interval. It has to be a
                # sleep of some length: `sleep(0)` or a yield releases the GIL but this thread takes
                # it straight back before a waiting thread has woken. Not a poll: nothing is waited for.
                time.sleep(0.002)
            else:
                yield CurvePoints(gen, ks, counts)
        except Cancelled:
            raise
        except Exception as e:  # noqa: BLE001 (a message under the slider)
            yield RecutFailed(gen, f"{type(e).__name__}: {e}")
