"""The panes' way to the tokenizer service, and the preparation of their results, as Qt events.

`TokenizerService` is this process's one `ServiceClient`: a pane attaches with a handler, sends
requests from the GUI thread (they never wait for an encode), and gets each reply that names it,
and every `Died`, as a call of its handler on the GUI thread (the reader thread's signal is queued).

`Preparer` turns encodings into pane results off the GUI thread, one at a time, each on a `Worker`:
preparing is Python code holding the GIL, and one such thread is all the GUI thread should compete
with. A pane's newer preparation replaces its waiting one and aborts its running one.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, QMetaObject, QObject, Signal, Slot
from shiboken6 import isValid

from tokviz.core.heap import trim_heap
from tokviz.gui.work.worker import Worker
from tokviz.service.client import Died, Event, ServiceClient


class TokenizerService(QObject):
    """See the module docstring."""

    _replied = Signal(object)  # emitted by the client's reader thread

    def __init__(self) -> None:
        super().__init__()
        self._handlers: dict[int, Callable[[Event], None]] = {}
        self._replied.connect(self._dispatch)
        self.client = ServiceClient(self._replied.emit)

    def attach(self, spec: str, handler: Callable[[Event], None]) -> int:
        """A pane of vocabulary `spec`: its key; `handler` gets its replies (`Loaded` first)."""
        key = self.client.attach(spec)
        self._handlers[key] = handler  # before any reply is dispatched: they come as events
        return key

    def detach(self, key: int) -> None:
        """The pane of `key` is gone: no more replies for it."""
        self._handlers.pop(key, None)
        self.client.detach(key)

    @Slot(object)
    def _dispatch(self, event: Event) -> None:
        if isinstance(event, Died):
            for handler in list(self._handlers.values()):
                handler(event)
            return
        for_pane = self._handlers.get(event.key)
        if for_pane is not None:
            for_pane(event)


@functools.cache
def tokenizer_service() -> TokenizerService:
    """This process's tokenizer service (made with the first pane; its process stops with the
    last pane, or when the application quits)."""
    service = TokenizerService()
    app = QCoreApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(service.client.stop)
    return service


@dataclass
class _Preparation:
    owner: QObject
    work: Callable[[], Any]
    done: Callable[[Any], None]
    failed: Callable[[BaseException], None]


class Preparer(QObject):
    """See the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: deque[_Preparation] = deque()
        self._running: tuple[QObject, Worker] | None = None
        self._owner_watch: QMetaObject.Connection | None = None  # the running one's owner going

    def submit(self, owner: QObject, work: Callable[[], Any], done: Callable[[Any], None],
               failed: Callable[[BaseException], None]) -> None:
        """Run `work()` off the GUI thread; `done(value)` or `failed(error)` follows on the GUI
        thread, unless a newer preparation of `owner` comes first or `owner` is destroyed."""
        self.forget(owner)
        self._waiting.append(_Preparation(owner, work, done, failed))
        self._next()

    def forget(self, owner: QObject) -> None:
        """Drop `owner`'s waiting preparation and abort its running one."""
        self._waiting = deque(w for w in self._waiting if w.owner is not owner)
        if self._running is not None and self._running[0] is owner:
            self._running[1].abort()

    def _next(self) -> None:
        if self._running is not None or not self._waiting:
            return
        job = self._waiting.popleft()
        if not isValid(job.owner):  # the pane went while its preparation waited
            self._next()
            return
        work = job.work
        # owned here, not by the pane: a worker whose owner is destroyed stops silently, without
        # `finished`, and waits for its thread on the GUI thread. A pane that goes aborts its run
        # instead; the run ends on its own, and the next one starts.
        worker = Worker(lambda _job: work(), name="tokviz-cells")
        worker.returned.connect(job.done)
        worker.errored.connect(job.failed)
        worker.finished.connect(self._finished)
        self._running = (job.owner, worker)
        self._owner_watch = job.owner.destroyed.connect(functools.partial(self._owner_gone, job.owner))
        worker.start()

    def _owner_gone(self, owner: QObject, *_destroyed: object) -> None:
        self.forget(owner)

    @Slot()
    def _finished(self) -> None:
        watch, self._owner_watch = self._owner_watch, None
        if watch is not None:
            QObject.disconnect(watch)  # a no-op when the owner is already gone
        self._running = None
        trim_heap()  # a preparation's temporaries, and the buffers its encoding was received in, are free
        self._next()

    @property
    def busy(self) -> bool:
        """A preparation runs or waits."""
        return self._running is not None or bool(self._waiting)


@functools.cache
def preparer() -> Preparer:
    """This process's one `Preparer`."""
    return Preparer()
