"""What a dataset costs in each tokenizer, example by example, each conversation rendered with the
model's own chat template.

`count_dataset` reads the examples of some paths (`tokviz.core.records`) and yields, in input
order, one `ExampleCount` per example or a `Skip` per record that could not be counted (a torn
line, a row without the field, a conversation a template rejects). A text is counted as `tokviz
encode` counts it (no special-token parsing: `Tokenizer.encode_ordinary_batch`); a conversation
as `tokviz chat` does (`analysis.chat`: rendered, special tokens parsed only where the template
wrote them). `DatasetSummary` folds the counts into per-tokenizer figures (percentiles, cost,
room in a context) and the examples where the tokenizers disagree most. With `scripts`, each
example also says which writing systems its tokens are spent on, as `tokviz stats` does
(`analysis.attribution`): a text's tokens, and a conversation's message contents each encoded
alone (the template's own tokens are its overhead, not a script's).

Work goes to `jobs` spawned worker processes (spawned, not forked: the GUI's process runs Qt
threads), one shard (a file, a Parquet row group, a byte range of a big JSONL file) per task, so
a worker reads and parses what it counts and only the counts come back; with `--sample`, the
sample is drawn here and sent in batches. Results are put back in input order; at most a few
shards per worker are in flight, so memory is bounded by the shards, not the dataset.

The caller passes `progress(Progress)` and a `threading.Event` to cancel: noticed between batches
here and while a worker counts (its processes are then stopped, not waited for); nothing here
draws (no Qt, no terminal).
"""

from __future__ import annotations

import concurrent.futures as cf
import heapq
import multiprocessing
import os
import threading
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np

from tokviz.analysis.chat import MARKER, analyze_chat, check_messages, trusted_special_spans
from tokviz.analysis.chat_template import ChatTemplate, ChatTemplateError, Rendered
from tokviz.core.cancel import AbortFlag
from tokviz.core.records import BATCH, Example, Record, Shard, Skip, list_shards, read_examples, read_shard
from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import sanitize

SHARD_BYTES = 16 << 20  # a big JSONL file is cut into byte ranges of this size


@dataclass(frozen=True)
class DatasetOptions:
    """How to count: the tokenizers (`-t` specs), the chat template choice and its variables."""

    specs: tuple[str, ...]
    template: str | None = None
    generation_prompt: bool = False
    template_kwargs: Mapping[str, Any] = field(default_factory=dict)
    field: str | None = None
    jobs: int = 1
    scripts: bool = False  # also the tokens per script (needs every token's span: slower)


@dataclass(frozen=True)
class ExampleCount:
    """One example's counts, one per tokenizer in the order of the specs."""

    index: int  # the record's place in the whole input, 0-based
    source: str
    chat: bool
    chars: int
    tokens: tuple[int, ...]
    #: tokens the chat template wrote, per tokenizer (None for a text); see `Counter.count_chat`
    overhead: tuple[int, ...] | None = None
    #: special-token text in message content, per tokenizer: `Finding.describe` lines
    findings: tuple[tuple[str, ...], ...] = ()
    #: with `DatasetOptions.scripts`: characters per class of `SCRIPTS`, then for each tokenizer
    #: its tokens spread over those classes (`attribution.attribute_tokens`)
    script_chars: tuple[int, ...] = ()
    script_tokens: tuple[tuple[float, ...], ...] = ()


@dataclass(frozen=True)
class Progress:
    examples: int
    skipped: int
    done_bytes: int
    total_bytes: int


# -- counting one example (in a worker or here) ----------------------------------------------------


class Counter:
    """The tokenizers and templates of one process; counts batches of examples."""

    def __init__(self, options: DatasetOptions, tokenizers: Sequence[Tokenizer] | None = None) -> None:
        from tokviz.core import catalog

        self.options = options
        self.tokenizers = list(tokenizers) if tokenizers is not None else [catalog.load(s) for s in options.specs]
        self._templates: dict[int, ChatTemplate] = {}

    def template(self, k: int) -> ChatTemplate:
        from tokviz.analysis.chat_sources import choose_template

        if k not in self._templates:
            self._templates[k] = choose_template(self.options.specs[k], self.options.template)
        return self._templates[k]

    def count(self, records: Sequence[Record], first: int) -> list[ExampleCount | Skip]:
        """Count a batch of records: every ordinary text the batch needs, in every tokenizer, goes
        to the library's batch encoder in one call (a call per conversation would spend more on
        the encoder's threads than on encoding)."""
        batches: list[list[str]] = [[] for _ in self.tokenizers]  # per tokenizer: texts to count
        plans: list[Skip | _ChatPlan | tuple[int, ...]] = []
        for record in records:
            if isinstance(record, Skip):
                plans.append(record)
            elif record.is_chat:
                plans.append(self._plan_chat(record, batches))
            else:
                plans.append(tuple(_add(batch, [record.text or ""]) for batch in batches))
        lengths = self._lengths(batches)
        out: list[ExampleCount | Skip] = []
        for i, (record, plan) in enumerate(zip(records, plans)):
            if isinstance(plan, Skip):  # the record's own, or its conversation's
                out.append(plan)
                continue
            example = cast(Example, record)
            if isinstance(plan, tuple):
                text = example.text or ""
                out.append(ExampleCount(first + i, example.source, False, len(text),
                                        tuple(n[at] for n, at in zip(lengths, plan)), **self.scripts([text])))
            else:
                out.append(self._chat_count(example, first + i, plan, lengths))
        return out

    def scripts(self, texts: Sequence[str]) -> dict[str, Any]:
        """`ExampleCount`'s script fields for `texts` (none unless `options.scripts`)."""
        if not self.options.scripts:
            return {}
        from tokviz.analysis.attribution import add_share_counts, share_counts, share_weights
        from tokviz.core.scripts import SCRIPTS, char_classes

        chars = np.zeros(len(SCRIPTS), dtype=np.int64)
        shares = [np.zeros((len(SCRIPTS), 1), dtype=np.int64) for _ in self.tokenizers]
        for text in texts:
            if not text:
                continue
            classes = char_classes(text)
            chars += np.bincount(classes, minlength=len(SCRIPTS))
            for k, tokenizer in enumerate(self.tokenizers):
                shares[k] = add_share_counts(shares[k], share_counts(text, tokenizer.encode_columns(text), classes))
        return {"script_chars": tuple(chars.tolist()),
                "script_tokens": tuple(tuple(share_weights(s).tolist()) for s in shares)}

    def count_chat(self, example: Example, index: int) -> ExampleCount | Skip:
        """A conversation's count per tokenizer, exactly `tokviz chat`'s total (see `_plan_chat`)."""
        batches: list[list[str]] = [[] for _ in self.tokenizers]
        plan = self._plan_chat(example, batches)
        if isinstance(plan, Skip):
            return plan
        return self._chat_count(example, index, plan, self._lengths(batches))

    def _lengths(self, batches: list[list[str]]) -> list[list[int]]:
        """Each tokenizer's token count of each text of its batch, by the library's batch encoder."""
        return [[len(ids) for ids in tokenizer.encode_ordinary_batch(batch)] if batch else []
                for tokenizer, batch in zip(self.tokenizers, batches)]

    def _plan_chat(self, example: Example, batches: list[list[str]]) -> Skip | _ChatPlan:
        """How each tokenizer counts a conversation, its texts put in `batches` to be counted.

        The prompt is rendered once per distinct template and cut into the template's special
        tokens and the ordinary text between them, which the library's batch encoder counts: the
        same segments `analyze_chat` encodes, without building a `Token` per token. Only a
        conversation whose content spells a special token or a template-like marker goes through
        `analyze_chat` whole, for its findings. The template overhead is `analyze_chat`'s (tokens
        mostly of the template's text) there, and elsewhere the template's text pieces counted
        alone: the same but for a token BPE merges across a template/content boundary.
        """
        try:
            messages = check_messages(example.messages)
        except ValueError as e:
            return Skip(example.source, str(e))
        contents = [c for m in messages if isinstance(c := m.get("content"), str)]
        renders: dict[tuple[Any, ...], Rendered] = {}
        plans: list[_Plan] = []
        for k, tokenizer in enumerate(self.tokenizers):
            template = self.template(k)
            key = (template.source, tuple(sorted(template.special_strings.items())))
            try:
                if key not in renders:
                    renders[key] = template.render(
                        messages, add_generation_prompt=self.options.generation_prompt, tools=example.tools,
                        **dict(self.options.template_kwargs),
                    )
                rendered = renders[key]
                if sanitize(rendered.text) != rendered.text or self._suspicious(k, rendered, contents):
                    analysis = analyze_chat(
                        tokenizer, template, messages, tools=example.tools,
                        add_generation_prompt=self.options.generation_prompt,
                        template_kwargs=self.options.template_kwargs,
                    )
                    notes = tuple(f.describe(tokenizer.name) for f in analysis.findings if f.message is not None)
                    plans.append(_Plan(analysis.total, analysis.overhead, notes))
                else:
                    trusted, ordinary, pieces = _rendered_parts(tokenizer, rendered)
                    start = _add(batches[k], ordinary)
                    _add(batches[k], pieces)
                    plans.append(_Plan(trusted, trusted, (), start, len(ordinary), len(pieces)))
            except ChatTemplateError as e:
                return Skip(example.source, f"{self.options.specs[k]}'s template rejects it: {e}")
        return _ChatPlan(plans, contents)

    def _chat_count(self, example: Example, index: int, chat: _ChatPlan, lengths: list[list[int]]) -> ExampleCount:
        plans, contents = chat.plans, chat.contents
        totals, overheads = [], []
        for plan, n in zip(plans, lengths):
            a, b = plan.start, plan.start + plan.ordinary
            totals.append(plan.total + sum(n[a:b]))
            overheads.append(plan.overhead + sum(n[b : b + plan.pieces]))
        return ExampleCount(index, example.source, True, sum(map(len, contents)), tuple(totals), tuple(overheads),
                            tuple(plan.notes for plan in plans), **self.scripts(contents))

    def _suspicious(self, k: int, rendered: Rendered, contents: Sequence[str]) -> bool:
        """Content that may give a finding (`analysis.chat._findings`): a special token's text, or
        a marker the template itself writes (an HTML tag in content is no finding unless the
        template writes that tag)."""
        text = rendered.text
        markers = {m.group() for start, end in rendered.template_spans() for m in MARKER.finditer(text, start, end)}
        tokenizer = self.tokenizers[k]
        for content in contents:
            if any(marker in content for marker in markers):
                return True
            if any(special is not None for _, _, special in tokenizer.split_special(content, "all", ())):
                return True
        return False


@dataclass(frozen=True)
class _Plan:
    """One tokenizer's count of a conversation: `total` and `overhead` so far, plus the counts of
    the `ordinary` texts from `start` in its batch (the prompt's) and the `pieces` after them
    (the template's own text)."""

    total: int
    overhead: int
    notes: tuple[str, ...]
    start: int = 0
    ordinary: int = 0
    pieces: int = 0


@dataclass(frozen=True)
class _ChatPlan:
    plans: list[_Plan]  # one per tokenizer
    contents: list[str]  # the messages' content


def _add(batch: list[str], texts: Sequence[str]) -> int:
    """Put `texts` at the end of `batch`; where they start."""
    start = len(batch)
    batch.extend(texts)
    return start


def _rendered_parts(tokenizer: Tokenizer, rendered: Rendered) -> tuple[int, list[str], list[str]]:
    """A rendered prompt as `(control tokens, ordinary segments, template text pieces)`: its
    count is `len(tokenizer.encode_trusted(text, trusted_special_spans(...)))` = the control
    tokens + the segments' counts; its template overhead the control tokens + the pieces'."""
    text = rendered.text
    trusted = trusted_special_spans(tokenizer, rendered)
    ordinary = [text[a:b] for a, b, special in tokenizer.split_special_at(text, trusted) if special is None]
    pieces = []
    spans = iter(trusted)
    span = next(spans, None)
    for start, end in rendered.template_spans():
        pos = start
        while span is not None and span[1] <= end:
            if span[0] > pos:
                pieces.append(text[pos:span[0]])
            pos = span[1]
            span = next(spans, None)
        if pos < end:
            pieces.append(text[pos:end])
    return len(trusted), ordinary, pieces


_WORKER: Counter | None = None


def _start_worker(options: DatasetOptions) -> None:
    global _WORKER
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _WORKER = Counter(options)


def _count_shard(shard: Shard, field_: str | None) -> list[ExampleCount | Skip]:
    if _WORKER is None:
        raise RuntimeError("worker not started")
    return _count_shard_with(_WORKER, shard, field_)


def _count_shard_with(counter: Counter, shard: Shard, field_: str | None,
                      cancel: threading.Event | None = None) -> list[ExampleCount | Skip]:
    out: list[ExampleCount | Skip] = []
    for records in read_shard(shard, field=field_, batch=BATCH):
        out.extend(counter.count(records, len(out)))
        if cancel is not None and cancel.is_set():
            break
    return out


def _count_batch(records: list[Record], first: int) -> list[ExampleCount | Skip]:
    if _WORKER is None:
        raise RuntimeError("worker not started")
    return _WORKER.count(records, first)


# -- the run -----------------------------------------------------------------------------------------


class Remote(Protocol):
    """Counts somewhere else (a Dask cluster: `tokviz.analysis.dataset_cluster`), in input order."""

    def shards(self, shards: Sequence[Shard], field: str | None) -> Iterator[list[ExampleCount | Skip]]: ...

    def batches(self, batches: Iterable[list[Record]]) -> Iterator[list[ExampleCount | Skip]]: ...


def _shard_bytes(shard: Shard) -> int:
    if shard.end is not None:
        return shard.end - shard.start
    try:
        size = os.path.getsize(shard.path)
    except OSError:
        return 0
    return size // shard.parts  # a row group's share of its Parquet file (the footer was read once, listing)


def count_dataset(
    paths: Iterable[str | os.PathLike[str]],
    options: DatasetOptions,
    *,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    tokenizers: Sequence[Tokenizer] | None = None,
    shard_bytes: int = SHARD_BYTES,
    remote: Remote | None = None,
) -> Iterator[ExampleCount | Skip]:
    """Count every example of `paths` in every tokenizer; results in input order, as they come.

    `tokenizers` (already loaded, for `options.specs`) are used when counting in this process
    (`jobs` 1). `remote`, when given, counts the shards (or the sample's batches) instead of
    this process and its workers. Stops quietly when `cancel` is set, leaving the shards being
    counted. Raises `TemplateSourceError` when a conversation meets a tokenizer without a chat
    template. `shard_bytes`: the size of a big JSONL file's byte ranges; smaller ones report
    progress more often (a window's progress bar).
    """
    paths = list(paths)
    shards = list_shards(paths, split_bytes=shard_bytes)
    sizes = [_shard_bytes(s) for s in shards]
    state = Progress(0, 0, 0, sum(sizes))
    local = Counter(options, tokenizers) if options.jobs <= 1 and remote is None else None
    stream: Iterator[tuple[list[ExampleCount | Skip], int]]
    if sample is not None and remote is not None:
        stream = _remote_sampled(remote, read_examples(paths, field=options.field, sample=sample, seed=seed,
                                                       limit=limit))
    elif sample is not None:
        stream = _sampled(paths, options, local, sample, seed, limit, cancel)
    elif remote is not None:
        stream = zip(remote.shards(shards, options.field), sizes)
    else:
        stream = _sharded(shards, sizes, options, local, cancel)
    index = 0
    lines = _LineFinder()
    for results, done_bytes in stream:
        if cancel is not None and cancel.is_set():
            return
        for r in results:
            if isinstance(r, ExampleCount):
                if sample is None:
                    r = _reindex(r, index)
                state = Progress(state.examples + 1, state.skipped, state.done_bytes, state.total_bytes)
            else:
                r = lines.fix(r)
                state = Progress(state.examples, state.skipped + 1, state.done_bytes, state.total_bytes)
            index += 1
            yield r
            if limit is not None and sample is None and index >= limit:
                return
        state = Progress(state.examples, state.skipped, state.done_bytes + done_bytes, state.total_bytes)
        if progress is not None:
            progress(state)
        if cancel is not None and cancel.is_set():
            return


def _reindex(r: ExampleCount, index: int) -> ExampleCount:
    return r if r.index == index else ExampleCount(index, *_fields(r)[1:])


def _fields(r: ExampleCount) -> tuple[Any, ...]:
    return (r.index, r.source, r.chat, r.chars, r.tokens, r.overhead, r.findings, r.script_chars, r.script_tokens)


@contextmanager
def _pool(options: DatasetOptions, cancel: threading.Event | None) -> Iterator[cf.ProcessPoolExecutor]:
    """The worker processes; when the run was cancelled, stopped at once rather than waited for."""
    pool = cf.ProcessPoolExecutor(options.jobs, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_start_worker, initargs=(options,))
    try:
        yield pool
    finally:
        if cancel is not None and cancel.is_set():
            # ProcessPoolExecutor has no public way to stop a running task before Python 3.14
            # (`terminate_workers`); before it, its processes are what it would wait for
            terminate = getattr(pool, "terminate_workers", None)
            if terminate is not None:
                terminate()
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _result(future: cf.Future[list[ExampleCount | Skip]],
            cancel: threading.Event | None) -> list[ExampleCount | Skip] | None:
    """The future's result, or None as soon as `cancel` is set while it is being counted.

    An `AbortFlag` (the window's) wakes the wait when it is set; a plain event (the command
    line's, stopped by Ctrl-C) is looked at when the shard is done."""
    if not isinstance(cancel, AbortFlag):
        return None if cancel is not None and cancel.is_set() else future.result()
    stop: cf.Future[None] = cf.Future()
    with cancel.waking(lambda: stop.set_result(None) if not stop.done() else None):
        waiting: list[cf.Future[Any]] = [future, stop]
        cf.wait(waiting, return_when=cf.FIRST_COMPLETED)
    return None if cancel.is_set() else future.result()


def _sharded(
    shards: Sequence[Shard], sizes: Sequence[int], options: DatasetOptions, local: Counter | None,
    cancel: threading.Event | None = None,
) -> Iterator[tuple[list[ExampleCount | Skip], int]]:
    if local is not None:
        for shard, size in zip(shards, sizes):
            yield _count_shard_with(local, shard, options.field, cancel), size
        return
    with _pool(options, cancel) as pool:
        pending: deque[tuple[cf.Future[list[ExampleCount | Skip]], int]] = deque()
        todo = iter(zip(shards, sizes))
        try:
            while True:
                while len(pending) < 2 * options.jobs:
                    item = next(todo, None)
                    if item is None:
                        break
                    pending.append((pool.submit(_count_shard, item[0], options.field), item[1]))
                if not pending:
                    return
                future, size = pending.popleft()
                results = _result(future, cancel)
                if results is None:
                    return
                yield results, size
        finally:
            for future, _ in pending:
                future.cancel()


def _sampled(
    paths: list[Any], options: DatasetOptions, local: Counter | None, sample: int, seed: int, limit: int | None,
    cancel: threading.Event | None = None,
) -> Iterator[tuple[list[ExampleCount | Skip], int]]:
    batches = read_examples(paths, field=options.field, sample=sample, seed=seed, limit=limit)
    if local is not None:
        for batch in batches:
            yield _with_index(local.count([r for _, r in batch], 0), batch), 0
        return
    with _pool(options, cancel) as pool:
        pending: deque[tuple[cf.Future[list[ExampleCount | Skip]], list[tuple[int, Record]]]] = deque()
        for batch in batches:
            pending.append((pool.submit(_count_batch, [r for _, r in batch], 0), batch))
            if len(pending) >= 2 * options.jobs:
                future, b = pending.popleft()
                results = _result(future, cancel)
                if results is None:
                    return
                yield _with_index(results, b), 0
        while pending:
            future, b = pending.popleft()
            results = _result(future, cancel)
            if results is None:
                return
            yield _with_index(results, b), 0


def _remote_sampled(
    remote: Remote, batches: Iterable[list[tuple[int, Record]]]
) -> Iterator[tuple[list[ExampleCount | Skip], int]]:
    sent: deque[list[tuple[int, Record]]] = deque()

    def records() -> Iterator[list[Record]]:
        for batch in batches:
            sent.append(batch)
            yield [r for _, r in batch]

    for results in remote.batches(records()):
        yield _with_index(results, sent.popleft()), 0


def _with_index(results: list[ExampleCount | Skip], batch: list[tuple[int, Record]]) -> list[ExampleCount | Skip]:
    return [ExampleCount(i, *_fields(r)[1:]) if isinstance(r, ExampleCount) else r
            for r, (i, _) in zip(results, batch)]


class _LineFinder:
    """Turns `file:byte N` (a record of a byte-range shard) into `file:line L`, counting newlines
    once per file as skips arrive in order."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.offset = 0
        self.line = 1

    def fix(self, skip: Skip) -> Skip:
        path, sep, at = skip.source.rpartition(":byte ")
        if not sep or not at.isdigit():
            return skip
        offset = int(at)
        if path != self.path or offset < self.offset:
            self.path, self.offset, self.line = path, 0, 1
        with open(path, "rb") as f:
            f.seek(self.offset)
            left = offset - self.offset
            while left > 0:
                block = f.read(min(left, 1 << 20))
                if not block:
                    break
                self.line += block.count(b"\n")
                left -= len(block)
        self.offset = offset
        return Skip(f"{path}:line {self.line}", skip.reason)


# -- the summary -------------------------------------------------------------------------------------


@dataclass
class TokenizerSummary:
    name: str
    examples: int
    tokens: int
    chars: int
    mean: float | None
    median: float | None
    p90: float | None
    p99: float | None
    max: int | None
    over_context: int | None
    cost: float | None
    ratio_to_first: float | None
    template_overhead_mean: float | None
    findings: int
    examples_with_findings: int

    @property
    def chars_per_token(self) -> float | None:
        return self.chars / self.tokens if self.tokens else None

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "chars_per_token": self.chars_per_token}


@dataclass(frozen=True)
class Disagreement:
    index: int
    source: str
    tokens: tuple[int, ...]
    spread: float  # the largest count over the smallest


class DatasetSummary:
    """Folds `ExampleCount`s into per-tokenizer figures; keeps one int per example and tokenizer
    (for the percentiles), a few examples' findings and the top disagreements."""

    def __init__(self, names: Sequence[str], *, context: int | None = None,
                 prices: Mapping[str, float] | None = None, top: int = 10, keep_findings: int = 20) -> None:
        self.names = list(names)
        self.context, self.prices, self.top, self.keep_findings = context, dict(prices or {}), top, keep_findings
        self.counts = [array("q") for _ in names]
        self.chars = 0
        self.chats = 0
        self.overhead = [0] * len(names)
        self.finding_counts = [0] * len(names)
        self.finding_examples = [0] * len(names)
        self.findings: list[tuple[int, str, str, str]] = []  # index, source, tokenizer, note
        self.skips: list[Skip] = []
        self.skipped = 0
        self._disagree: list[tuple[float, int, Disagreement]] = []
        self.script_chars: np.ndarray | None = None  # with DatasetOptions.scripts: chars per class
        self.script_tokens: np.ndarray | None = None  # and tokens per tokenizer and class

    def add(self, result: ExampleCount | Skip, *, keep_skips: int = 1000) -> None:
        if isinstance(result, Skip):
            self.skipped += 1
            if len(self.skips) < keep_skips:
                self.skips.append(result)
            return
        self.chars += result.chars
        for k, n in enumerate(result.tokens):
            self.counts[k].append(n)
        if result.script_chars:
            if self.script_chars is None or self.script_tokens is None:
                self.script_chars = np.zeros(len(result.script_chars), dtype=np.int64)
                self.script_tokens = np.zeros((len(self.names), len(result.script_chars)))
            self.script_chars += result.script_chars
            self.script_tokens += result.script_tokens
        if result.overhead is not None:
            self.chats += 1
            for k, n in enumerate(result.overhead):
                self.overhead[k] += n
        for k, notes in enumerate(result.findings):
            if notes:
                self.finding_counts[k] += len(notes)
                self.finding_examples[k] += 1
                for note in notes:
                    if len(self.findings) < self.keep_findings:
                        self.findings.append((result.index, result.source, self.names[k], note))
        if len(result.tokens) > 1 and min(result.tokens) > 0:
            spread = max(result.tokens) / min(result.tokens)
            item = (spread, -result.index, Disagreement(result.index, result.source, result.tokens, spread))
            if len(self._disagree) < self.top:
                heapq.heappush(self._disagree, item)
            elif item[:2] > self._disagree[0][:2]:
                heapq.heapreplace(self._disagree, item)

    @property
    def examples(self) -> int:
        return len(self.counts[0]) if self.counts else 0

    def disagreements(self) -> list[Disagreement]:
        return [d for _, _, d in sorted(self._disagree, key=lambda x: x[:2], reverse=True)]

    def results(self) -> list[TokenizerSummary]:
        first = sum(self.counts[0]) if self.counts else 0
        out = []
        for k, name in enumerate(self.names):
            values = np.frombuffer(self.counts[k], dtype=np.int64) if len(self.counts[k]) else np.zeros(0, np.int64)
            total = int(values.sum())
            n = len(values)

            def pct(q: float, values: np.ndarray = values) -> float | None:
                return float(np.percentile(values, q, method="inverted_cdf")) if len(values) else None

            price = self.prices.get(name)
            out.append(TokenizerSummary(
                name, n, total, self.chars, total / n if n else None, pct(50), pct(90), pct(99),
                int(values.max()) if n else None,
                int((values > self.context).sum()) if self.context is not None else None,
                None if price is None else total * price / 1e6,
                total / first if first else None,
                self.overhead[k] / self.chats if self.chats else None,
                self.finding_counts[k], self.finding_examples[k],
            ))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples, "skipped": self.skipped, "chars": self.chars, "chats": self.chats,
            "context": self.context,
            "tokenizers": [r.to_dict() for r in self.results()],
            "disagreements": [{"example": d.index, "source": d.source, "spread": d.spread,
                               "tokens": dict(zip(self.names, d.tokens))} for d in self.disagreements()],
            "findings": [{"example": i, "source": s, "tokenizer": t, "note": n} for i, s, t, n in self.findings],
            "skips": [{"source": s.source, "reason": s.reason} for s in self.skips],
            **({"scripts": self.script_rows()} if self.script_chars is not None else {}),
        }

    def script_rows(self) -> list[dict[str, Any]]:
        """One row per tokenizer and script present, as `tokviz stats --json` gives them:
        `{tokenizer, script, chars, tokens, tokens_per_char}`."""
        from tokviz.core.scripts import SCRIPTS

        if self.script_chars is None or self.script_tokens is None:
            return []
        return [
            {"tokenizer": name, "script": script, "chars": int(self.script_chars[c]),
             "tokens": float(self.script_tokens[k, c]),
             "tokens_per_char": float(self.script_tokens[k, c]) / int(self.script_chars[c])}
            for k, name in enumerate(self.names) for c, script in enumerate(SCRIPTS) if self.script_chars[c]
        ]


