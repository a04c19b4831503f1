"""Train on datasets, not only on folders of text: JSONL, JSON, Parquet, CSV, Arrow.

The examples are read with `tokviz dataset`'s readers (`core.records`: the same shards, the
same `--field`, the same skips). Each text is a document of its own, as a text file is; a
conversation gives the content of each of its messages as a document (the trainer learns from
what people and models wrote, not from a chat template's markup). A record that cannot be read
(a torn line, a row without the field, text that is not UTF-8) is skipped and reported, and so
is a text holding a NUL character (as a text file holding one is skipped as binary).

`count_shards` counts some shards into a `ChunkCounter`: the one step both the in-process run
(`count_dataset_corpus`) and a cluster's tasks (`training.cluster`) take, so both count alike.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence

from tokviz.core.records import Example, Record, Shard, list_shards, read_shard
from tokviz.core.walk import Skipped
from tokviz.training.corpus import CorpusReport
from tokviz.training.events import ProgressCallback, Reporter
from tokviz.training.pieces import PieceLog, compact, expand
from tokviz.training.pretokenize import ChunkCounter, compile_pattern

SHARD_BYTES = 16 << 20  # a big JSONL file is cut into byte ranges of this size (as `tokviz dataset` does)


def dataset_shards(paths: Sequence[str | os.PathLike[str]]) -> list[Shard]:
    """The shards of `paths`, in input order (raises `records.DatasetError` for a missing path)."""
    return list_shards(paths, split_bytes=SHARD_BYTES)


def shard_bytes(shard: Shard) -> int:
    """The bytes of its file a shard stands for (a row group: its share of the file)."""
    if shard.end is not None:
        return shard.end - shard.start
    try:
        return os.path.getsize(shard.path) // shard.parts
    except OSError:
        return 0


def documents(record: Example) -> Iterator[str]:
    """The texts of an example: the text, or each message's string content."""
    if record.text is not None:
        yield record.text
        return
    for message in record.messages or ():
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"]


def count_shards(
    shards: Sequence[Shard], counter: ChunkCounter, field: str | None,
    on_shard: Callable[[Shard], None] | None = None,
) -> PieceLog:
    """Add the documents of `shards` to `counter`; log per shard `(path, text bytes, False)` and
    each record skipped. `on_shard(shard)` after each shard (it may raise to cancel)."""
    log = PieceLog()
    for shard in shards:
        size = 0
        for records in read_shard(shard, field=field):
            for record in records:
                size += _add(record, counter, log)
        log.read.append((shard.path, size, False))
        if on_shard is not None:
            on_shard(shard)
    return log


def _add(record: Record, counter: ChunkCounter, log: PieceLog) -> int:
    if not isinstance(record, Example):
        log.skipped.append(Skipped(record.source, record.reason))
        return 0
    texts = list(documents(record))
    if any("\0" in text for text in texts):
        log.skipped.append(Skipped(record.source, "binary (a NUL character)"))
        return 0
    size = 0
    for text in texts:
        data = text.encode("utf-8")
        counter.add(text, data)
        size += len(data)
    return size


def dataset_report(log: PieceLog, counts: dict[str, int]) -> CorpusReport:
    """The report of a dataset run: files read, text bytes, the records skipped (in order, a
    record of a byte-range shard named by its line, as the others are)."""
    report = CorpusReport()
    report.files_read = len({path for path, _, _ in log.read})
    report.bytes = sum(size for _, size, _ in log.read)
    report.files_skipped = _by_line(log.skipped)
    report.unique_chunks = len(counts)
    return report


def _by_line(skipped: Sequence[Skipped]) -> list[Skipped]:
    """`file:byte N` (where a byte-range shard's reader is) as `file:line L`: newlines counted
    once per file, up to its last such offset."""
    offsets: dict[str, set[int]] = {}
    for s in skipped:
        path, sep, at = s.path.rpartition(":byte ")
        if sep and at.isdigit():
            offsets.setdefault(path, set()).add(int(at))
    lines: dict[tuple[str, int], int] = {}
    for path, wanted in offsets.items():
        line, pos = 1, 0
        try:
            with open(path, "rb") as f:
                for offset in sorted(wanted):
                    while pos < offset:
                        block = f.read(min(offset - pos, 1 << 20))
                        if not block:
                            break
                        line += block.count(b"\n")
                        pos += len(block)
                    lines[path, offset] = line
        except OSError:
            continue
    out = []
    for s in skipped:
        path, sep, at = s.path.rpartition(":byte ")
        found = lines.get((path, int(at))) if sep and at.isdigit() else None
        out.append(s if found is None else Skipped(f"{path}:line {found}", s.reason))
    return out


def count_dataset_corpus(
    shards: Sequence[Shard], *, pattern: str | None, field: str | None,
    progress: ProgressCallback | None = None, cancel: threading.Event | None = None,
) -> tuple[dict[str, int], CorpusReport]:
    """Count the chunks of the datasets' documents in this process; `(chunk_key -> count, report)`."""
    counter = ChunkCounter(compile_pattern(pattern))
    reporter = Reporter(progress, cancel, "counting", total=sum(map(shard_bytes, shards)))
    reporter.check()
    reporter.emit(0, files_read=0, files_skipped=0, bytes_read=0)
    done = 0

    def on_shard(shard: Shard) -> None:
        nonlocal done
        done += shard_bytes(shard)
        reporter.tick(done, bytes_read=done)

    log = count_shards(shards, counter, field, on_shard)
    counts = expand(*compact(counter.counts(check=reporter.check)))
    del counter
    report = dataset_report(log, counts)
    reporter.emit(done, files_read=report.files_read, files_skipped=len(report.files_skipped), bytes_read=done)
    return counts, report
