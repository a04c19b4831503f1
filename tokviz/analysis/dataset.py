"""What a dataset costs in each tokenizer, example by example, each conversation rendered with the
model's own chat template.

`count_dataset` reads the examples of some paths (`tokviz.core.records`) and yields, in input
order, one `ExampleCount` per example or a `Skip` per record that could not be counted (a torn
line, a row without the field, a conversation a template rejects). A text is counted as `tokviz
encode` counts it (no special-token parsing: `Tokenizer.encode_ordinary_batch`); a conversation
as `tokviz chat` does (`analysis.chat`: rendered, special tokens parsed only where the template
wrote them). `DatasetSummary` folds the counts into per-tokenizer figures (percentiles, cost,
room in a context) and the examples where the tokenizers disagree most.

Work goes to `jobs` spawned worker processes (spawned, not forked: the GUI's process runs Qt
threads), one shard (a file, a Parquet row group, a byte range of a big JSONL file) per task, so
a worker reads and parses what it counts and only the counts come back; with `--sample`, the
sample is drawn here and sent in batches. Results are put back in input order; at most a few
shards per worker are in flight, so memory is bounded by the shards, not the dataset.

The caller passes `progress(Progress)` and a `threading.Event` to cancel between shards; nothing
here draws (no Qt, no terminal).
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
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from tokviz.analysis.chat import MARKER, analyze_chat, check_messages, trusted_special_spans
from tokviz.analysis.chat_template import ChatTemplate, ChatTemplateError, Rendered
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
        out: list[ExampleCount | Skip | None] = [None] * len(records)
        texts = [(i, r) for i, r in enumerate(records) if isinstance(r, Example) and not r.is_chat]
        per_tok = [t.encode_ordinary_batch([r.text or "" for _, r in texts]) for t in self.tokenizers]
        for j, (i, r) in enumerate(texts):
            out[i] = ExampleCount(first + i, r.source, False, len(r.text or ""),
                                  tuple(len(ids[j]) for ids in per_tok))
        for i, record in enumerate(records):
            if isinstance(record, Skip):
                out[i] = record
            elif record.is_chat:
                out[i] = self.count_chat(record, first + i)
        return [o for o in out if o is not None]

    def count_chat(self, example: Example, index: int) -> ExampleCount | Skip:
        """A conversation's count per tokenizer, exactly `tokviz chat`'s total.

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
        totals, overheads, findings = [], [], []
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
                notes: tuple[str, ...] = ()
                if sanitize(rendered.text) != rendered.text or self._suspicious(k, rendered, contents):
                    analysis = analyze_chat(
                        tokenizer, template, messages, tools=example.tools,
                        add_generation_prompt=self.options.generation_prompt,
                        template_kwargs=self.options.template_kwargs,
                    )
                    total, overhead = analysis.total, analysis.overhead
                    notes = tuple(f.describe(tokenizer.name) for f in analysis.findings if f.message is not None)
                else:
                    total, overhead = _count_rendered(tokenizer, rendered)
            except ChatTemplateError as e:
                return Skip(example.source, f"{self.options.specs[k]}'s template rejects it: {e}")
            totals.append(total)
            overheads.append(overhead)
            findings.append(notes)
        chars = sum(map(len, contents))
        return ExampleCount(index, example.source, True, chars, tuple(totals), tuple(overheads), tuple(findings))

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


def _count_rendered(tokenizer: Tokenizer, rendered: Rendered) -> tuple[int, int]:
    """(`len(tokenizer.encode_trusted(text, trusted_special_spans(...)))`, the template's own
    tokens), by the batch encoder: the prompt's ordinary segments, and the template's text
    pieces each counted alone, in one call."""
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
    counts = list(map(len, tokenizer.encode_ordinary_batch(ordinary + pieces)))
    return len(trusted) + sum(counts[:len(ordinary)]), len(trusted) + sum(counts[len(ordinary):])


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


def _count_shard_with(counter: Counter, shard: Shard, field_: str | None) -> list[ExampleCount | Skip]:
    out: list[ExampleCount | Skip] = []
    for records in read_shard(shard, field=field_, batch=BATCH):
        out.extend(counter.count(records, len(out)))
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
    remote: Remote | None = None,
) -> Iterator[ExampleCount | Skip]:
    """Count every example of `paths` in every tokenizer; results in input order, as they come.

    `tokenizers` (already loaded, for `options.specs`) are used when counting in this process
    (`jobs` 1). `remote`, when given, counts the shards (or the sample's batches) instead of
    this process and its workers. Stops quietly, between shards, when `cancel` is set. Raises
    `TemplateSourceError` when a conversation meets a tokenizer without a chat template.
    """
    paths = list(paths)
    shards = list_shards(paths, split_bytes=SHARD_BYTES)
    sizes = [_shard_bytes(s) for s in shards]
    state = Progress(0, 0, 0, sum(sizes))
    local = Counter(options, tokenizers) if options.jobs <= 1 and remote is None else None
    stream: Iterator[tuple[list[ExampleCount | Skip], int]]
    if sample is not None and remote is not None:
        stream = _remote_sampled(remote, read_examples(paths, field=options.field, sample=sample, seed=seed,
                                                       limit=limit))
    elif sample is not None:
        stream = _sampled(paths, options, local, sample, seed, limit)
    elif remote is not None:
        stream = zip(remote.shards(shards, options.field), sizes)
    else:
        stream = _sharded(shards, sizes, options, local)
    index = 0
    lines = _LineFinder()
    for results, done_bytes in stream:
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
    return (r.index, r.source, r.chat, r.chars, r.tokens, r.overhead, r.findings)


def _pool(options: DatasetOptions) -> cf.ProcessPoolExecutor:
    return cf.ProcessPoolExecutor(options.jobs, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_start_worker, initargs=(options,))


def _sharded(
    shards: Sequence[Shard], sizes: Sequence[int], options: DatasetOptions, local: Counter | None
) -> Iterator[tuple[list[ExampleCount | Skip], int]]:
    if local is not None:
        for shard, size in zip(shards, sizes):
            yield _count_shard_with(local, shard, options.field), size
        return
    with _pool(options) as pool:
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
                yield future.result(), size
        finally:
            for future, _ in pending:
                future.cancel()


def _sampled(
    paths: list[Any], options: DatasetOptions, local: Counter | None, sample: int, seed: int, limit: int | None
) -> Iterator[tuple[list[ExampleCount | Skip], int]]:
    batches = read_examples(paths, field=options.field, sample=sample, seed=seed, limit=limit)
    if local is not None:
        for batch in batches:
            yield _with_index(local.count([r for _, r in batch], 0), batch), 0
        return
    with _pool(options) as pool:
        pending: deque[tuple[cf.Future[list[ExampleCount | Skip]], list[tuple[int, Record]]]] = deque()
        for batch in batches:
            pending.append((pool.submit(_count_batch, [r for _, r in batch], 0), batch))
            if len(pending) >= 2 * options.jobs:
                future, b = pending.popleft()
                yield _with_index(future.result(), b), 0
        while pending:
            future, b = pending.popleft()
            yield _with_index(future.result(), b), 0


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

    def add(self, result: ExampleCount | Skip, *, keep_skips: int = 1000) -> None:
        if isinstance(result, Skip):
            self.skipped += 1
            if len(self.skips) < keep_skips:
                self.skips.append(result)
            return
        self.chars += result.chars
        for k, n in enumerate(result.tokens):
            self.counts[k].append(n)
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
        }


