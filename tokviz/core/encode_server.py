"""Tokenize in a child process and hand the result back as columns. Qt-free (runs in the child).

Why a process: the core builds a 1 MB text's ~300k tokens in C-level loops that hold the GIL
for 200-400 ms at a stretch, and a thread in the GUI process would freeze the window that long
(measured: 1-1.5 s stalls with four panes). In a child process those loops hold the child's GIL.
What comes back is a handful of numpy arrays and one entry per distinct (id, bytes): cheap to
pickle, and the `Encoding` builds any `Token` on demand, equal to the core's own.

One process serves every pane of a window (`serve`): each vocabulary is loaded once (two panes of
one spec share it), the interpreter, numpy and the catalog are paid for once instead of per pane
(~40 MB each), and four panes no longer start four busy processes on a two-core machine. Every
request names its pane's `key`; replies carry it back.

Protocol on a `multiprocessing` pipe (child side in `serve`):
  -> ("load", key, spec)                       <- ("loaded", key, TokenizerInfo) | ("load_failed", key, message)
  -> ("text", 0, number, utf8)                 (no reply: the text an encode's `TextRef(number)` stands for,
                                                  as UTF-8 bytes, surrogates passed: see `text_message`)
  -> ("encode", key, gen, text, policy, adds)  <- ("done", key, gen, Encoding) | ("failed", key, gen, message)
                                                  | ("superseded", key, gen)   (text: a str or a TextRef)
  -> ("stream", key, gen, ids)                 <- ("stream", key, gen, naive, buffered)
  -> ("cancel", key)                           (no reply: the encode at hand for key is not wanted)
  -> ("drop", key)                             (no reply: the pane is gone; its vocabulary is
                                                  released once no pane uses it)
  -> None (stop)
A thread of the child reads requests as they come, so a sender never waits for an encode to end:
an encode for a key with a newer encode waiting is answered `superseded` without being done (or,
when the newer one came during the encode, instead of sending the stale columns), and None or the
pipe closing ends the process at once, even in the middle of an encode.

Encodes of different panes run at the same time, on `encode_threads()` threads: the libraries
encode with the GIL released (tiktoken, sentencepiece and `tokenizers` all do), so on two cores a
window's four 1 MB encodes take about half as long as one after the other. One vocabulary is
never used by two threads at once (two panes of one spec take turns), and a pane's requests stay
in order (its next one waits for the reply to the one at hand). Loads, drops and streams run on
the serving loop.
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from tokviz.core.encoding import Encoding
from tokviz.core.heap import limit_arenas, trim_heap
from tokviz.core.stream import encode_whole
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


def encode(tokenizer: Tokenizer, text: str, policy: SpecialPolicy, *, model_adds: bool = False) -> Encoding:
    """The columns of `text`; with `model_adds`, "as the model sees it": with the BOS/EOS the
    model's own tokenizer adds (`Tokenizer.added_around`)."""
    t0 = time.perf_counter()
    cols = encode_whole(tokenizer, text, allowed_special=policy.allowed_special,
                        disallowed_special=policy.disallowed_special)
    if model_adds:
        cols = cols.around(*tokenizer.added_tokens(text))
    return replace(cols, seconds=time.perf_counter() - t0)


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


def _exit_now(conn: Connection) -> NoReturn:
    """End the child at once: the interpreter's teardown of a loaded vocabulary (numpy, Rust
    tokenizers, module dicts) took 0.2-0.4 s per pane on a loaded machine, and the window's close
    waited for it. Nothing here needs flushing but the standard streams."""
    conn.close()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(0)


class _Requests:
    """The requests read so far, in order; filled by the child's reader thread, handed out by
    `get` to the serving loop, which gives encodes to `threads` encode threads (`hold` / `done`)."""

    def __init__(self, threads: int = 1) -> None:
        self._items: list[tuple[Any, ...]] = []
        self._cond = threading.Condition()
        #: when the newest request of each key came in (`perf_counter`, the system's monotonic
        #: clock on Linux, so the window can put it on its own time line)
        self.arrived: dict[int, float] = {}
        self._busy: set[tuple[str, object]] = set()  # ("key", k) and ("spec", s) of encodes at hand
        self._free = threads  # encode threads with nothing to do

    def put(self, *messages: tuple[Any, ...]) -> None:
        """Requests that came in together: the serving loop sees all of them at once, so the
        encode of the highest cost among them goes first."""
        with self._cond:
            now = time.perf_counter()
            for message in messages:
                self._items.append(message)
                self.arrived[message[1]] = now
            self._cond.notify()

    def get(self, spec_of: Mapping[int, str] | None = None,
            cost: Callable[[tuple[Any, ...]], float] | None = None) -> tuple[Any, ...]:
        """The first request that may go now and is not a load, else the first load that may: a
        pane that has its vocabulary is answered before the next one is loaded (loading four
        vocabularies in one process takes seconds; a pane's own requests only follow its load's
        reply, so each pane's order holds). Nothing of a pane goes while its encode is at hand
        (its cancel and its next encode wait, so the encode sees them and is superseded), nothing
        that uses a vocabulary while another pane's encode uses it (one tokenizer object is
        never used by two threads at once), and no encode while every encode thread is at work.
        When that first request is an encode, the waiting encode of the highest `cost` goes
        instead (the longest first: the panes finish together rather than one slow vocabulary
        starting last). A pane's requests go in the order they came, the longest first among the
        first of each pane only: an encode that went ahead of its own pane's earlier cancel (of
        the encode before it) was superseded by that cancel and never done, and its pane was
        left with no result. A drop goes ahead, and takes its pane's waiting load with it."""
        spec_of = spec_of or {}
        with self._cond:
            while True:
                ready = [i for i in self._first_of_each_key() if self._may_go(self._items[i], spec_of)]
                if ready:
                    break
                self._cond.wait()
            at = next((i for i in ready if self._items[i][0] != "load"), ready[0])
            if self._items[at][0] == "encode" and cost is not None:
                encodes = [i for i in ready if self._items[i][0] == "encode"]
                at = max(encodes, key=lambda i: (cost(self._items[i]), -i))
            message = self._items.pop(at)
            if message[0] == "drop":
                self._items = [m for m in self._items if not (m[0] == "load" and m[1] == message[1])]
            return message

    def _first_of_each_key(self) -> list[int]:
        """The indices of the requests no earlier request of the same pane waits before (a drop
        waits for nothing), in order."""
        seen: set[int] = set()
        first = []
        for i, m in enumerate(self._items):
            if m[0] == "drop" or m[1] not in seen:
                first.append(i)
            seen.add(m[1])
        return first

    def _may_go(self, message: tuple[Any, ...], spec_of: Mapping[int, str]) -> bool:
        kind, key = message[0], message[1]
        if ("key", key) in self._busy:
            return False
        if kind == "encode" and not self._free:
            return False
        spec = message[2] if kind == "load" else spec_of.get(key)
        return not (kind in ("load", "encode", "stream") and ("spec", spec) in self._busy)

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
            return any(m[0] in ("encode", "cancel") and m[1] == key for m in self._items)


def text_message(number: int, text: str) -> tuple[str, int, int, bytes]:
    """The ("text", 0, number, utf8) message of `text`. Its UTF-8 bytes, not the str: pickling a
    str that is not ASCII leaves a UTF-8 copy of it cached on the str (CPython's
    `PyUnicode_AsUTF8AndSize`) for as long as the sender keeps the text: 1 MB more held in the
    window for a 1 MB text with CJK in it. `str.encode` caches nothing."""
    return ("text", 0, number, text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class TextRef:
    """An encode's text by reference: the text of the last ("text", 0, number, text) message,
    when `number` is that message's. Four panes encoding one 1 MB text send it once, and this
    process holds one copy of it (a text with CJK in it is 4 bytes a character as a str)."""

    number: int


class _LastText:
    """The last text the window sent: kept as its UTF-8 bytes, decoded once for the encodes
    that name it while they wait. An encode's request holds the str it was given, so when an
    encode is done (`forget`), the str goes once no waiting request holds it: a 1 MB text with
    CJK in it is 3-4 MB as a str (4 bytes a character, and the UTF-8 copy tiktoken's encode
    caches on it), 1 MB as bytes. A request that comes later decodes it again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._number = -1
        self._data = b""
        self._text: str | None = None

    def put(self, number: int, data: bytes) -> None:
        with self._lock:
            self._number, self._data, self._text = number, data, None

    def get(self, number: int) -> str | None:
        """The text of message `number`; None when it is not the last one."""
        with self._lock:
            if number != self._number:
                return None
            if self._text is None:
                self._text = self._data.decode("utf-8", "surrogatepass")
            return self._text

    def forget(self, text: str) -> None:
        """An encode of `text` is done: let go of it, if it is the last text's str."""
        with self._lock:
            if self._text is text:
                self._text = None


#: how long the reader waits for the next request after an encode before handing the encodes
#: it has to the serving loop, and how long at most it gathers them (a keystroke's encodes wait
#: that much more: less than the encodes of anything but a short text take)
BURST_GAP_S = 0.01
BURST_MAX_S = 0.05


def _read(conn: Connection, requests: _Requests, texts: _LastText) -> None:
    """The reader thread: every request into `requests`, an encode's `TextRef` replaced by its
    text; None or a closed pipe ends the process."""
    while True:
        requests.put(*_burst(conn, texts))


def _burst(conn: Connection, texts: _LastText, *, gap_s: float = BURST_GAP_S,
           max_s: float = BURST_MAX_S) -> list[tuple[Any, ...]]:
    """The next request, and when it is an encode, the requests that follow it less than `gap_s`
    apart (for `max_s` at most); a text message goes to `texts`, not into the list.

    The panes of a window each send their encode of a new text within a few ms of each other.
    Handed to the serving loop one by one, the first two to come went to the two encode threads,
    and a slow vocabulary's encode that came later started late (sentencepiece takes 3-4 times
    as long as tiktoken): in `bench/bench_gui.py`, mistral's encode started 0.29-0.35 s after
    the paste in two rounds of six, and the panes were drawn at 1.11-1.36 s against 0.70-0.94
    in the others. Handed over together, the longest starts first."""
    batch = [_received(conn, texts)]
    if batch[0][0] == "encode":
        until = time.perf_counter() + max_s
        while time.perf_counter() < until and conn.poll(gap_s):
            batch.append(_received(conn, texts))
    return [m for m in batch if m[0] != "text"]


def _received(conn: Connection, texts: _LastText) -> tuple[Any, ...]:
    """The next request; a text message is kept in `texts`, an encode's `TextRef` replaced by
    its text."""
    try:
        message: tuple[Any, ...] | None = conn.recv()
    except (EOFError, OSError):
        message = None
    if message is None:
        _exit_now(conn)
    if message[0] == "text":
        texts.put(message[2], message[3])
        return ("text",)
    if message[0] == "encode" and isinstance(message[3], TextRef):
        text = texts.get(message[3].number)
        if text is not None:
            message = (*message[:3], text, *message[4:])
    return message


def encode_threads() -> int:
    """How many encodes the tokenizer process runs at once: one per core, up to four. tiktoken,
    sentencepiece and `tokenizers` encode with the GIL released, so encodes of different panes
    run side by side (measured on two cores at load ~1.5: the four panes of bench_gui.py
    tokenized in 1.06-1.24 s, against 1.34-1.54 s one encode after the other)."""
    return max(1, min(os.cpu_count() or 1, 4))


class _Server:
    """The tokenizer process's state: the loaded vocabularies, which pane uses which, and the
    way back to the window (one reply at a time: a reply's arrays follow its head)."""

    def __init__(self, conn: Connection, requests: _Requests, texts: _LastText | None = None) -> None:
        self.conn, self.requests = conn, requests
        self.texts = texts or _LastText()
        self.loaded: dict[str, Tokenizer] = {}  # spec -> its vocabulary, while a pane uses it
        self.spec_of: dict[int, str] = {}  # key -> spec
        #: seconds per character each vocabulary took, last time (a sample's encode at its load)
        self.rate: dict[str, float] = {}
        self._send_lock = threading.Lock()

    def cost(self, message: tuple[Any, ...]) -> float:
        """The seconds an encode request is expected to take."""
        spec, text = self.spec_of.get(message[1]), message[3]
        return len(text) * self.rate.get(spec, 0.0) if spec is not None and isinstance(text, str) else 0.0

    def _measure(self, spec: str, tokenizer: Tokenizer) -> None:
        """Time an encode of the shipped samples (about 16k characters of many scripts), so the
        first large encodes of several panes go in the order of their cost; it also fills the
        vocabulary's per-id caches for the ids most texts use."""
        text = _sample_text()
        began = time.perf_counter()
        try:
            encode(tokenizer, text, SpecialPolicy())
        except Exception:  # noqa: BLE001 (the order of encodes is a nicety; its error is the encode's)
            return
        self.rate[spec] = (time.perf_counter() - began) / max(len(text), 1)

    def send(self, reply: tuple[Any, ...]) -> None:
        with self._send_lock:
            send_reply(self.conn, reply)

    def load(self, key: int, spec: str) -> tuple[Any, ...]:
        from tokviz.core.catalog import load

        try:
            if spec not in self.loaded:
                self.loaded[spec] = load(spec)
                self._measure(spec, self.loaded[spec])
                settle_heap()
            self.spec_of[key] = spec
            return ("loaded", key, info_of(self.loaded[spec]))
        except TokenizerError as e:
            return ("load_failed", key, str(e))
        except Exception as e:  # a backend bug must not hang the pane
            return ("load_failed", key, f"cannot load {spec}: {type(e).__name__}: {e}")

    def drop(self, key: int) -> None:
        spec = self.spec_of.pop(key, None)
        if spec is not None and spec not in self.spec_of.values():
            del self.loaded[spec]
            settle_heap(unfreeze=True)  # the vocabulary's own cycles, if any, go now

    def encode(self, key: int, gen: int, text: str, policy: SpecialPolicy, model_adds: bool) -> None:
        """One encode, on an encode thread (`hold` was called for it): reply, then let the pane's
        next requests go."""
        spec = self.spec_of[key]
        try:
            self.send(self._encoded(key, gen, text, policy, model_adds))
        finally:
            self.requests.done(key, spec)
        self.texts.forget(text)
        del text
        gc.collect()  # cheap: the loaded vocabularies are frozen (`settle_heap`)
        trim_heap()

    def _encoded(self, key: int, gen: int, text: str, policy: SpecialPolicy, model_adds: bool) -> tuple[Any, ...]:
        if self.requests.newer_encode(key):
            return ("superseded", key, gen)
        began = time.perf_counter()
        try:
            cols = encode(self.loaded[self.spec_of[key]], text, policy, model_adds=model_adds).compact()
        except ValueError as e:  # disallowed special token: tiktoken's message names the way out
            return ("failed", key, gen, str(e))
        except Exception as e:
            return ("failed", key, gen, f"{type(e).__name__}: {e}")
        done = time.perf_counter()
        stages = [("queued", self.requests.arrived.get(key, began), began), ("encode", began, done)]
        cols = replace(cols, extra={**cols.extra, "stages": stages})
        if len(text) >= 1 << 14:
            self.rate[self.spec_of[key]] = (done - began) / len(text)
        return ("superseded", key, gen) if self.requests.newer_encode(key) else ("done", key, gen, cols)


@functools.cache
def _sample_text() -> str:
    """The shipped samples, joined: what `_Server._measure` times each vocabulary on (read once)."""
    from tokviz.core.resources import samples

    return "\n".join(s.read_text() for s in samples())


def settle_heap(*, unfreeze: bool = False) -> None:
    """Collect the cycles there are, then move every object that lives on to the collector's
    permanent generation (`gc.freeze`): a full collection after each encode then looks at what
    the encode made only, not at four vocabularies' objects (measured: 50-100 ms a collection
    with four loaded, in the way of the next encode). With `unfreeze` (a vocabulary was
    dropped), the frozen objects are looked at once more first, so a dropped vocabulary's cycles
    are freed."""
    if unfreeze:
        gc.unfreeze()
    gc.collect()
    gc.freeze()


#: how much lower this process's CPU priority is than the window's (`os.nice`)
NICENESS = 10


def lower_priority() -> None:
    """Give the window the cores first: four 1 MB encodes on two encode threads and the window's
    own work (receiving, preparing, laying out, painting) want more than two cores, and with this
    process at the window's priority every pane was drawn later (`bench/bench_gui.py`, five
    rounds each way on two cores: 1.06-1.21 s, 0.89-1.04 s niced; each niced round below its
    pair). Only the window waits for this process, never the reverse, so nothing inverts.
    Nothing on a system without `os.nice` (Windows)."""
    if hasattr(os, "nice"):
        try:
            os.nice(NICENESS)
        except OSError:  # not allowed: the work is the same, only its share of the cores
            pass


def serve(conn: Connection) -> None:
    """The child process: answer requests for any number of panes until told to stop."""
    # tokens and columns hold no reference cycles; the collector's full passes over 300k live
    # tokens would double the time of an encode (measured: columns 1.4 s with it, 0.3 s without)
    gc.disable()
    # one arena for every thread: with two, what the encode threads' arenas held after rounds of
    # four 1 MB encodes (cl100k, o200k, qwen, mistral) was 155 MiB in some rounds and 184-189 in
    # others, free memory malloc_trim did not give back; with one, 154-156 in every round, the
    # encodes taking as long (a fixed mmap threshold held it at 156 too, but made a 1 MB
    # cl100k encode 30-70 % slower: fresh pages for every large temporary)
    limit_arenas(1)
    lower_priority()
    from tokviz.core.decoding import buffered_stream, naive_stream

    threads = encode_threads()
    requests = _Requests(threads)
    texts = _LastText()
    threading.Thread(target=_read, args=(conn, requests, texts), daemon=True, name="requests").start()
    server = _Server(conn, requests, texts)
    pool = ThreadPoolExecutor(threads, thread_name_prefix="encode")
    while True:
        message = requests.get(server.spec_of, server.cost)
        kind, key = message[0], message[1]
        reply: tuple[Any, ...] | None = None
        if kind == "load":
            reply = server.load(key, message[2])
        elif kind == "drop":
            server.drop(key)
        elif kind == "cancel":  # for an encode already answered: nothing to do
            pass
        elif key not in server.spec_of:  # a request of a pane whose vocabulary did not load
            reply = ("failed", key, message[2], "the tokenizer is not loaded")
        elif kind == "encode" and isinstance(message[3], TextRef):  # not the last text: a bug
            reply = ("failed", key, message[2], "the text to encode did not arrive")
        elif kind == "encode":
            requests.hold(key, server.spec_of[key])
            pool.submit(server.encode, *message[1:])
        else:
            _, _, gen, ids = message
            tokenizer = server.loaded[server.spec_of[key]]
            reply = ("stream", key, gen, list(naive_stream(tokenizer, ids)), list(buffered_stream(tokenizer, ids)))
        del message
        if reply is not None:
            server.send(reply)
        del reply
