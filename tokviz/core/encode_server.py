"""Tokenize in a child process and hand the result back as columns. Qt-free (runs in the child).

Why a process: the core builds a 1 MB text's ~300k `Token`s in C-level loops that hold the GIL
for 200-400 ms at a stretch, and a thread in the GUI process would freeze the window that long
(measured: 1-1.5 s stalls with four panes). In a child process those loops hold the child's GIL.
What comes back is a handful of numpy arrays and one entry per distinct (id, bytes): cheap to
pickle, and `TokenColumns` rebuilds any `Token` on demand, equal to the core's own.

Protocol on a `multiprocessing` pipe (child side in `serve`):
  -> ("encode", gen, text, policy)      <- ("done", gen, EncodedColumns) | ("failed", gen, message)
  -> ("stream", gen, ids)               <- ("stream", gen, naive, buffered)
  -> None (stop)
The child first sends ("loaded", TokenizerInfo) or ("load_failed", message).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from tokviz.core.columns import EncodedColumns, with_tokens_around
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer, TokenizerError


@dataclass(frozen=True)
class TokenizerInfo:
    """What the GUI needs to know about a tokenizer that lives in another process."""

    name: str
    family: str
    vocab_size: int
    special_tokens: Mapping[str, int]
    description: str
    #: the pieces the model's own tokenizer adds before and after a text (`<s>`), if any
    added_before: tuple[str, ...] = ()
    added_after: tuple[str, ...] = ()

    def describe(self) -> str:
        return self.description

    @property
    def adds_specials(self) -> bool:
        return bool(self.added_before or self.added_after)


def info_of(tokenizer: Tokenizer) -> TokenizerInfo:
    before, after = tokenizer.added_tokens("a")
    return TokenizerInfo(
        tokenizer.name, tokenizer.family, tokenizer.vocab_size, dict(tokenizer.special_tokens),
        tokenizer.describe(), tuple(t.piece for t in before), tuple(t.piece for t in after),
    )


def encode(tokenizer: Tokenizer, text: str, policy: SpecialPolicy, *, model_adds: bool = False) -> EncodedColumns:
    """The columns of `text`; with `model_adds`, "as the model sees it": with the BOS/EOS the
    model's own tokenizer adds (`Tokenizer.added_around`)."""
    import time

    t0 = time.perf_counter()
    cols = tokenizer.encode_columns(
        text, allowed_special=policy.allowed_special, disallowed_special=policy.disallowed_special
    )
    if model_adds:
        cols = with_tokens_around(cols, *tokenizer.added_tokens(text))
    cols.seconds = time.perf_counter() - t0
    return cols


def _lower_priority() -> None:
    """Let the window's own process win the CPU: four busy tokenizer processes on a two-core
    machine would otherwise starve the GUI thread for a scheduler slice at a time."""
    try:
        import os

        os.nice(10)
    except (AttributeError, OSError):  # no nice() on this platform, or not allowed
        pass


def _exit_now(conn: Connection) -> NoReturn:
    """End the child at once: the interpreter's teardown of a loaded vocabulary (numpy, Rust
    tokenizers, module dicts) took 0.2-0.4 s per pane on a loaded machine, and the window's close
    waited for it. Nothing here needs flushing but the standard streams."""
    import os
    import sys

    conn.close()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(0)


def serve(conn: Connection, spec: str) -> None:
    """The child process: load `spec`, then answer requests until told to stop."""
    import gc

    # tokens and columns hold no reference cycles; the collector's full passes over 300k live
    # tokens would double the time of an encode (measured: columns 1.4 s with it, 0.3 s without)
    gc.disable()
    _lower_priority()
    from tokviz.core.catalog import load
    from tokviz.core.decoding import buffered_stream, naive_stream

    try:
        tokenizer = load(spec)
    except TokenizerError as e:
        conn.send(("load_failed", str(e)))
        return
    except Exception as e:  # a backend bug must not hang the pane
        conn.send(("load_failed", f"cannot load {spec}: {type(e).__name__}: {e}"))
        return
    conn.send(("loaded", info_of(tokenizer)))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            _exit_now(conn)
        if message is None:
            _exit_now(conn)
        if message[0] == "encode":
            _, gen, text, policy, *flags = message
            try:
                reply: tuple[Any, ...] = ("done", gen, encode(tokenizer, text, policy, model_adds=bool(flags and flags[0])))
            except ValueError as e:  # disallowed special token: tiktoken's message names the way out
                reply = ("failed", gen, str(e))
            except Exception as e:
                reply = ("failed", gen, f"{type(e).__name__}: {e}")
        else:
            _, gen, ids = message
            reply = ("stream", gen, list(naive_stream(tokenizer, ids)), list(buffered_stream(tokenizer, ids)))
        conn.send(reply)
        del reply
        gc.collect()  # cheap now that the request's tokens are gone; keeps the child from growing
