"""Tokenize in a child process and hand the result back as columns. Qt-free (runs in the child).

Why a process: the core builds a 1 MB text's ~300k tokens in C-level loops that hold the GIL
for 200-400 ms at a stretch, and a thread in the GUI process would freeze the window that long
(measured: 1-1.5 s stalls with four panes). In a child process those loops hold the child's GIL.
What comes back is a handful of numpy arrays and one entry per distinct (id, bytes): cheap to
pickle, and `TokenColumns` rebuilds any `Token` on demand, equal to the core's own.

One process serves every pane of a window (`serve`): each vocabulary is loaded once (two panes of
one spec share it), the interpreter, numpy and the catalog are paid for once instead of per pane
(~40 MB each), and four panes no longer start four busy processes on a two-core machine. Every
request names its pane's `key`; replies carry it back.

Protocol on a `multiprocessing` pipe (child side in `serve`):
  -> ("load", key, spec)                       <- ("loaded", key, TokenizerInfo) | ("load_failed", key, message)
  -> ("encode", key, gen, text, policy, adds)  <- ("done", key, gen, EncodedColumns) | ("failed", key, gen, message)
                                                  | ("superseded", key, gen)
  -> ("stream", key, gen, ids)                 <- ("stream", key, gen, naive, buffered)
  -> ("cancel", key)                           (no reply: the encode at hand for key is not wanted)
  -> ("drop", key)                             (no reply: the pane is gone; its vocabulary is
                                                  released once no pane uses it)
  -> None (stop)
A thread of the child reads requests as they come, so a sender never waits for an encode to end:
an encode for a key with a newer encode waiting is answered `superseded` without being done (or,
when the newer one came during the encode, instead of sending the stale columns), and None or the
pipe closing ends the process at once, even in the middle of an encode.
"""

from __future__ import annotations

import pickle
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any, NoReturn

import numpy as np

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


def compact(cols: EncodedColumns) -> EncodedColumns:
    """`cols` with its id and offset columns as int32 where every value fits (any text under
    2 GB): half the bytes to send, to copy and to keep per pane. Values are unchanged."""
    limit = np.iinfo(np.int32).max
    fits = cols.n_bytes < limit and (not len(cols.ids) or int(cols.ids.max()) < limit)
    if not fits:
        return cols
    names = ("ids", "byte_starts", "byte_ends", "starts", "ends")
    small = {name: getattr(cols, name).astype(np.int32) for name in names}
    return replace(cols, **small)


def send_reply(conn: Connection, reply: tuple[Any, ...]) -> None:
    """Send a reply with its arrays out of band (pickle protocol 5): the pickle holds no array
    data, and each array goes down the pipe as its own message, straight from its memory.
    `receive_reply` is the other end."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(reply, protocol=5, buffer_callback=buffers.append)
    conn.send_bytes(len(buffers).to_bytes(4, "little") + head)
    for buffer in buffers:
        conn.send_bytes(buffer.raw())


def receive_reply(conn: Connection) -> Any:
    """A reply `send_reply` sent. Its arrays are read-only views of the received bytes: unpickling
    copies no array data (a 10 MB text's 150 MB of columns, copied while holding the GIL, froze
    the window for half a second when the result landed)."""
    head = conn.recv_bytes()
    count = int.from_bytes(head[:4], "little")
    buffers = [conn.recv_bytes() for _ in range(count)]
    return pickle.loads(memoryview(head)[4:], buffers=buffers)


def trim_heap() -> None:
    """Give the memory malloc holds free back to the system (glibc's `malloc_trim`; nothing
    elsewhere). A 1 MB encode's temporaries leave tens of MB free but resident in the heap's
    middle, which glibc returns only when asked: measured 273 -> 232 MiB for a process with four
    vocabularies after four 1 MB encodes."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
                pass
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None


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


class _Requests:
    """The requests read so far, in order; filled by the child's reader thread."""

    def __init__(self) -> None:
        self._items: list[tuple[Any, ...]] = []
        self._cond = threading.Condition()

    def put(self, message: tuple[Any, ...]) -> None:
        with self._cond:
            self._items.append(message)
            self._cond.notify()

    def get(self) -> tuple[Any, ...]:
        """The first request that is not a load, else the first load: a pane that has its
        vocabulary is answered before the next one is loaded (loading four vocabularies in one
        process takes seconds; a pane's own requests only follow its load's reply, so each
        pane's order holds). A drop takes its pane's waiting load with it."""
        with self._cond:
            while not self._items:
                self._cond.wait()
            at = next((i for i, m in enumerate(self._items) if m[0] != "load"), 0)
            message = self._items.pop(at)
            if message[0] == "drop":
                self._items = [m for m in self._items if not (m[0] == "load" and m[1] == message[1])]
            return message

    def newer_encode(self, key: int) -> bool:
        """An encode or a cancel for `key` is waiting (the one at hand is superseded)."""
        with self._cond:
            return any(m[0] in ("encode", "cancel") and m[1] == key for m in self._items)


def _read(conn: Connection, requests: _Requests) -> None:
    """The reader thread: every request into `requests`; None or a closed pipe ends the process."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            message = None
        if message is None:
            _exit_now(conn)
        requests.put(message)


def serve(conn: Connection) -> None:
    """The child process: answer requests for any number of panes until told to stop."""
    import gc

    # tokens and columns hold no reference cycles; the collector's full passes over 300k live
    # tokens would double the time of an encode (measured: columns 1.4 s with it, 0.3 s without)
    gc.disable()
    from tokviz.core.catalog import load
    from tokviz.core.decoding import buffered_stream, naive_stream

    requests = _Requests()
    threading.Thread(target=_read, args=(conn, requests), daemon=True, name="requests").start()
    loaded: dict[str, Tokenizer] = {}  # spec -> its vocabulary, while a pane uses it
    spec_of: dict[int, str] = {}  # key -> spec
    while True:
        message = requests.get()
        kind, key = message[0], message[1]
        reply: tuple[Any, ...] | None
        if kind == "load":
            spec = message[2]
            try:
                if spec not in loaded:
                    loaded[spec] = load(spec)
                spec_of[key] = spec
                reply = ("loaded", key, info_of(loaded[spec]))
            except TokenizerError as e:
                reply = ("load_failed", key, str(e))
            except Exception as e:  # a backend bug must not hang the pane
                reply = ("load_failed", key, f"cannot load {spec}: {type(e).__name__}: {e}")
        elif kind == "cancel":  # for an encode already answered: nothing to do
            reply = None
        elif kind == "drop":
            spec = spec_of.pop(key, None)
            if spec is not None and spec not in spec_of.values():
                del loaded[spec]
            reply = None
        elif key not in spec_of:  # a request of a pane whose vocabulary did not load
            reply = ("failed", key, message[2], "the tokenizer is not loaded")
        elif kind == "encode":
            _, _, gen, text, policy, model_adds = message
            reply = ("superseded", key, gen) if requests.newer_encode(key) else None
            if reply is None:
                try:
                    cols = compact(encode(loaded[spec_of[key]], text, policy, model_adds=model_adds))
                    reply = ("superseded", key, gen) if requests.newer_encode(key) else ("done", key, gen, cols)
                    del cols
                except ValueError as e:  # disallowed special token: tiktoken's message names the way out
                    reply = ("failed", key, gen, str(e))
                except Exception as e:
                    reply = ("failed", key, gen, f"{type(e).__name__}: {e}")
        else:
            _, _, gen, ids = message
            tokenizer = loaded[spec_of[key]]
            reply = ("stream", key, gen, list(naive_stream(tokenizer, ids)), list(buffered_stream(tokenizer, ids)))
        del message
        if reply is not None:
            send_reply(conn, reply)
        del reply
        gc.collect()  # cheap now that the request's tokens are gone; keeps the child from growing
        if kind == "encode":
            trim_heap()
