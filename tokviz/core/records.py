"""Read the examples of a dataset: JSONL, JSON (a list), Parquet, CSV, plain text, Arrow, folders.

A dataset is cut into `Shard`s (a file, a Parquet row group, a byte range of a JSONL file cut at
line boundaries), listed in a deterministic order by `list_shards`; `read_shard` reads one shard
alone, in batches, so a caller may read shards in any process and put the results back in order.
`read_examples` chains the shards of some paths and applies `--limit` / `--sample`.

Each record becomes an `Example` (a text or a conversation, found by `find_example`: `messages`,
`conversations` with `from`/`value`, `prompt` + `completion`, `text`, or a dotted `--field`) or a
`Skip` naming the file and line or row and the reason (a torn JSON line, a row without the field,
text that is not UTF-8). Memory is bounded by the batch, except for a JSON list file, which
the JSON format only lets us parse whole.

A Hugging Face `datasets` cache folder is read from its `.arrow` files (Arrow IPC streams) with
pyarrow alone; the `datasets` library is not needed. This module counts nothing (see
`tokviz.analysis.dataset`).
"""

from __future__ import annotations

import ast
import codecs
import csv
import json
import os
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path
from typing import Any, Literal

from tokviz.core.textfile import file_wide_text, wide_text

ShardKind = Literal["jsonl", "json", "parquet", "csv", "text", "arrow"]

#: file suffix -> how it is read; in a folder, files with other suffixes are left out
SUFFIXES: dict[str, ShardKind] = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".csv": "csv",
    ".tsv": "csv", ".txt": "text", ".md": "text", ".arrow": "arrow",
}
BATCH = 1024  # records per batch


class DatasetError(ValueError):
    """A dataset path that cannot be read at all (missing, an unknown kind): one line for the user."""


@dataclass(frozen=True)
class Shard:
    """A piece of a dataset that can be read alone: a whole file, a Parquet row group (`part`),
    or the lines of a JSONL file that start in the byte range [`start`, `end`). `parts` is how
    many row groups its Parquet file has (what a share of the file's bytes is estimated by)."""

    path: str
    kind: ShardKind
    part: int | None = None
    start: int = 0
    end: int | None = None
    parts: int = 1


@dataclass(frozen=True)
class Example:
    """One example: `text` (a text) or `messages` (a conversation, with `tools` if given)."""

    source: str  # "file:line 3" / "file:row 7": where it is, for messages
    text: str | None = None
    messages: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None

    @property
    def is_chat(self) -> bool:
        return self.messages is not None


@dataclass(frozen=True)
class Skip:
    """A record that could not be read as an example: where, and why."""

    source: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"


Record = Example | Skip


# -- shards ---------------------------------------------------------------------------------------


def kind_of(path: Path) -> ShardKind:
    """How a file given by name is read: by its suffix, plain text otherwise."""
    return SUFFIXES.get(path.suffix.lower(), "text")


def list_files(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, ShardKind]]:
    """The files of `paths` in order: each path as given, a folder's known files sorted by
    relative path (hidden ones left out). Raises `DatasetError` for a path that does not exist."""
    files: list[tuple[Path, ShardKind]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = []
            for root, dirs, names in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in names:
                    suffix = Path(name).suffix.lower()
                    if not name.startswith(".") and suffix in SUFFIXES:
                        found.append(Path(root, name))
            found.sort(key=lambda f: f.relative_to(path).parts)
            files.extend((f, SUFFIXES[f.suffix.lower()]) for f in found)
        elif path.is_file():
            files.append((path, kind_of(path)))
        else:
            raise DatasetError(f"{given}: no such file or folder")
    return files


def list_shards(paths: Iterable[str | os.PathLike[str]], *, split_bytes: int | None = None) -> list[Shard]:
    """The shards of `paths`, in input order. Parquet files are split by row group; JSONL files
    larger than `split_bytes` into byte ranges (each line belongs to the range it starts in)."""
    shards: list[Shard] = []
    for path, kind in list_files(paths):
        if kind == "parquet":
            import pyarrow.parquet as pq

            try:
                groups = pq.ParquetFile(path).num_row_groups
            except Exception:  # an unreadable file becomes one shard whose reading reports it
                groups = 1
            parts = max(groups, 1)
            shards.extend(Shard(str(path), kind, part=i, parts=parts) for i in range(parts))
        elif kind == "jsonl" and split_bytes and path.stat().st_size > split_bytes:
            size = path.stat().st_size
            shards.extend(Shard(str(path), kind, start=s, end=min(s + split_bytes, size))
                          for s in range(0, size, split_bytes))
        else:
            shards.append(Shard(str(path), kind))
    return shards


def read_shard(shard: Shard, *, field: str | None = None, batch: int = BATCH) -> Iterator[list[Record]]:
    """The records of one shard, in order, `batch` at a time."""
    rows = _ROWS[shard.kind](shard)
    out: list[Record] = []
    for source, value in rows:
        out.append(value if isinstance(value, Skip) else find_example(value, source, field))
        if len(out) >= batch:
            yield out
            out = []
    if out:
        yield out


def read_examples(
    paths: Iterable[str | os.PathLike[str]], *, field: str | None = None, limit: int | None = None,
    sample: int | None = None, seed: int = 0, batch: int = BATCH,
) -> Iterator[list[tuple[int, Record]]]:
    """(index, record) batches over every shard of `paths`, in input order; `index` is the record's
    place in the whole input (0-based), so it names the same row whatever is skipped or sampled.

    `limit`: the first N records. `sample`: N records drawn uniformly (reservoir sampling with
    `seed`, so the same seed draws the same rows), given back in input order; it holds N records.
    """
    def indexed() -> Iterator[list[tuple[int, Record]]]:
        index = 0
        for shard in list_shards(paths):
            for records in read_shard(shard, field=field, batch=batch):
                yield list(enumerate(records, index))
                index += len(records)

    if sample is not None:
        yield from _batches(_reservoir(indexed(), sample, seed, limit), batch)
        return
    left = limit
    for records in indexed():
        if left is not None:
            records = records[:left]
            left -= len(records)
        if records:
            yield records
        if left == 0:
            return


def _reservoir(
    batches: Iterator[list[tuple[int, Record]]], n: int, seed: int, limit: int | None
) -> list[tuple[int, Record]]:
    rng = random.Random(seed)
    kept: list[tuple[int, Record]] = []
    seen = 0
    for records in batches:
        for item in records:
            if limit is not None and seen >= limit:
                return sorted(kept, key=lambda r: r[0])
            if len(kept) < n:
                kept.append(item)
            else:
                j = rng.randrange(seen + 1)
                if j < n:
                    kept[j] = item
            seen += 1
    return sorted(kept, key=lambda r: r[0])


def _batches(items: Sequence[tuple[int, Record]], size: int) -> Iterator[list[tuple[int, Record]]]:
    for i in range(0, len(items), size):
        yield list(items[i:i + size])


# -- fields ---------------------------------------------------------------------------------------


def find_example(row: Any, source: str, field: str | None = None) -> Record:
    """The example in one row: `field` (a dotted path) if given, else the first of `messages`,
    `conversations`, `prompt` + `completion`, `text`. A string is a text; a list of
    `{"role", "content"}` (or `{"from", "value"}`) objects a conversation, also written as text
    (a CSV cell: `_literal`).

    >>> find_example({"prompt": "2+2=", "completion": "4"}, "x:line 1").text
    '2+2=4'
    """
    if field is not None:
        value: Any = row
        for key in field.split("."):
            if isinstance(value, dict) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                return Skip(source, f"no field {field!r}")
        return _as_example(_literal(value), source, field, _tools(row))
    if isinstance(row, str):
        return Example(source, text=row)
    if not isinstance(row, dict):
        return Skip(source, f"not an object but {type(row).__name__}")
    for key in ("messages", "conversations"):
        if key in row and row[key] is not None:
            messages = _literal(row[key])
            if isinstance(messages, str):
                return Skip(source, f"field {key!r} is a string, not a list of messages (as JSON or a Python literal)")
            return _as_example(messages, source, key, _tools(row))
    if isinstance(row.get("prompt"), str) and isinstance(row.get("completion"), str):
        return Example(source, text=row["prompt"] + row["completion"])
    if row.get("text") is not None:
        return _as_example(row["text"], source, "text", None)
    keys = ", ".join(map(str, list(row)[:8]))
    return Skip(source, f"no messages, conversations, prompt/completion or text field (keys: {keys})")


def _tools(row: Any) -> list[dict[str, Any]] | None:
    tools = _literal(row.get("tools"), ("type", "function", "name")) if isinstance(row, dict) else None
    return tools if isinstance(tools, list) else None


def _literal(value: Any, keys: tuple[str, ...] = ("role", "from")) -> Any:
    """A list of objects that each have one of `keys` (messages, by default), written as text,
    read: a CSV cell holds a conversation as JSON, or as the Python literal pandas' `to_csv`
    writes (`[{'role': 'user', ...}]`, read with `ast.literal_eval`, which evaluates literals
    only). Anything else, a text that merely looks like a list included, is returned as it is.

    >>> _literal('[{"role": "user", "content": "hi"}]'), _literal("[{'from': 'gpt'}]"), _literal('[{"a": 1}]')
    ([{'role': 'user', 'content': 'hi'}], [{'from': 'gpt'}], '[{"a": 1}]')
    """
    if not isinstance(value, str) or not value.lstrip().startswith("["):
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        try:
            parsed = ast.literal_eval(value.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return value
    wanted = isinstance(parsed, list) and all(isinstance(m, dict) and not m.keys().isdisjoint(keys) for m in parsed)
    return parsed if wanted else value


_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "system": "system",
          "tool": "tool", "function_call": "assistant", "observation": "tool"}


def _as_example(value: Any, source: str, name: str, tools: list[dict[str, Any]] | None) -> Record:
    if isinstance(value, str):
        return Example(source, text=value)
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        messages = []
        for i, m in enumerate(value):
            if "role" in m:
                messages.append(m)
            elif "from" in m and "value" in m:  # ShareGPT
                messages.append({"role": _ROLES.get(str(m["from"]), str(m["from"])), "content": m["value"]})
            else:
                return Skip(source, f"{name}[{i}] has neither role/content nor from/value")
        return Example(source, messages=messages, tools=tools)
    return Skip(source, f"field {name!r} is neither a string nor a list of messages")


# -- readers: (source, row | Skip) in order ----------------------------------------------------------


def _jsonl(shard: Shard) -> Iterator[tuple[str, Any]]:
    with open(shard.path, "rb") as f:
        if (wide := wide_text(f.read(4))) is not None:  # its lines are not lines: one skip, not one a line
            if not shard.start:
                yield shard.path, Skip(shard.path, wide)
            return
        f.seek(0)
        line_no = None if shard.start else 0
        if shard.start:
            f.seek(shard.start - 1)
            if f.read(1) != b"\n":
                f.readline()  # the line that started before the range belongs to the previous one
        while True:
            at = f.tell()
            if shard.end is not None and at >= shard.end:
                return
            raw = f.readline()
            if not raw:
                return
            if line_no is not None:
                line_no += 1
            if not at:
                raw = raw.removeprefix(codecs.BOM_UTF8)  # an editor's UTF-8 signature, as `text` drops it
            source = f"{shard.path}:line {line_no}" if line_no is not None else f"{shard.path}:byte {at}"
            if not raw.strip():
                continue
            try:
                yield source, json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                yield source, Skip(source, f"not UTF-8 (byte {e.start})")
            except ValueError as e:
                yield source, Skip(source, f"not JSON ({e})")


def _json(shard: Shard) -> Iterator[tuple[str, Any]]:
    try:
        with open(shard.path, "rb") as f:
            data = f.read()
        value = json.loads(data.removeprefix(codecs.BOM_UTF8).decode("utf-8"))
    except UnicodeDecodeError as e:
        yield shard.path, Skip(shard.path, wide_text(data[:4]) or f"not UTF-8 (byte {e.start})")
        return
    except ValueError as e:
        if str(e).startswith("Extra data"):  # JSONL under a .json name
            yield from _jsonl(shard)
            return
        yield shard.path, Skip(shard.path, f"not JSON ({e})")
        return
    if isinstance(value, dict):
        # one object: a single example, or {"data": [...]} / {"train": [...]}-style lists
        lists = [v for v in value.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        if len(lists) == 1 and not any(k in value for k in ("messages", "conversations", "text", "prompt")):
            value = lists[0]
        else:
            value = [value]
    if not isinstance(value, list):
        yield shard.path, Skip(shard.path, "a JSON file must hold a list of examples")
        return
    for i, row in enumerate(value):
        yield f"{shard.path}:row {i}", row


def _table_rows(path: str, batches: Iterable[Any], first: int = 0) -> Iterator[tuple[str, Any]]:
    row = first
    for record_batch in batches:
        for item in record_batch.to_pylist():
            yield f"{path}:row {row}", item
            row += 1


def _parquet(shard: Shard) -> Iterator[tuple[str, Any]]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(shard.path)
        part = shard.part or 0
        first = sum(pf.metadata.row_group(i).num_rows for i in range(part))
        batches = pf.iter_batches(batch_size=BATCH, row_groups=[part]) if pf.num_row_groups else iter(())
        yield from _table_rows(shard.path, batches, first)
    except Exception as e:  # pyarrow's ArrowInvalid and friends: not a Parquet file, a torn one
        yield shard.path, Skip(shard.path, f"not a readable Parquet file ({_one_line(e)})")


def _arrow(shard: Shard) -> Iterator[tuple[str, Any]]:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    try:
        source = pa.memory_map(shard.path, "r")
        try:
            reader: Any = ipc.open_stream(source)  # what `datasets` writes
            batches: Iterable[Any] = reader
        except pa.ArrowInvalid:
            source.seek(0)
            reader = ipc.open_file(source)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        yield from _table_rows(shard.path, batches)
    except Exception as e:
        yield shard.path, Skip(shard.path, f"not a readable Arrow file ({_one_line(e)})")


class _RecordLines:
    """The lines a csv reader pulls from `lines`, with those of the record it is reading."""

    def __init__(self, lines: Iterator[str]) -> None:
        self.lines = lines
        self.record: list[str] = []
        self.line = 0  # lines pulled so far

    def __iter__(self) -> _RecordLines:
        return self

    def __next__(self) -> str:
        line = next(self.lines)
        self.line += 1
        self.record.append(line)
        return line


def _unclosed(record: list[str], delimiter: str) -> bool:
    """Whether a record's lines end inside a quoted field: an unterminated quote, which makes the
    reader take the rest of the file as one value (`csv`, unlike pandas or pyarrow, says nothing)."""
    try:
        for _ in csv.reader(record, delimiter=delimiter, strict=True):
            pass
    except csv.Error as e:
        return "unexpected end of data" in str(e)
    return False


def _csv(shard: Shard) -> Iterator[tuple[str, Any]]:
    """The rows of a CSV (`.tsv`: tab-separated) file with a header, as dicts. A quote never closed swallows the rest of
    the file into one value, so it can only be in the last record: that record is a Skip saying
    where it starts, not an example made of everything after it."""
    csv.field_size_limit(1 << 30)
    delimiter = "\t" if shard.path.lower().endswith(".tsv") else ","
    try:
        with open(shard.path, encoding="utf-8-sig", newline="") as f:  # -sig: a BOM is no part of the header
            lines = _RecordLines(f)
            rows = csv.DictReader(lines, delimiter=delimiter)
            if rows.fieldnames is None:  # reads the header: each record's lines below are its own
                return
            lines.record = []
            last: tuple[str, Any] | None = None
            for i, row in enumerate(rows):
                if last is not None:
                    yield last
                last = (f"{shard.path}:row {i}", row)
                record, lines.record = lines.record, []
            if last is not None and _unclosed(record, delimiter):
                start = lines.line - len(record) + 1 + sum(1 for _ in takewhile(str.isspace, record))
                last = (last[0], Skip(last[0], f"a quote in this row (from line {start}) is never closed: "
                                               "the rest of the file would be one value"))
            if last is not None:
                yield last
    except UnicodeDecodeError as e:
        yield shard.path, Skip(shard.path, file_wide_text(shard.path) or f"not UTF-8 (byte {e.start})")
    except csv.Error as e:
        yield shard.path, Skip(shard.path, f"not CSV ({e})")


def _text(shard: Shard) -> Iterator[tuple[str, Any]]:
    """A plain-text file is one example, the whole text."""
    try:
        with open(shard.path, "rb") as f:
            data = f.read()
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        yield shard.path, Skip(shard.path, wide_text(data[:4]) or f"not UTF-8 (byte {e.start})")
        return
    yield shard.path, text.removeprefix("\ufeff")


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


_ROWS = {"jsonl": _jsonl, "json": _json, "parquet": _parquet, "csv": _csv, "text": _text, "arrow": _arrow}

__all__ = ["BATCH", "DatasetError", "Example", "Record", "Shard", "Skip", "find_example", "list_files",
           "list_shards", "read_examples", "read_shard"]
