"""The tokenizer service: a child process that loads vocabularies and encodes texts for every pane
of a window, answering the requests of `tokviz.service.protocol`. Qt-free (it runs in the child).

Why a process: a long text's encode holds the GIL for long stretches (the libraries' C loops and
the columns built around them); a thread of the window's process would freeze the window that long.

One process serves every pane: each vocabulary is loaded once, and four panes do not start four
busy processes. A reader thread takes requests as they come, so an encode whose pane has a newer
encode (or a cancel) waiting is answered `Superseded` instead of being done or sent, and `Stop` or
the pipe closing ends the process at once. Encodes of different panes run side by side on encode
threads (the libraries release the GIL); a vocabulary is never used by two threads at once, and a
pane's requests stay in order. Loads, drops and streams run on the serving loop.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import NoReturn

from tokviz.core.encoding import Encoding
from tokviz.core.heap import limit_arenas, trim_heap
from tokviz.core.stream import encode_whole
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer, TokenizerError
from tokviz.service import protocol as p


def encode(tokenizer: Tokenizer, text: str, policy: SpecialPolicy, *, model_adds: bool = False) -> Encoding:
    """The encoding of `text`; with `model_adds`, "as the model sees it": with the BOS/EOS the
    model's own tokenizer adds (`Tokenizer.added_tokens`)."""
    t0 = time.perf_counter()
    enc = encode_whole(tokenizer, text, allowed_special=policy.allowed_special,
                       disallowed_special=policy.disallowed_special)
    if model_adds:
        enc = enc.around(*tokenizer.added_tokens(text))
    return replace(enc, seconds=time.perf_counter() - t0)


def _exit_now(conn: Connection) -> NoReturn:
    """End the process at once: the interpreter's teardown of loaded vocabularies takes long, and
    the window's close would wait for it. Only the standard streams need flushing."""
    conn.close()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()
    os._exit(0)


class _Requests:
    """The requests read so far, in order: filled by the reader thread, handed out by `get` to the
    serving loop, which gives encodes to `threads` encode threads (`hold` / `done`)."""

    def __init__(self, threads: int = 1) -> None:
        self._items: list[p.KeyedRequest] = []
        self._cond = threading.Condition()
        #: when the newest request of each pane came (`perf_counter`, the window's time line too)
        self.arrived: dict[int, float] = {}
        self._busy: set[tuple[str, object]] = set()  # ("key", k) and ("spec", s) of encodes at hand
        self._free = threads  # encode threads with nothing to do

    def put(self, *messages: p.KeyedRequest) -> None:
        """Requests that came together: `get` sees them all at once, so the costliest goes first."""
        with self._cond:
            now = time.perf_counter()
            for message in messages:
                self._items.append(message)
                self.arrived[message.key] = now
            self._cond.notify()

    def get(self, spec_of: Mapping[int, str] | None = None,
            cost: Callable[[p.Encode], float] | None = None) -> p.KeyedRequest:
        """The next request that may go, waiting for one.

        Only a pane's first waiting request may go (a drop always may, and takes its pane's
        waiting load with it); none of a pane whose encode is at hand (its cancel and next encode
        wait, so that encode sees them and is superseded); none that uses a vocabulary another
        pane's encode uses; no encode while every encode thread works. Of those, the first that
        is not a load goes (a pane with its vocabulary is answered before the next is loaded);
        if it is an encode, the encode of the highest `cost` goes instead, so the panes finish
        together rather than one slow vocabulary starting last."""
        spec_of = spec_of or {}
        with self._cond:
            ready = self._cond.wait_for(
                lambda: [i for i in self._first_of_each_key() if self._may_go(self._items[i], spec_of)])
            at = next((i for i in ready if not isinstance(self._items[i], p.Load)), ready[0])
            if isinstance(self._items[at], p.Encode) and cost is not None:
                encodes = [i for i in ready if isinstance(self._items[i], p.Encode)]
                at = max(encodes, key=lambda i: (cost(self._items[i]), -i))  # type: ignore[arg-type]
            message = self._items.pop(at)
            if isinstance(message, p.Drop):
                self._items = [m for m in self._items if not (isinstance(m, p.Load) and m.key == message.key)]
            return message

    def _first_of_each_key(self) -> list[int]:
        """The indices, in order, of the requests no earlier request of their pane waits before."""
        seen: set[int] = set()
        first = []
        for i, m in enumerate(self._items):
            if isinstance(m, p.Drop) or m.key not in seen:
                first.append(i)
            seen.add(m.key)
        return first

    def _may_go(self, message: p.KeyedRequest, spec_of: Mapping[int, str]) -> bool:
        if ("key", message.key) in self._busy or (isinstance(message, p.Encode) and not self._free):
            return False
        spec = message.spec if isinstance(message, p.Load) else spec_of.get(message.key)
        return not (isinstance(message, (p.Load, p.Encode, p.Stream)) and ("spec", spec) in self._busy)

    def hold(self, key: int, spec: str) -> None:
        """An encode of `key` with `spec`'s vocabulary goes to an encode thread."""
        with self._cond:
            self._busy.update((("key", key), ("spec", spec)))
            self._free -= 1

    def done(self, key: int, spec: str) -> None:
        """The encode `hold` announced is answered: the pane's next requests may go."""
        with self._cond:
            self._busy.difference_update((("key", key), ("spec", spec)))
            self._free += 1
            self._cond.notify_all()

    def newer_encode(self, key: int) -> bool:
        """An encode or a cancel for `key` is waiting (the one at hand is superseded)."""
        with self._cond:
            return any(isinstance(m, (p.Encode, p.Cancel)) and m.key == key for m in self._items)


class _LastText:
    """The last text the window sent, kept as UTF-8 and decoded once for the encodes that name it.
    Once an encode of it is done (`forget`), the str lives only as long as a waiting request holds
    it (a str of CJK text is a third larger than its UTF-8)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = p.Text(-1, b"")
        self._text: str | None = None

    def put(self, message: p.Text) -> None:
        with self._lock:
            self._last, self._text = message, None

    def get(self, number: int) -> str | None:
        """The text of message `number`; None when it is not the last one."""
        with self._lock:
            if number != self._last.number:
                return None
            if self._text is None:
                self._text = self._last.text()
            return self._text

    def forget(self, text: str) -> None:
        """An encode of `text` is done: let go of it, if it is the last text's str."""
        with self._lock:
            if self._text is text:
                self._text = None


#: after an encode, how long the reader waits for the next request before handing over what it
#: has, and how long at most it gathers (a keystroke's encodes wait this much more)
BURST_GAP_S = 0.01
BURST_MAX_S = 0.05


def _read(conn: Connection, requests: _Requests, texts: _LastText) -> None:
    """The reader thread: every request into `requests`, until `Stop` or the pipe closing."""
    while True:
        requests.put(*_burst(conn, texts))


def _burst(conn: Connection, texts: _LastText, *, gap_s: float = BURST_GAP_S,
           max_s: float = BURST_MAX_S) -> list[p.KeyedRequest]:
    """The next request and, when it is an encode, the requests that follow it less than `gap_s`
    apart (for `max_s` at most); a `Text` goes to `texts`, not into the list. The panes send their
    encodes of a new text within a few ms; handed over together, the costliest starts first."""
    first = _received(conn, texts)
    batch = [first]
    if isinstance(first, p.Encode):
        until = time.perf_counter() + max_s
        while time.perf_counter() < until and conn.poll(gap_s):
            batch.append(_received(conn, texts))
    return [m for m in batch if m is not None]


def _received(conn: Connection, texts: _LastText) -> p.KeyedRequest | None:
    """The next request, an encode's `TextRef` to the last text replaced by it; None for a `Text`
    (kept in `texts`). `Stop` or the pipe closing ends the process."""
    try:
        message = p.receive_request(conn)
    except (EOFError, OSError):
        _exit_now(conn)
    if isinstance(message, p.Stop):
        _exit_now(conn)
    if isinstance(message, p.Text):
        texts.put(message)
        return None
    if isinstance(message, p.Encode) and isinstance(message.text, p.TextRef):
        text = texts.get(message.text.number)
        if text is not None:
            message = replace(message, text=text)
    return message


class _Server:
    """The service's state: the loaded vocabularies, which pane uses which, and the way back to
    the window (one reply at a time: a reply's arrays follow its head)."""

    def __init__(self, conn: Connection | None, requests: _Requests, texts: _LastText | None = None) -> None:
        self.conn, self.requests = conn, requests
        self.texts = texts or _LastText()
        self.loaded: dict[str, Tokenizer] = {}  # spec -> its vocabulary, while a pane uses it
        self.spec_of: dict[int, str] = {}  # key -> spec
        self.rate: dict[str, float] = {}  # seconds per character each vocabulary took, last time
        self._send_lock = threading.Lock()

    def cost(self, message: p.Encode) -> float:
        """The seconds an encode request is expected to take."""
        spec, text = self.spec_of.get(message.key), message.text
        return len(text) * self.rate.get(spec, 0.0) if spec is not None and isinstance(text, str) else 0.0

    def _measure(self, spec: str, tokenizer: Tokenizer) -> None:
        """Time an encode of the shipped samples, for `cost`; it also fills the vocabulary's per-id
        caches for the ids most texts use."""
        text = _sample_text()
        began = time.perf_counter()
        try:
            encode(tokenizer, text, SpecialPolicy())
        except Exception:  # noqa: BLE001 (the order of encodes is a nicety; its error is the encode's)
            return
        self.rate[spec] = (time.perf_counter() - began) / max(len(text), 1)

    def send(self, reply: p.Reply) -> None:
        assert self.conn is not None
        with self._send_lock:
            p.send(self.conn, reply)

    def load(self, message: p.Load) -> p.Loaded | p.LoadFailed:
        from tokviz.core.catalog import load

        key, spec = message.key, message.spec
        try:
            if spec not in self.loaded:
                self.loaded[spec] = load(spec)
                self._measure(spec, self.loaded[spec])
                settle_heap()
            self.spec_of[key] = spec
            return p.Loaded(key, p.TokenizerInfo.of(self.loaded[spec]))
        except TokenizerError as e:
            return p.LoadFailed(key, str(e))
        except Exception as e:  # a backend bug must not hang the pane
            return p.LoadFailed(key, f"cannot load {spec}: {type(e).__name__}: {e}")

    def drop(self, key: int) -> None:
        spec = self.spec_of.pop(key, None)
        if spec is not None and spec not in self.spec_of.values():
            del self.loaded[spec]
            settle_heap(unfreeze=True)  # the vocabulary's own cycles, if any, go now

    def stream(self, message: p.Stream) -> p.Streamed:
        from tokviz.core.decoding import buffered_stream, naive_stream

        tokenizer = self.loaded[self.spec_of[message.key]]
        return p.Streamed(message.key, message.gen, tuple(naive_stream(tokenizer, message.ids)),
                          tuple(buffered_stream(tokenizer, message.ids)))

    def encode(self, message: p.Encode) -> None:
        """One encode, on an encode thread (`hold` was called for it): reply, then let the pane's
        next requests go."""
        spec = self.spec_of[message.key]
        text = message.text
        assert isinstance(text, str)
        try:
            self.send(self._encoded(message, text))
        finally:
            self.requests.done(message.key, spec)
        self.texts.forget(text)
        del text, message
        gc.collect()  # cheap: the loaded vocabularies are frozen (`settle_heap`)
        trim_heap()

    def _encoded(self, message: p.Encode, text: str) -> p.Encoded | p.Failed | p.Superseded:
        key, gen = message.key, message.gen
        if self.requests.newer_encode(key):
            return p.Superseded(key, gen)
        began = time.perf_counter()
        try:
            enc = encode(self.loaded[self.spec_of[key]], text, message.policy, model_adds=message.model_adds)
        except ValueError as e:  # disallowed special token: tiktoken's message names the way out
            return p.Failed(key, gen, str(e))
        except Exception as e:
            return p.Failed(key, gen, f"{type(e).__name__}: {e}")
        done = time.perf_counter()
        stages = [("queued", self.requests.arrived.get(key, began), began), ("encode", began, done)]
        enc = replace(enc.compact(), extra={**enc.extra, "stages": stages})
        if len(text) >= 1 << 14:
            self.rate[self.spec_of[key]] = (done - began) / len(text)
        return p.Superseded(key, gen) if self.requests.newer_encode(key) else p.Encoded(key, gen, enc)


@functools.cache
def _sample_text() -> str:
    """The shipped samples, joined: what `_Server._measure` times each vocabulary on."""
    from tokviz.core.resources import samples

    return "\n".join(s.read_text() for s in samples())


def settle_heap(*, unfreeze: bool = False) -> None:
    """Collect the cycles there are, then freeze what lives on (`gc.freeze`), so the collection
    after each encode looks only at what that encode made. With `unfreeze` (a vocabulary was
    dropped), the frozen objects are collected first, so its cycles are freed."""
    if unfreeze:
        gc.unfreeze()
    gc.collect()
    gc.freeze()


def serve(conn: Connection) -> None:
    """The service process: answer requests for any number of panes until told to stop."""
    gc.disable()  # encodings hold no cycles; full passes over many live objects would slow the encodes
    limit_arenas(1)  # with more arenas, the encode threads' kept freed memory that trimming did not return
    if hasattr(os, "nice"):  # the window gets the cores first; only it waits for us, so nothing inverts
        with contextlib.suppress(OSError):  # not allowed: the same work, a larger share of the cores
            os.nice(10)
    threads = max(1, min(os.cpu_count() or 1, 4))  # one encode thread per core, up to four
    requests = _Requests(threads)
    texts = _LastText()
    threading.Thread(target=_read, args=(conn, requests, texts), daemon=True, name="requests").start()
    server = _Server(conn, requests, texts)
    pool = ThreadPoolExecutor(threads, thread_name_prefix="encode")
    while True:
        message = requests.get(server.spec_of, server.cost)
        reply: p.Reply | None = None
        if isinstance(message, p.Load):
            reply = server.load(message)
        elif isinstance(message, p.Drop):
            server.drop(message.key)
        elif isinstance(message, p.Cancel):  # for an encode already answered: nothing to do
            pass
        elif message.key not in server.spec_of:  # a request of a pane whose vocabulary did not load
            reply = p.Failed(message.key, message.gen, "the tokenizer is not loaded")
        elif isinstance(message, p.Encode) and isinstance(message.text, p.TextRef):  # not the last text
            reply = p.Failed(message.key, message.gen, "the text to encode did not arrive")
        elif isinstance(message, p.Encode):
            requests.hold(message.key, server.spec_of[message.key])
            pool.submit(server.encode, message)
        else:
            reply = server.stream(message)
        del message
        if reply is not None:
            server.send(reply)
        del reply
