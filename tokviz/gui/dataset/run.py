"""A Dataset tab's run, Qt-free: `tokviz dataset`'s own counting (`analysis.dataset.count_dataset`)
folded into an `ExampleTable` (one row per example, columns in numpy) and a `DatasetSummary`.

`count(request, cancel, report)` is the work a `Worker` runs: it reports `RunProgress` now and
then and returns a `DatasetResult`. The counts are the CLI's, number for number: the same
function counts them, with the same options. Beside the counts it reads the records once more, in
the same order (`records.read_examples`), for a short preview of each example: `count_dataset`
gives back counts only, and the worker processes that read the shards keep their records.
`read_example` finds one example again, to open it in the Text or Chat tab.
"""

from __future__ import annotations

import os
import re
import threading
import time
from array import array
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tokviz.analysis.dataset import DatasetOptions, DatasetSummary, ExampleCount, Progress, count_dataset
from tokviz.core.records import DatasetError, Example, Record, Skip, read_examples

PREVIEW_CHARS = 90
#: a big JSONL file's byte ranges: smaller than the CLI's (16 MB), so that a file of a few MB is
#: still counted by every worker process and the progress bar moves
SHARD_BYTES = 1 << 20
REPORT_SECONDS = 0.1


@dataclass(frozen=True)
class DatasetRequest:
    """What to count: the paths, the tokenizers (the window's pane specs) and the options."""

    paths: tuple[str, ...]
    specs: tuple[str, ...]
    field: str | None = None
    template: str | None = None  # None: each model's own chat template
    jobs: int = 1
    shard_bytes: int = SHARD_BYTES


@dataclass(frozen=True)
class RunProgress:
    examples: int
    skipped: int
    done_bytes: int
    total_bytes: int
    seconds: float

    @property
    def rate(self) -> float:
        """Bytes per second so far."""
        return self.done_bytes / self.seconds if self.seconds > 0 else 0.0


class Strings:
    """Many short strings in one UTF-8 buffer: 8 bytes of offset each rather than a Python object
    each (a million previews were ~150 MB as `str`s).

    >>> s = Strings(); s.append("héllo"); s.append(""); s.append("ok")
    >>> len(s), s[0], s[1], s[-1], list(s)
    (3, 'héllo', '', 'ok', ['héllo', '', 'ok'])
    """

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("q")

    def append(self, text: str) -> None:
        self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += len(self._ends)
        start = self._ends[i - 1] if i else 0  # IndexError from the array past the end
        return self._data[start:self._ends[i]].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))


_PLACE = re.compile(r":((?:line|row|byte) \d+)$")  # a record's place after its file's path


class Sources:
    """Where each example is (`file:line 3`, `file:row 7`, a text file's path), kept as a file
    number and the place: the path is stored once per file, not once per example.

    >>> s = Sources(); s.append("/d/a.jsonl:line 3"); s.append("/d/b.txt"); s.append("/d/a.jsonl:line 4")
    >>> list(s), s.files
    (['/d/a.jsonl:line 3', '/d/b.txt', '/d/a.jsonl:line 4'], ['/d/a.jsonl', '/d/b.txt'])
    """

    def __init__(self) -> None:
        self.files: list[str] = []
        self._numbers: dict[str, int] = {}
        self._file = array("i")
        self._place = Strings()

    def append(self, source: str) -> None:
        found = _PLACE.search(source)
        path, place = (source[:found.start()], found.group(1)) if found else (source, "")
        number = self._numbers.setdefault(path, len(self.files))
        if number == len(self.files):
            self.files.append(path)
        self._file.append(number)
        self._place.append(place)

    def place(self, i: int) -> str:
        """The line or row alone ("" for a whole file)."""
        return self._place[i]

    def file(self, i: int) -> str:
        return self.files[self._file[i]]

    def __len__(self) -> int:
        return len(self._file)

    def __getitem__(self, i: int) -> str:
        place = self._place[i]
        return f"{self.file(i)}:{place}" if place else self.file(i)

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))


@dataclass
class ExampleTable:
    """One row per counted example, in input order: its index in the input, where it is, a
    preview, whether it is a conversation, its characters and its count per tokenizer."""

    names: list[str]
    index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tokens: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))  # rows x tokenizers
    chars: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    chat: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    findings: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # notes, all tokenizers
    sources: Sources = field(default_factory=Sources)
    previews: Strings = field(default_factory=Strings)
    notes: list[tuple[str, ...]] = field(default_factory=list)  # "tokenizer: finding" lines per row

    def __len__(self) -> int:
        return len(self.index)

    @property
    def spread(self) -> np.ndarray:
        """The largest count over the smallest, per example (1.0 where a count is 0 or one tokenizer)."""
        if not len(self) or self.tokens.shape[1] < 2:
            return np.ones(len(self))
        low, high = self.tokens.min(axis=1), self.tokens.max(axis=1)
        return np.where(low > 0, high / np.maximum(low, 1), 1.0)


@dataclass
class DatasetResult:
    request: DatasetRequest
    table: ExampleTable
    summary: DatasetSummary
    seconds: float
    cancelled: bool = False


class _Builder:
    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.index: list[int] = []
        self.tokens: list[tuple[int, ...]] = []
        self.chars: list[int] = []
        self.chat: list[bool] = []
        self.findings: list[int] = []
        self.sources = Sources()
        self.previews = Strings()
        self.notes: list[tuple[str, ...]] = []

    def add(self, count: ExampleCount, record: Record | None) -> None:
        self.index.append(count.index)
        self.tokens.append(count.tokens)
        self.chars.append(count.chars)
        self.chat.append(count.chat)
        # a byte range's examples are "file:byte N" in the counts; the preview's reading has the line
        self.sources.append(record.source if isinstance(record, Example) else count.source)
        self.previews.append(preview(record) if isinstance(record, Example) else "")
        lines = tuple(f"{name}: {note}" for name, notes in zip(self.names, count.findings) for note in notes)
        self.findings.append(len(lines))
        self.notes.append(lines)

    def table(self) -> ExampleTable:
        k = len(self.names)
        return ExampleTable(
            self.names, np.array(self.index, np.int64),
            np.array(self.tokens, np.int64).reshape(len(self.tokens), k), np.array(self.chars, np.int64),
            np.array(self.chat, bool), np.array(self.findings, np.int64), self.sources, self.previews, self.notes,
        )


def preview(example: Example) -> str:
    """One line to recognise an example by: the start of its text, or of its first non-system message.

    >>> preview(Example("x", messages=[{"role": "system", "content": "Be brief."},
    ...                                {"role": "user", "content": "Hi\\n there"}]))
    '[2 messages] user: Hi there'
    """
    if example.messages is not None:
        shown = next((m for m in example.messages if m.get("role") != "system"), None) or (example.messages or [{}])[0]
        content = shown.get("content")
        text = content if isinstance(content, str) else "" if content is None else str(content)
        n = len(example.messages)
        return _line(f"[{n} message{'s' * (n != 1)}] {shown.get('role', '?')}: {text}")
    return _line(example.text or "")


def _line(text: str) -> str:
    line = " ".join(text[:PREVIEW_CHARS * 4].split())
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS - 1] + "…"


def count(request: DatasetRequest, cancel: threading.Event,
          report: Callable[[RunProgress], None] | None = None,
          tokenizers: Sequence[Any] | None = None) -> DatasetResult:
    """Count `request` as `tokviz dataset PATHS -t SPECS` does; returns when done or cancelled.

    Raises DatasetError (a path that cannot be read), TokenizerError (a spec that does not load),
    TemplateSourceError (a conversation for a model without a chat template) and ValueError when
    nothing could be counted."""
    from tokviz.core import catalog

    for path in request.paths:
        if not os.path.exists(path):
            raise DatasetError(f"{path}: no such file or folder")
    if tokenizers is None:
        tokenizers = [catalog.load(spec) for spec in request.specs]
    names = [t.name for t in tokenizers]
    options = DatasetOptions(request.specs, template=request.template, field=request.field, jobs=request.jobs)
    summary = DatasetSummary(names)
    builder = _Builder(names)
    start = time.monotonic()
    last = [float("-inf")]

    def progress(p: Progress) -> None:
        now = time.monotonic()
        if report is not None and (now - last[0] >= REPORT_SECONDS or p.done_bytes >= p.total_bytes):
            last[0] = now
            report(RunProgress(p.examples, p.skipped, p.done_bytes, p.total_bytes, now - start))

    records = _records(request)
    results = count_dataset(request.paths, options, progress=progress, cancel=cancel, tokenizers=tokenizers,
                            shard_bytes=request.shard_bytes)
    assert isinstance(results, Generator)
    try:
        for result in results:
            record = next(records, None)
            summary.add(result)
            if isinstance(result, ExampleCount):
                builder.add(result, record)
    finally:
        results.close()  # on an error here, the worker processes go now, not when collected
    seconds = time.monotonic() - start
    cancelled = cancel.is_set()
    if not summary.examples and not cancelled:
        why = f": {summary.skips[0]}" if summary.skips else ""
        more = f" (and {summary.skipped - 1:,} more skipped)" if summary.skipped > 1 else ""
        raise ValueError(f"no examples to count{why}{more}")
    return DatasetResult(request, builder.table(), summary, seconds, cancelled)


def _records(request: DatasetRequest) -> Iterator[Record]:
    for batch in read_examples(request.paths, field=request.field):
        for _, record in batch:
            yield record


def read_example(paths: Sequence[str], index: int, *, field: str | None = None) -> Record:
    """The record at `index` (0-based, over every file of `paths` in order, skipped ones included)."""
    for batch in read_examples(paths, field=field, limit=index + 1):
        for i, record in batch:
            if i == index:
                return record
    raise DatasetError(f"the dataset has no example {index} now (did it change on disk?)")


def summary_rows(summary: DatasetSummary, context: int | None) -> list[dict[str, Any]]:
    """The summary table's rows: one dict per tokenizer (the CLI's figures), with `context` applied."""
    summary.context = context
    return [r.to_dict() for r in summary.results()]


def skips_text(skips: Sequence[Skip], skipped: int) -> str:
    lines = [str(s) for s in skips[:200]]
    if skipped > len(lines):
        lines.append(f"… and {skipped - len(lines):,} more")
    return "\n".join(lines)
