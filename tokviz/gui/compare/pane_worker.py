"""Loading and tokenizing off the GUI thread, and off the GUI process.

Each pane has one `Worker` for its whole life running `serve_pane`, which talks to the one
tokenizer process every pane of this process shares (`TOKENIZERS`, running
`tokviz.service.server.serve`: the core's 1 MB encode holds the GIL for hundreds of
milliseconds, which a thread in this process would turn into a frozen window; one process for
all panes loads the interpreter and numpy once, not once per pane). It sends requests under the
pane's key, waits for the reply without holding the GIL, then turns the columns into cells and
widths.

Requests come through an `Inbox` (the newest encode wins: a request superseded while it waits is
never sent). What each request came to is yielded: `Loaded` first, then per request a `PaneResult`,
`PaneFailed` or `PaneCancelled` (a newer request arrived while the child encoded), and `Streamed`
for stream requests. The Worker's own terminal signal is the pane's end: `errored` when the
tokenizer cannot be loaded, `aborted` when the pane closes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import overload

import numpy as np

from tokviz.core.cancel import Cancelled
from tokviz.core.encoding import Encoding, token_ids
from tokviz.core.heap import trim_heap
from tokviz.core.tokenizer import SpecialPolicy
from tokviz.core.tokens import Token
from tokviz.gui.compare.cell_metrics import CellMeasurer, Fonts
from tokviz.gui.compare.cells import Cell, ViewOptions, cell_for, join_fragments
from tokviz.gui.compare.token_layout import LineBreaks, TokenWidths
from tokviz.gui.work.child import ChildDied, SharedChild
from tokviz.gui.work.inbox import Inbox
from tokviz.gui.work.shared_thread import SharedThread
from tokviz.gui.work.worker import Job
from tokviz.service import protocol as p
from tokviz.service.server import serve


@dataclass(frozen=True)
class TokenizeRequest:
    gen: int
    text: str
    policy: SpecialPolicy
    options: ViewOptions
    fonts: Fonts
    model_adds: bool = False  # "as the model sees it": with the BOS/EOS the model's tokenizer adds


@dataclass
class PaneResult:
    """Everything a pane draws for one text: the core's tokens plus columns for fast lookups."""

    gen: int
    text: str
    policy: SpecialPolicy
    options: ViewOptions
    tokens: Sequence[Token]
    cells: Sequence[Cell]
    widths: np.ndarray | TokenWidths  # indexed alike (an index: a float; a slice: an array)
    breaks: LineBreaks  # the tokens that end a line with newlines
    starts: np.ndarray  # character spans, non-decreasing
    ends: np.ndarray
    n_bytes: int
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def n_chars(self) -> int:
        return len(self.text)

    @property
    def ids(self) -> np.ndarray:
        """Every token's id: made when asked for (from the key column, for columns), not kept."""
        return token_ids(self.tokens)


class CellColumn(Sequence[Cell]):
    """A pane's cells without a list of one reference per token: token i's cell is
    `cells[index[i]]`, where `cells` holds each distinct (id, bytes)'s cell and the joined cells
    of fragment runs, and `index` is the text's key column (another where runs are joined)."""

    def __init__(self, cells: list[Cell], index: np.ndarray) -> None:
        self._cells, self._index = cells, index

    def __len__(self) -> int:
        return len(self._index)

    @overload
    def __getitem__(self, index: int) -> Cell: ...
    @overload
    def __getitem__(self, index: slice) -> list[Cell]: ...

    def __getitem__(self, index: int | slice) -> Cell | list[Cell]:
        if isinstance(index, slice):
            return list(map(self._cells.__getitem__, self._index[index].tolist()))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("cell index out of range")
        return self._cells[int(self._index[index])]

    def __iter__(self) -> Iterator[Cell]:
        return iter(self[0 : len(self)])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CellColumn):
            other = list(other)
        return isinstance(other, list) and len(other) == len(self) and list(self) == other

    __hash__ = None  # type: ignore[assignment]


def prepare(cols: Encoding, options: ViewOptions, fonts: Fonts) -> tuple[
    Encoding, CellColumn, TokenWidths, LineBreaks
]:
    """Tokens, cells, widths and line breaks; Python code runs once per distinct (id, bytes)
    and once per distinct fragment run, never once per token (a loop or list over 300k tokens
    holds this process's GIL for tens of milliseconds at a stretch: a stall of the window).
    What is kept per token is the cell column alone (2 bytes a token where the cells number
    65536 or fewer): widths are one per cell, newlines one per line."""
    tokens = cols
    cells = [cell_for(t, options) for t in tokens.distinct_tokens()]
    unique_newlines = np.array([c.newlines for c in cells], dtype=np.int32)
    ki = cols.key_index
    fragments = np.flatnonzero(np.array([bool(c.hex) for c in cells], dtype=bool)[ki])
    index = _join_fragment_runs(tokens, cells, fragments, ki, options)
    widths = TokenWidths.measured_later(cells, index, lambda: CellMeasurer(fonts).width)  # by the thread that draws
    return tokens, CellColumn(cells, index), widths, LineBreaks.from_counts(narrowed(unique_newlines, np.uint8)[ki])


def narrowed(values: np.ndarray, dtype: type[np.generic]) -> np.ndarray:
    """`values` as the smaller `dtype` when every value survives the cast unchanged, else as they
    are: newline counts are small (uint8) and a 1 MB text's cells number tens of thousands
    (uint16), so the columns a pane's preparation makes per token take 1 and 2 bytes a token.

    >>> narrowed(np.array([7.5, 12.015625]), np.float32).dtype, narrowed(np.array([0.1]), np.float32).dtype
    (dtype('float32'), dtype('float64'))
    >>> narrowed(np.array([0, 3], dtype=np.int32), np.uint8).dtype, narrowed(np.array([300]), np.uint8).dtype
    (dtype('uint8'), dtype('int64'))
    """
    small = values.astype(dtype)  # a value that does not fit comes out changed (wrapped, rounded)
    return small if np.array_equal(small, values) else values


def _join_fragment_runs(tokens: Encoding, cells: list[Cell], fragments: np.ndarray, key_index: np.ndarray,
                        options: ViewOptions) -> np.ndarray:
    """The cell index of every token once each run of neighbouring fragment cells has its
    joined cells (`join_fragments`); the joined cells are appended to `cells`.

    A run's cells follow from its tokens' (id, bytes) alone, so they are made once per distinct
    run: the runs of each length are grouped by their keys in numpy (`np.unique` over rows), and
    each group's cells are put in place for all its runs at once. A 1 MB text has tens of
    thousands of fragment tokens in thousands of runs but a few hundred distinct ones (a Python
    loop over the runs, and a dict of one joined cell per token, was most of the preparation)."""
    if not len(fragments):
        return key_index
    breaks = np.flatnonzero(np.diff(fragments) != 1) + 1
    firsts = fragments[np.concatenate([[0], breaks])]
    lengths = np.diff(np.concatenate([[0], breaks, [len(fragments)]]))
    at: list[np.ndarray] = []  # the tokens whose cell is a joined one, and that cell
    value: list[np.ndarray] = []
    for length in np.flatnonzero(np.bincount(lengths)).tolist():
        places = firsts[lengths == length][:, None] + np.arange(length)  # (runs, length) token indices
        runs, first_of, which = np.unique(key_index[places], axis=0, return_index=True, return_inverse=True)
        joined = runs.astype(np.int32)
        for r, (keys, first) in enumerate(zip(runs.tolist(), places[first_of, 0].tolist())):
            own = [cells[k] for k in keys]
            local = join_fragments(tokens[first:first + length], own, range(length), options)
            for k, cell in local.items():
                if cell != own[k]:
                    joined[r, k] = len(cells)
                    cells.append(cell)
        cell_of = joined[which.reshape(-1)].ravel()
        places = places.ravel()
        changed = cell_of != key_index[places]
        at.append(places[changed])
        value.append(cell_of[changed])
    where, cell_of = np.concatenate(at), np.concatenate(value)
    index = key_index.astype(np.int32)
    index[where] = cell_of
    return narrowed(index, np.uint16)


@dataclass(frozen=True)
class Loaded:
    info: p.TokenizerInfo


@dataclass(frozen=True)
class PaneFailed:
    gen: int
    message: str


@dataclass(frozen=True)
class PaneCancelled:
    gen: int


@dataclass(frozen=True)
class Streamed:
    ids: list[int]
    naive: list
    buffered: list


class LoadFailed(Exception):
    """The pane's tokenizer could not be loaded (the message says why)."""


def pane_inbox() -> Inbox:
    return Inbox(("encode", "stream"))


#: the tokenizer process of every pane in this process (started by the first pane's first
#: request, stopped when the last pane ends)
TOKENIZERS = SharedChild(serve, what="tokenizer", name="tokviz-tokenizers", goodbye=p.Stop(),
                         recv=p.receive_reply, send=p.send)


class _Texts:
    """Sends each text to the tokenizer process once: the first pane to encode a text sends it
    as `Text(number, ...)`, and every encode of it names it by `TextRef(number)` (four
    panes sent the same 1 MB text four times, one after the other, and the process held four
    copies). Only the last text sent is named: the lock covers the text and the encode naming
    it, so no other text comes between them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[int, int, str] | None = None  # (process generation, number, text)
        self._numbers = 0

    def send_encode(self, shared: SharedChild, request: p.Encode, generation: int) -> int:
        """Send `request` with its text by reference (and the text first, if it is not the last
        one sent) to the process of `generation`; the generation it went to."""
        text = request.text
        assert isinstance(text, str)
        with self._lock:
            last = self._last
            if last is None or last[0] != generation or not (last[2] is text or last[2] == text):
                self._numbers += 1
                self._last = None
                shared.send(p.Text.of(self._numbers, text), generation)
                last = self._last = (generation, self._numbers, text)
            return shared.send(replace(request, text=p.TextRef(last[1])), generation)


#: the texts sent to `TOKENIZERS`
TEXTS = _Texts()


class _Channel:
    """A pane's way to the shared tokenizer process: its key, and its vocabulary loaded there."""

    def __init__(self, spec: str, shared: SharedChild = TOKENIZERS) -> None:
        self.spec, self.shared = spec, shared
        self.texts = TEXTS if shared is TOKENIZERS else _Texts()
        self.key = shared.attach()
        self._loaded_in = 0  # the generation of the process that has this pane's vocabulary
        self._sent = 0  # the generation the last message went to

    def restart(self) -> None:
        """The process this pane last sent to died: let the next send start a new one."""
        self.shared.restart(self._sent)

    def close(self) -> None:
        self.shared.detach(self.key, p.Drop(self.key))

    def load(self, job: Job) -> p.TokenizerInfo:
        """Load the pane's vocabulary in the current process; LoadFailed when it cannot load."""
        reply = self._exchange(job, p.Load(self.key, self.spec))
        if not isinstance(reply, p.Loaded):
            raise LoadFailed(reply.message if isinstance(reply, p.LoadFailed) else f"unexpected reply {reply}")
        self._loaded_in = self._sent
        return reply.info

    def ask(self, job: Job, request: p.Encode | p.Stream, waiting: Callable[[], None] | None = None) -> p.Reply:
        """Send a request, the reply to it. A process that dies (killed, out of memory) is started
        again, the vocabulary loaded in it and the request sent once more, so the pane recovers;
        only when that fails too does it raise ChildDied, with both reasons."""
        try:
            return self._ask_once(job, request, waiting)
        except ChildDied as died:
            self.restart()
            try:
                return self._ask_once(job, request, waiting)
            except LoadFailed as e:
                raise ChildDied(f"{died}; starting it again failed: {e}") from None

    def _ask_once(self, job: Job, request: p.Encode | p.Stream, waiting: Callable[[], None] | None) -> p.Reply:
        if self._loaded_in != self.shared.generation or self.shared.process is None:
            self.load(job)  # a new process (another pane's request found the old one dead)
        if isinstance(request, p.Encode):  # the text goes once for all panes
            self._sent = self.texts.send_encode(self.shared, request, self._loaded_in)
            return self.shared.receive(job, self.key, self._sent, waiting)  # type: ignore[no-any-return]
        return self._exchange(job, request, waiting, self._loaded_in)

    def _exchange(self, job: Job, message: p.Request, waiting: Callable[[], None] | None = None,
                  generation: int | None = None) -> p.Reply:
        self._sent = self.shared.send(message, generation)
        return self.shared.receive(job, self.key, self._sent, waiting)  # type: ignore[no-any-return]

    def cancel_when(self, superseded: Callable[[], bool]) -> Callable[[], None]:
        """A `waiting` hook for `ask`: once `superseded()` is true, tell the process the request
        at hand is not wanted (it answers `superseded` instead of sending stale columns)."""
        sent = False

        def check() -> None:
            nonlocal sent
            if not sent and superseded():
                sent = True
                try:
                    self.shared.send(p.Cancel(self.key))
                except ChildDied:
                    pass  # the wait for the reply finds that out

        return check


def serve_pane(job: Job, *, spec: str, inbox: Inbox) -> Generator[object, None, None]:
    """A pane's work for its whole life: load its vocabulary in the tokenizer process, then
    answer requests."""
    channel = _Channel(spec)
    try:
        try:
            info = channel.load(job)
        except ChildDied:  # the process died while loading: once more in a new one
            channel.restart()
            info = channel.load(job)
        yield Loaded(info)
        last: tuple[str, SpecialPolicy, Encoding, bool] | None = None
        while True:
            kind, request = inbox.get(job)
            if kind == "stream":
                ids: list[int] = request  # type: ignore[assignment]
                try:
                    reply = channel.ask(job, p.Stream(channel.key, 0, tuple(ids)))
                except ChildDied:  # nothing to stream; the next request starts a process again
                    continue
                if isinstance(reply, p.Streamed):
                    yield Streamed(ids, list(reply.naive), list(reply.buffered))
                continue
            req: TokenizeRequest = request  # type: ignore[assignment]
            try:
                outcome, last = _tokenize(job, channel, inbox, req, last)
            except Cancelled:
                raise
            except ChildDied as e:  # the request fails; the next one starts a process again
                outcome = PaneFailed(req.gen, str(e))
            except Exception as e:  # noqa: BLE001 (a message in the pane, never a dead pane)
                outcome = PaneFailed(req.gen, f"{type(e).__name__}: {e}")
            yield outcome
    finally:
        channel.close()


#: the one thread that prepares the cells of every pane, one pane after another: preparing is
#: Python code holding the GIL, and one preparing thread at a time is all the GUI thread competes
#: with for it (it measures nothing: widths are measured when the view reads them, on the GUI
#: thread, see `TokenWidths.measured_later`). Panes attach to it.
PREPARING = SharedThread(name="tokviz-cells")


def _tokenize(job: Job, channel: _Channel, inbox: Inbox, req: TokenizeRequest,
              last: tuple[str, SpecialPolicy, Encoding, bool] | None):
    t0 = time.perf_counter()
    if (last is not None and last[1] == req.policy and last[3] == req.model_adds
            and (last[0] is req.text or last[0] == req.text)):
        cols = last[2]  # only the view options changed: reuse the last encode
    else:
        reply = channel.ask(job, p.Encode(channel.key, req.gen, req.text, req.policy, req.model_adds),
                            waiting=channel.cancel_when(lambda: inbox.pending("encode")))
        if isinstance(reply, p.Superseded):
            return PaneCancelled(req.gen), last
        if not isinstance(reply, p.Encoded):
            why = reply.message if isinstance(reply, p.Failed) else f"unexpected reply {reply}"
            return PaneFailed(req.gen, why), last
        cols = reply.encoding
        del reply
        last = (req.text, req.policy, cols, req.model_adds)
    received = time.perf_counter()
    if inbox.pending("encode"):  # superseded while the child encoded
        return PaneCancelled(req.gen), last
    work = partial(prepare, cols, req.options, req.fonts)
    tokens, cells, widths, breaks = PREPARING.call(job, work, work)
    prepared = time.perf_counter()
    trim_heap()  # the preparation's temporaries are free now
    done = time.perf_counter()
    # where the time went, on the system's monotonic clock (the tokenizer process's stages first)
    stages = [*cols.extra.get("stages", ()), ("asked", t0, t0), ("received", received, received),
              ("prepare", received, prepared), ("trim", prepared, done)]
    return PaneResult(
        req.gen, req.text, req.policy, req.options, tokens, cells, widths, breaks,
        cols.starts, cols.ends, cols.n_bytes, done - t0, extra={"stages": stages},
    ), last
