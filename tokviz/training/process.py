"""Train in a child process and report back on a pipe. Qt-free (runs in the child).

Why a process: counting the corpus (and the merge loop, where it is not compiled) is Python code
that keeps the GIL busy for seconds. In a thread of the GUI process every Qt-to-Python call (a
paint, a model's `data()`, a timer) must win the GIL back from it, and those waits add up to
visible stalls of the GUI thread (they did, with the trainer on a `QThread`). In a child that work
holds the child's GIL; the worker thread in the GUI process waits on the pipe without holding its
own.

The messages are `tokviz.training.protocol`'s: `Progressed` replies, then exactly one terminal
reply (`Finished`, `Failed` or `RunCancelled`); a `Cancel` request, or the pipe closing (the
parent is gone), sets the trainer's cancel event.

The child is not a daemon (the trainer's counting pool needs children of its own) and never
outlives its parent: a closed pipe cancels the run, and the trainer terminates its pool.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING

from tokviz.core.messages import ProtocolError
from tokviz.training.protocol import (
    Failed,
    Finished,
    Progressed,
    Reply,
    RunCancelled,
    receive_request,
    send_reply,
)

if TYPE_CHECKING:
    from tokviz.training.events import Progress
    from tokviz.training.trainer import TrainOptions


@dataclass(frozen=True)
class TrainingJob:
    """What to train on and how, as the panel's form gives them: `train`'s arguments."""

    paths: tuple[str, ...]
    options: TrainOptions


class _Listener:
    """Reads the parent's requests on a thread of its own; sets `cancel` on a `Cancel`, when the
    pipe closes, or when something that is not a request comes (kept in `error`: the run then
    fails saying so, rather than going on deaf to its parent)."""

    def __init__(self, conn: Connection, cancel: threading.Event) -> None:
        self.conn, self.cancel = conn, cancel
        self.error: ProtocolError | None = None

    def start(self) -> None:
        """Listen from now on. A request already waiting (a cancel sent while the child was starting)
        is read here, so the run it stops never begins, whatever the threads' timing."""
        if self.conn.poll():
            self._listen()
        else:
            threading.Thread(target=self._listen, daemon=True, name="cancel-listener").start()

    def _listen(self) -> None:
        try:
            receive_request(self.conn)  # the one request there is: Cancel
        except ProtocolError as e:
            self.error = e
        except (EOFError, OSError):
            pass
        self.cancel.set()


def serve_training(conn: Connection, job: TrainingJob) -> None:
    """The child's main: run `train` for `job`, send progress and one terminal reply."""
    from tokviz.core.cancel import Cancelled
    from tokviz.training.events import TrainingError
    from tokviz.training.trainer import train

    cancel = threading.Event()
    listener = _Listener(conn, cancel)
    listener.start()

    def progress(event: Progress) -> None:
        send_reply(conn, Progressed(event))

    try:
        reply: Reply
        try:
            result = train(list(job.paths), job.options, progress=progress, cancel=cancel)
        except Cancelled:
            reply = RunCancelled()
        except TrainingError as e:
            reply = Failed(str(e), e.skipped)
        except MemoryError:
            reply = Failed("out of memory: train on fewer files or ask for a smaller vocabulary")
        except Exception as e:  # a bug or an OS error ends the run with a message, not a hang
            reply = Failed(f"{type(e).__name__}: {e}")
        else:
            reply = RunCancelled() if cancel.is_set() else Finished(result)
        if listener.error is not None and isinstance(reply, RunCancelled):
            reply = Failed(f"training stopped: {listener.error}")
        send_reply(conn, reply)
    except (BrokenPipeError, EOFError, OSError):
        pass  # the parent is gone: nobody to tell
