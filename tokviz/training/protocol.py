"""The training child's messages, and the one way each side sends and receives them.

The parent (the trainer panel's worker) talks to the child that trains (`process.serve_training`)
in frozen dataclasses of this module, pickled on a `multiprocessing` connection. Each side sends
with its own function and receives with its own, which checks that what came is a message that
side may receive (`ProtocolError` otherwise): nothing is read by position.

    parent -> child                  child -> parent
    Cancel()                         Progressed(event)          any number, rate-limited
                                     Finished(result) | Failed(message, skipped) | RunCancelled()
                                                                exactly one, last

The pipe closing also cancels the run (the parent is gone). What to train on is not a message:
the child gets it as an argument when it is spawned (`process.TrainingJob`).
"""

from __future__ import annotations

from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, TypeAlias

from tokviz.core.messages import not_a

if TYPE_CHECKING:
    from tokviz.core.walk import Skipped
    from tokviz.training.events import Progress
    from tokviz.training.trainer import TrainingResult


# -- requests (parent -> child) ---------------------------------------------------------------


@dataclass(frozen=True)
class Cancel:
    """Stop the run: the child answers `RunCancelled` (or the terminal reply already on its way)."""


# -- replies (child -> parent) ----------------------------------------------------------------


@dataclass(frozen=True)
class Progressed:
    """A trainer progress event, as the trainer rate-limits them."""

    event: Progress


@dataclass(frozen=True)
class Finished:
    """The run learned `result`: a terminal reply."""

    result: TrainingResult


@dataclass(frozen=True)
class Failed:
    """The run failed: `message` is one line for the user; `skipped` lists the files left out
    when that is why (every file binary or not UTF-8). A terminal reply."""

    message: str
    skipped: tuple[Skipped, ...] = ()


@dataclass(frozen=True)
class RunCancelled:
    """The run stopped on a `Cancel` (or the pipe closing): a terminal reply."""


Request: TypeAlias = Cancel
Reply: TypeAlias = Progressed | Finished | Failed | RunCancelled
TERMINAL = (Finished, Failed, RunCancelled)
_REPLIES = (Progressed, *TERMINAL)


def send_request(conn: Connection, request: Request) -> None:
    """Send a request to the child (the parent's side)."""
    conn.send(request)


def send_reply(conn: Connection, reply: Reply) -> None:
    """Send a reply to the parent (the child's side)."""
    conn.send(reply)


def receive_request(conn: Connection) -> Request:
    """The parent's next request (the child's side). EOFError when the pipe is closed."""
    message = conn.recv()
    if not isinstance(message, Cancel):
        raise not_a(message, "a request to the training process")
    return message


def receive_reply(conn: Connection) -> Reply:
    """The child's next reply (the parent's side). EOFError when the pipe is closed."""
    message = conn.recv()
    if not isinstance(message, _REPLIES):
        raise not_a(message, "a reply of the training process")
    return message
