"""Train in a child process and report back on a pipe. Qt-free (runs in the child).

Why a process: the merge loop is Python code that keeps the GIL busy for seconds. In a thread of
the GUI process every Qt-to-Python call (a paint, a model's `data()`, a timer) must win the GIL
back from it, and those waits add up: measured, 300-700 ms stalls of the GUI thread in the test
suite with the trainer on a `QThread`. In a child the merge loop holds the child's GIL; the
worker thread in the GUI process waits on the pipe without holding its own.

Protocol (child side in `serve_training`):
  <- ("progress", events.Progress)   (already rate-limited by the trainer, ~50 ms)
  <- ("finished", TrainingResult) | ("failed", message) | ("cancelled",)   exactly one, last
  -> "cancel"   (or the pipe closing: the parent is gone) sets the trainer's cancel event

The child is not a daemon (the trainer's counting pool needs children of its own) and never
outlives its parent: a closed pipe cancels the run, and the trainer terminates its pool.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokviz.training.events import Progress
    from tokviz.training.trainer import TrainOptions


@dataclass(frozen=True)
class TrainingJob:
    """What to train on and how, as the panel's form gives them: `train`'s arguments."""

    paths: tuple[str, ...]
    options: TrainOptions


def _listen(conn: Connection, cancel: threading.Event) -> None:
    """Set `cancel` on a "cancel" message or when the parent's end of the pipe closes."""
    try:
        while True:
            if conn.recv() == "cancel":
                break
    except (EOFError, OSError):
        pass
    cancel.set()


def serve_training(conn: Connection, job: TrainingJob) -> None:
    """The child's main: run `train` for `job`, send progress and one terminal message."""
    from tokviz.core.cancel import Cancelled
    from tokviz.training.events import TrainingError
    from tokviz.training.trainer import train

    cancel = threading.Event()
    threading.Thread(target=_listen, args=(conn, cancel), daemon=True, name="cancel-listener").start()

    def progress(event: Progress) -> None:
        conn.send(("progress", event))

    try:
        try:
            result = train(list(job.paths), job.options, progress=progress, cancel=cancel)
        except Cancelled:
            reply: tuple[Any, ...] = ("cancelled",)
        except TrainingError as e:
            reply = ("failed", str(e), e.skipped)
        except MemoryError:
            reply = ("failed", "out of memory: train on fewer files or ask for a smaller vocabulary")
        except Exception as e:  # a bug or an OS error ends the run with a message, not a hang
            reply = ("failed", f"{type(e).__name__}: {e}")
        else:
            reply = ("cancelled",) if cancel.is_set() else ("finished", result)
        conn.send(reply)
    except (BrokenPipeError, EOFError, OSError):
        pass  # the parent is gone: nobody to tell
