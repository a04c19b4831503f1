"""A tiny event emitter: napari's `EmitterGroup` in miniature, with no Qt.

A model announces each change through an `Event` after the state has changed, so a callback reads
the new state from the model. Callbacks run on the thread that made the change, in the order they
were connected; one that disconnects (or connects another) while the event is emitted does not
disturb that emission.

>>> seen = []
>>> changed = Event()
>>> disconnect = changed.connect(seen.append)
>>> changed.emit("a"); disconnect(); changed.emit("b"); seen
['a']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Event(Generic[T]):
    """Callbacks that each get the emitted value."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[T], object]] = []

    def connect(self, callback: Callable[[T], object]) -> Callable[[], None]:
        """Call `callback(value)` on every emission; returns a function that disconnects it."""
        self._callbacks.append(callback)
        return lambda: self.disconnect(callback)

    def disconnect(self, callback: Callable[[T], object]) -> None:
        """Stop calling `callback` (a no-op when it is not connected)."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self, value: T) -> None:
        for callback in list(self._callbacks):
            callback(value)
