"""A dataset's examples, read as a stream: JSONL, JSON (a list), CSV, Parquet, Arrow (a Hugging Face
`datasets` cache), plain text, and folders of them. Qt-free.

Each example is a text or a conversation. Fields are found the usual way: `messages` (OpenAI /
transformers: `{"role", "content"}`), `conversations` (ShareGPT: `{"from", "value"}`, `human` and
`gpt` as `user` and `assistant`), `prompt` + `completion` (one text: what a fine-tune is billed
for), `text`; or the field `field` names (a dotted path into nested objects). A plain-text file is
one text.

Reading streams: a JSONL or CSV file line by line, Parquet and Arrow by record batches; only a
JSON list is parsed whole (it cannot be read otherwise). A row that cannot be read (a torn JSON
line, a row without the field, text that is not UTF-8) is a `Skipped` naming its file and line or
row, and reading goes on. Examples are numbered in input order, skipped rows included, so a
number means the same example in every tokenizer's count.

This module does not tokenize (see `tokviz.analysis.dataset`).
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tokviz.core.tokenizer import TokenizerError

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".arrow", ".txt", ".md")
BATCH_ROWS = 4096  # rows a Parquet or Arrow batch holds at a time
SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system", "user": "user",
                  "assistant": "assistant", "tool": "tool", "function_call": "assistant", "observation": "tool"}


class DatasetError(TokenizerError):
    """A dataset that cannot be read at all (a missing path, an unknown file type)."""


@dataclass(frozen=True)
class Example:
    """One example: a text or a conversation (`messages`, with `tools` where the row has them)."""

    number: int  # 0-based, in input order
    where: str  # "FILE:LINE" or "FILE row N"
    kind: Literal["text", "chat"]
    text: str = ""
    messages: tuple[Mapping[str, Any], ...] = ()
    tools: tuple[Mapping[str, Any], ...] | None = None


@dataclass(frozen=True)
class Skipped:
    """A row that could not be read as an example, and why (one line)."""

    number: int
    where: str
    reason: str


Item = Example | Skipped


def dataset_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files `paths` name: files as given, folders walked in name order for the dataset
    suffixes. DatasetError for a path that is missing or a file of no known type."""
    files: list[Path] = []
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not found:
                raise DatasetError(f"{path}: no dataset files in this folder ({', '.join(SUFFIXES)})")
            files.extend(found)
        elif path.is_file():
            if path.suffix.lower() not in SUFFIXES:
                raise DatasetError(f"{path}: not a dataset file (expected one of {', '.join(SUFFIXES)})")
            files.append(path)
        else:
            raise DatasetError(f"{path}: no such file or folder")
    return files


def read_examples(paths: Sequence[str | Path], *, field: str | None = None, limit: int | None = None,
                  sample: int | None = None, seed: int = 0) -> Iterator[Item]:
    """Every example of the files `paths` name, in order (`limit`: the first so many), or a random
    `sample` of them (reservoir sampling: memory for `sample` examples, whatever the dataset),
    yielded in input order."""
    items = _numbered(dataset_files(paths), field)
    if sample is not None:
        yield from _sampled(items, sample, seed)
        return
    for item in items:
        if limit is not None and item.number >= limit:
            return
        yield item


def _sampled(items: Iterable[Item], size: int, seed: int) -> Iterator[Item]:
    rng = random.Random(seed)
    kept: list[Item] = []
    for seen, item in enumerate(items):
        if len(kept) < size:
            kept.append(item)
        else:
            j = rng.randrange(seen + 1)
            if j < size:
                kept[j] = item
    yield from sorted(kept, key=lambda item: item.number)


def _numbered(files: Sequence[Path], field: str | None) -> Iterator[Item]:
    number = 0
    for path in files:
        for where, row in _rows(path):
            if isinstance(row, _Bad):
                yield Skipped(number, where, row.reason)
            else:
                yield _example(number, where, row, field)
            number += 1


@dataclass(frozen=True)
class _Bad:
    reason: str


def _rows(path: Path) -> Iterator[tuple[str, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        yield from _jsonl_rows(path)
    elif suffix == ".json":
        yield from _json_rows(path)
    elif suffix == ".csv":
        yield from _csv_rows(path)
    elif suffix in (".parquet", ".arrow"):
        yield from _arrow_rows(path)
    else:
        try:
            yield f"{path}", {"text": path.read_bytes().decode("utf-8")}
        except UnicodeDecodeError as e:
            yield f"{path}", _Bad(f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})")
        except OSError as e:
            raise DatasetError(f"cannot read {path}: {e.strerror or e}") from e


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                if not raw.strip():
                    continue
                where = f"{path}:{n}"
                try:
                    yield where, json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError as e:
                    yield where, _Bad(f"not UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1})")
                except json.JSONDecodeError as e:
                    yield where, _Bad(f"not a JSON value ({e.msg}, column {e.colno})")
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e.strerror or e}") from e


def _json_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        yield f"{path}", _Bad(f"not a JSON list of examples ({e})")
        return
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e.strerror or e}") from e
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = [value]  # one conversation, as `tokviz chat` reads it
    if not isinstance(value, list):
        yield f"{path}", _Bad("not a JSON list of examples")
        return
    for n, row in enumerate(value):
        yield f"{path} item {n}", row


def _csv_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        with open(path, "rb") as f:
            header: list[str] | None = None
            for n, raw in enumerate(f, 1):
                where = f"{path}:{n}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    yield where, _Bad(f"not UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1})")
                    continue
                cells = next(csv.reader([line]), [])
                if header is None:
                    header = cells
                    continue
                if not cells:
                    continue
                yield where, dict(zip(header, cells))
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e.strerror or e}") from e


def _arrow_rows(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if path.suffix.lower() == ".parquet":
            batches: Iterable[Any] = pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS)
        else:  # a `datasets` cache file: the Arrow streaming format (or the file format)
            try:
                batches = pa.ipc.open_stream(pa.memory_map(str(path)))
            except pa.ArrowInvalid:
                batches = _file_batches(pa.ipc.open_file(pa.memory_map(str(path))))
        row = 0
        for batch in batches:
            for value in batch.to_pylist():
                yield f"{path} row {row}", value
                row += 1
    except (OSError, pa.ArrowException) as e:
        raise DatasetError(f"cannot read {path}: {e}") from e


def _file_batches(reader: Any) -> Iterator[Any]:
    for i in range(reader.num_record_batches):
        yield reader.get_batch(i)


def _example(number: int, where: str, row: Any, field: str | None) -> Item:
    if field is not None:
        value = _dotted(row, field)
        if value is None:
            return Skipped(number, where, f"no field {field!r}")
        return _of_value(number, where, value, row)
    if not isinstance(row, dict):
        return Skipped(number, where, "not an object with messages, conversations, prompt/completion or text")
    row = {k: v for k, v in row.items() if v is not None}  # a Parquet row has every column, null where unset
    for name in ("messages", "conversations"):
        if name in row:
            return _of_value(number, where, row[name], row)
    if "prompt" in row and "completion" in row:
        prompt, completion = row["prompt"], row["completion"]
        if isinstance(prompt, str) and isinstance(completion, str):
            return Example(number, where, "text", text=prompt + completion)
        return Skipped(number, where, "prompt and completion must be strings")
    if "text" in row:
        return _of_value(number, where, row["text"], row)
    return Skipped(number, where, "no messages, conversations, prompt/completion or text field (use --field)")


def _dotted(row: Any, path: str) -> Any:
    value = row
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _of_value(number: int, where: str, value: Any, row: Any) -> Item:
    if isinstance(value, str):
        return Example(number, where, "text", text=value)
    if isinstance(value, list):
        messages = []
        for i, message in enumerate(value):
            if not isinstance(message, dict):
                return Skipped(number, where, f"message {i} is not an object")
            if "role" not in message and "from" in message:  # ShareGPT
                role = SHAREGPT_ROLES.get(str(message["from"]), str(message["from"]))
                message = {"role": role, "content": message.get("value")}
            content = message.get("content")
            if not isinstance(message.get("role"), str) or not (content is None or isinstance(content, (str, list))):
                return Skipped(number, where, f"message {i} needs a string role and a string or list content")
            messages.append(message)
        tools = row.get("tools") if isinstance(row, dict) else None
        if isinstance(tools, str):  # some datasets keep the tools as a JSON string
            try:
                tools = json.loads(tools)
            except json.JSONDecodeError:
                tools = None
        return Example(number, where, "chat", messages=tuple(messages),
                       tools=tuple(tools) if isinstance(tools, list) else None)
    return Skipped(number, where, f"the field is {type(value).__name__}, not a text or a list of messages")
