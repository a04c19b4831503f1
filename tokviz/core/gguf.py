"""Read the metadata of a GGUF file (llama.cpp's model format) without touching its tensors.

A GGUF file is a header (magic `GGUF`, version, tensor count, key/value count), the key/value
section (the tokenizer lives here: `tokenizer.ggml.tokens`, `.merges`, `.scores`, ...), the tensor
infos and then the weights. `read_metadata` reads only the first two, through `mmap`, so a 5 GB
model costs what its vocabulary costs; numeric arrays are copied out as numpy arrays in one call
each, string arrays are decoded one string at a time.

The `gguf` package's `GGUFReader` parses every field and tensor info eagerly into numpy views; this
module is what tokviz needs instead (`bench/bench_gguf.py` measures both).

Every length and count is checked against the bytes that are left before anything is allocated,
so a truncated or hostile file is a `GGUFError` naming the file and what is wrong, never a huge
allocation.

This module does not read tensor infos, does not write GGUF and does not support big-endian files.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"GGUF"

# GGUF value types: id -> (name, struct format or None for string/array, size)
_SCALARS: dict[int, tuple[str, int]] = {
    0: ("<B", 1), 1: ("<b", 1), 2: ("<H", 2), 3: ("<h", 2), 4: ("<I", 4), 5: ("<i", 4),
    6: ("<f", 4), 7: ("<?", 1), 10: ("<Q", 8), 11: ("<q", 8), 12: ("<d", 8),
}
_NUMPY: dict[int, str] = {
    0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "<u1",
    10: "<u8", 11: "<i8", 12: "<f8",
}
STRING, ARRAY = 8, 9
#: how deep arrays of arrays may nest (llama.cpp writes none; a hostile file could nest one per
#: 12 bytes and run the parser out of stack)
MAX_NESTING = 16
_INTEGERS = (0, 1, 2, 3, 4, 5, 10, 11)

#: the type each key tokviz reads must have: a hand-made or hostile file with a list where a
#: string belongs is one line naming the file and the key, not a TypeError deep in a backend
_SHAPES: dict[str, str] = {
    "general.name": "string", "general.architecture": "string", "tokenizer.ggml.model": "string",
    "tokenizer.ggml.pre": "string", "tokenizer.chat_template": "string",
    "tokenizer.ggml.tokens": "strings", "tokenizer.ggml.merges": "strings",
    "tokenizer.ggml.token_type": "integers", "tokenizer.ggml.scores": "numbers",
    **{f"tokenizer.ggml.{k}_token_id": "id" for k in (
        "bos", "eos", "unknown", "seperator", "padding", "mask", "cls", "eot", "eom", "prefix", "suffix", "middle")},
    **{f"tokenizer.ggml.{k}": "flag" for k in (
        "add_bos_token", "add_eos_token", "add_sep_token", "add_space_prefix", "lowercase", "strip_accents",
        "remove_extra_whitespaces")},
}
_WANTED = {"string": "a string", "strings": "an array of strings", "integers": "an array of integers",
           "numbers": "an array of numbers", "id": "a token id (an integer)",
           "flag": "true or false"}


class GGUFError(ValueError):
    """A file is not a readable GGUF: the message names the file and what is wrong."""


@dataclass(frozen=True)
class GGUFMetadata:
    """The key/value section of a GGUF file.

    Strings are `str` (invalid UTF-8 kept as surrogate escapes), string arrays are lists of `str`,
    numeric arrays are numpy arrays, scalars are Python numbers and bools.
    """

    path: Path
    version: int
    tensor_count: int
    fields: dict[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.fields


def is_gguf(path: str | os.PathLike[str]) -> bool:
    """True when the file starts with the GGUF magic."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == MAGIC
    except OSError:
        return False


def read_metadata(path: str | os.PathLike[str]) -> GGUFMetadata:
    """Read the header and every key/value of a GGUF file (never the tensors).

    >>> read_metadata("ggml-vocab-gpt-2.gguf").get("tokenizer.ggml.model")  # doctest: +SKIP
    'gpt2'
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 24:
                head = f.read(4)
                if head != MAGIC:
                    raise GGUFError(f"{path}: not a GGUF file (it starts with {head!r}, not b'GGUF')")
                raise GGUFError(f"{path}: truncated GGUF header ({size} bytes)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _Parser(path, buf, size).parse()
    except OSError as e:
        raise GGUFError(f"cannot read {path}: {e.strerror or e}") from e


@dataclass(frozen=True)
class GGUFSummary:
    """What a listing of models needs from a GGUF file, read without its arrays."""

    path: Path
    name: str | None  # general.name
    architecture: str | None  # general.architecture
    model: str | None  # tokenizer.ggml.model (None: the file carries no vocabulary)
    pre: str | None  # tokenizer.ggml.pre
    vocab_size: int | None  # the length of tokenizer.ggml.tokens


_SUMMARY_KEYS = {
    "general.name": "name", "general.architecture": "architecture",
    "tokenizer.ggml.model": "model", "tokenizer.ggml.pre": "pre",
}


def read_summary(path: str | os.PathLike[str]) -> GGUFSummary:
    """The name, architecture, tokenizer model, pre-tokenizer and vocabulary size of a GGUF file.

    Arrays are skipped, not read (a numeric array in one step, a string array one length at a
    time). llama.cpp writes `general.*` and `tokenizer.ggml.model`/`.pre` before the token list,
    so the walk stops at the token list once the model is known: a model's summary costs a few
    kilobytes of its header (a file with no `pre` key, Gemma 4's, has None there).

    >>> read_summary("ggml-vocab-qwen2.gguf").pre  # doctest: +SKIP
    'qwen2'
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 24:
                raise GGUFError(f"{path}: not a GGUF file ({size} bytes)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return _Parser(path, buf, size).summary()
    except OSError as e:
        raise GGUFError(f"cannot read {path}: {e.strerror or e}") from e


class _Parser:
    def __init__(self, path: Path, buf: mmap.mmap, size: int) -> None:
        self.path, self.buf, self.size, self.pos = path, buf, size, 0
        self.key = ""

    def fail(self, what: str) -> GGUFError:
        where = f" in {self.key!r}" if self.key else ""
        return GGUFError(f"{self.path}: {what}{where} at byte {self.pos}: the file is corrupt or truncated")

    def need(self, n: int) -> None:
        if n < 0 or n > self.size - self.pos:
            raise self.fail(f"{n:,} bytes needed, {self.size - self.pos:,} left")

    def scalar(self, fmt: str, n: int) -> Any:
        self.need(n)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return value

    def string(self) -> str:
        n = self.scalar("<Q", 8)
        self.need(n)
        data = self.buf[self.pos:self.pos + n]
        self.pos += n
        return data.decode("utf-8", "surrogateescape")

    def parse(self) -> GGUFMetadata:
        version, tensor_count, kv_count = self.header()
        fields: dict[str, Any] = {}
        for _ in range(kv_count):
            self.key = ""
            key = self.string()
            self.key = key
            vtype = self.scalar("<I", 4)
            fields[key] = value = self.value(vtype)
            if key in _SHAPES or key.startswith("tokenizer.chat_template."):
                self.check_shape(key, vtype, value)
        return GGUFMetadata(self.path, version, tensor_count, fields)

    def check_shape(self, key: str, vtype: int, value: Any) -> None:
        """Refuse a key tokviz reads whose value has the wrong type (see `_SHAPES`)."""
        shape = _SHAPES.get(key, "string")
        if shape == "string":
            ok = isinstance(value, str)
        elif shape == "strings":
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        elif shape in ("integers", "numbers"):
            kinds = "iu" if shape == "integers" else "iuf"
            ok = isinstance(value, np.ndarray) and value.dtype.kind in kinds
        elif shape == "id":
            ok = vtype in _INTEGERS  # a negative one means none (the backends check the range)
        else:
            ok = vtype == 7 or (vtype in _INTEGERS and value in (0, 1))
        if not ok:
            raise GGUFError(f"{self.path}: {key} must be {_WANTED[shape]}, not {_describe(vtype, value)}")

    def header(self) -> tuple[int, int, int]:
        """Magic, version, tensor count and key/value count: (version, tensors, key/values)."""
        magic = bytes(self.buf[:4])
        if magic != MAGIC:
            raise GGUFError(f"{self.path}: not a GGUF file (it starts with {magic!r}, not b'GGUF')")
        self.pos = 4
        version = self.scalar("<I", 4)
        if version not in (2, 3):
            hint = " (a big-endian file?)" if version >= 1 << 16 else ""
            raise GGUFError(f"{self.path}: GGUF version {version}{hint} is not supported (2 and 3 are)")
        tensor_count = self.scalar("<Q", 8)
        kv_count = self.scalar("<Q", 8)
        if kv_count > (self.size - self.pos) // 13:  # a key/value is at least 8 + 1 + 4 bytes
            raise self.fail(f"{kv_count:,} key/values cannot fit in the file")
        return version, tensor_count, kv_count

    def summary(self) -> GGUFSummary:
        _, _, kv_count = self.header()
        found: dict[str, Any] = {}
        vocab_size: int | None = None
        for _ in range(kv_count):
            self.key = ""
            key = self.string()
            self.key = key
            vtype = self.scalar("<I", 4)
            if key == "tokenizer.ggml.tokens" and vtype == ARRAY:
                etype = self.scalar("<I", 4)
                vocab_size = self.scalar("<Q", 8)
                if "model" in found:  # what a writer puts before the tokens is all there is
                    break
                self.skip_array(etype, vocab_size)
            elif key in _SUMMARY_KEYS and vtype == STRING:
                found[_SUMMARY_KEYS[key]] = self.string()
                if vocab_size is not None and len(found) == len(_SUMMARY_KEYS):
                    break
            else:
                self.skip(vtype)
        return GGUFSummary(self.path, vocab_size=vocab_size, **{k: found.get(k) for k in _SUMMARY_KEYS.values()})

    def skip(self, vtype: int, depth: int = 0) -> None:
        if vtype in _SCALARS:
            self.need(_SCALARS[vtype][1])
            self.pos += _SCALARS[vtype][1]
        elif vtype == STRING:
            n = self.scalar("<Q", 8)
            self.need(n)
            self.pos += n
        elif vtype == ARRAY:
            etype = self.scalar("<I", 4)
            self.skip_array(etype, self.scalar("<Q", 8), depth)
        else:
            raise self.fail(f"unknown value type {vtype}")

    def skip_array(self, etype: int, n: int, depth: int = 0) -> None:
        if etype in _NUMPY:
            width = _SCALARS[etype][1]
            if n > (self.size - self.pos) // width:
                raise self.fail(f"an array of {n:,} values cannot fit in the file")
            self.pos += n * width
        elif etype == STRING:
            if n > (self.size - self.pos) // 8:
                raise self.fail(f"an array of {n:,} strings cannot fit in the file")
            buf, pos, size = self.buf, self.pos, self.size
            unpack = struct.Struct("<Q").unpack_from
            for _ in range(n):
                if pos + 8 > size:
                    self.pos = pos
                    raise self.fail("a string length runs past the end of the file")
                pos += 8 + unpack(buf, pos)[0]
            if pos > size:
                raise self.fail("a string runs past the end of the file")
            self.pos = pos
        elif etype == ARRAY:
            if n > (self.size - self.pos) // 12:
                raise self.fail(f"an array of {n:,} arrays cannot fit in the file")
            if depth >= MAX_NESTING:
                raise self.fail(f"arrays nested more than {MAX_NESTING} deep")
            for _ in range(n):
                self.skip(etype, depth + 1)
        else:
            raise self.fail(f"unknown array element type {etype}")

    def value(self, vtype: int, depth: int = 0) -> Any:
        if vtype in _SCALARS:
            return self.scalar(*_SCALARS[vtype])
        if vtype == STRING:
            return self.string()
        if vtype == ARRAY:
            etype = self.scalar("<I", 4)
            n = self.scalar("<Q", 8)
            if etype in _NUMPY:
                width = _SCALARS[etype][1]
                if n > (self.size - self.pos) // width:
                    raise self.fail(f"an array of {n:,} values cannot fit in the file")
                arr = np.frombuffer(self.buf, dtype=_NUMPY[etype], count=n, offset=self.pos).copy()
                self.pos += n * width
                return arr.astype(bool) if etype == 7 else arr
            if etype == STRING:
                if n > (self.size - self.pos) // 8:
                    raise self.fail(f"an array of {n:,} strings cannot fit in the file")
                return self.strings(n)
            if etype == ARRAY:
                if n > (self.size - self.pos) // 12:
                    raise self.fail(f"an array of {n:,} arrays cannot fit in the file")
                if depth >= MAX_NESTING:
                    raise self.fail(f"arrays nested more than {MAX_NESTING} deep")
                return [self.value(ARRAY, depth + 1) for _ in range(n)]
            raise self.fail(f"unknown array element type {etype}")
        raise self.fail(f"unknown value type {vtype}")

    def strings(self, n: int) -> list[str]:
        """`n` length-prefixed strings: the hot loop of a 150k vocabulary, kept to local names."""
        buf, pos, size = self.buf, self.pos, self.size
        unpack = struct.Struct("<Q").unpack_from
        out: list[str] = []
        append = out.append
        for _ in range(n):
            if pos + 8 > size:
                self.pos = pos
                raise self.fail("a string length runs past the end of the file")
            (length,) = unpack(buf, pos)
            pos += 8
            if length > size - pos:
                self.pos = pos
                raise self.fail(f"a string of {length:,} bytes runs past the end of the file")
            append(buf[pos:pos + length].decode("utf-8", "surrogateescape"))
            pos += length
        self.pos = pos
        return out


def _describe(vtype: int, value: Any) -> str:
    """A value's GGUF type in words, for messages."""
    if vtype == STRING:
        return f"the string {value!r:.40}"
    if vtype == ARRAY:
        if isinstance(value, np.ndarray):
            return f"an array of {value.dtype.name} ({len(value):,})"
        if value and isinstance(value[0], str):
            return f"an array of strings ({len(value):,})"
        return f"an array of arrays ({len(value):,})" if value else "an empty array"
    if vtype == 7:
        return f"the boolean {value}"
    return f"the {'number' if vtype in (6, 12) else 'integer'} {value!r}"


__all__ = ["GGUFError", "GGUFMetadata", "GGUFSummary", "is_gguf", "read_metadata", "read_summary"]
