"""Decoding token by token, as a streaming chat does.

Naive streaming decodes each token alone with `errors="replace"`, so a character whose bytes are
split across tokens shows up as U+FFFD (Qwen: `[51461]` -> `' �'`). Buffered streaming holds an
incomplete character back until its last byte arrives (`[51461, 117]` -> `' '`, then `'根'`).

The buffered stream is cut from the library's own decode, never from a re-implementation of it:
each step decodes a short window of recent ids with `Tokenizer.decode` and shows what the newest
ids added to it (how `tokenizers`' `DecodeStream` and vLLM's incremental detokenizer work). So
whatever the library does, the pieces always join to exactly `tokenizer.decode(ids)`: SentencePiece's
` ⁇ ` for an unknown piece, its one U+FFFD per byte of a broken byte-fallback run, its dropped
leading `▁`, a control token that decodes to nothing.

Why the window is safe: what a library decodes for a token depends only on the tokens just before
it (the bytes of a character cut across tokens; SentencePiece's "is this the start of the text",
which drops the first piece's `▁`). The window always starts with ids that were already shown and
that decode to some text on their own, ending on a whole character; the window's decode minus
theirs is the newest ids' text, as the whole decode has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import REPLACEMENT, TokenKind


def naive_stream(tokenizer: Tokenizer, ids: Iterable[int]) -> Iterator[str]:
    """Yield each token decoded alone: what a careless chat stream prints.

    A token's bytes with `errors="replace"`; a special or unknown token as the library decodes it
    alone (sentencepiece: `<s>` -> `''`, `<unk>` -> `' ⁇ '`)."""
    for token_id in ids:
        if tokenizer.kind(token_id) in (TokenKind.SPECIAL, TokenKind.UNKNOWN):
            yield tokenizer.decode([token_id])
        else:
            yield tokenizer.token_bytes(token_id).decode("utf-8", errors="replace")


def buffered_stream(tokenizer: Tokenizer, ids: Iterable[int]) -> Iterator[str]:
    """Yield, per token, the text it completes (possibly ""), then any held-back tail; the pieces
    join to `tokenizer.decode(ids)`.

    A trailing U+FFFD run is held back (an incomplete character, or bytes the next token may still
    complete), and so is text that does not yet extend what was shown.
    """
    decode = tokenizer.decode
    window: list[int] = []  # context (ids already shown) + pending ids
    context = 0  # window[:context] is the context
    shown = ""  # the window's decoded text shown so far: the context's text and then some
    for token_id in ids:
        window.append(token_id)
        text = decode(window)
        stable = len(text.rstrip(REPLACEMENT))
        if stable <= len(shown) or not text.startswith(shown):
            yield ""
            continue
        yield text[len(shown) : stable]
        shown = text[:stable]
        if stable < len(text):
            continue
        # all of the window is shown: its pending ids become the context, when they decode to text
        # on their own (a lone `▁` or a control token does not: the library would then take the
        # next id for the start of the text and drop its `▁`)
        pending = window[context:]
        pending_text = decode(pending)
        if pending_text:
            window, context, shown = pending, len(pending), pending_text
        else:
            context = len(window)
    text = decode(window)
    if len(text) > len(shown):
        yield text[len(shown) :]


def decode_naive(tokenizer: Tokenizer, ids: Iterable[int]) -> str:
    """>>> decode_naive(qwen, [51461, 117])  # doctest: +SKIP
    ' ��'"""
    return "".join(naive_stream(tokenizer, ids))


def decode_buffered(tokenizer: Tokenizer, ids: Iterable[int]) -> str:
    """>>> decode_buffered(qwen, [51461, 117])  # doctest: +SKIP
    ' 根'"""
    return "".join(buffered_stream(tokenizer, ids))
