"""What the protocols between tokviz's processes share: a message that is not one the receiving
side may get is a `ProtocolError` naming what came (`not_a`). Each protocol's own messages are
frozen dataclasses in its own module (`tokviz.service.protocol`, `tokviz.training.protocol`)."""

from __future__ import annotations


class ProtocolError(RuntimeError):
    """Something came down a pipe that is not a message this side may receive."""


def not_a(message: object, what: str) -> ProtocolError:
    """The error for a `message` that is not `what`, naming what came (its type, and its value
    when that is short).

    >>> raise not_a(("failed", 1), "a reply of the training process")
    Traceback (most recent call last):
    tokviz.core.messages.ProtocolError: not a reply of the training process: tuple ('failed', 1)
    """
    text = repr(message)
    return ProtocolError(f"not {what}: {type(message).__name__}" + (f" {text}" if len(text) <= 60 else ""))
