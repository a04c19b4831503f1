"""Decoding token by token, as a streaming chat does.

Naive streaming decodes each token alone with `errors="replace"`, so a character whose bytes are
split across tokens shows up as U+FFFD (Qwen: `[51461]` -> `' �'`). Buffered streaming feeds the
bytes through an incremental UTF-8 decoder that holds an incomplete character back until its last
byte arrives (`[51461, 117]` -> `' '`, then `'根'`).
"""

from __future__ import annotations

import codecs
from typing import Iterable, Iterator

from tokviz.core.tokenizer import Tokenizer


def naive_stream(tokenizer: Tokenizer, ids: Iterable[int]) -> Iterator[str]:
    """Yield each token decoded alone: what a careless chat stream prints."""
    for token_id in ids:
        yield tokenizer.token_bytes(token_id).decode("utf-8", errors="replace")


def buffered_stream(tokenizer: Tokenizer, ids: Iterable[int]) -> Iterator[str]:
    """Yield, per token, the whole characters completed so far (possibly "")."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for token_id in ids:
        yield decoder.decode(tokenizer.token_bytes(token_id))
    tail = decoder.decode(b"", final=True)
    if tail:  # bytes left incomplete at the very end
        yield tail


def decode_naive(tokenizer: Tokenizer, ids: Iterable[int]) -> str:
    """>>> decode_naive(qwen, [51461, 117])  # doctest: +SKIP
    ' ��'"""
    return "".join(naive_stream(tokenizer, ids))


def decode_buffered(tokenizer: Tokenizer, ids: Iterable[int]) -> str:
    """>>> decode_buffered(qwen, [51461, 117])  # doctest: +SKIP
    ' 根'"""
    return "".join(buffered_stream(tokenizer, ids))
