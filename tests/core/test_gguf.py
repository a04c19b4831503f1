"""The lazy GGUF metadata reader against llama.cpp's own `gguf` package, and against broken files."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from gguf import GGUFReader, GGUFValueType

from tokviz.core.gguf import GGUFError, is_gguf, read_metadata, read_summary


def reference_fields(path) -> dict:
    """Every key/value as llama.cpp's `gguf` package reads it, in plain Python values."""
    fields = {}
    for key, field in GGUFReader(path).fields.items():
        if key.startswith("GGUF."):
            continue
        if field.types[0] == GGUFValueType.ARRAY and field.types[-1] != GGUFValueType.STRING:
            fields[key] = np.asarray([field.parts[i][0] for i in field.data])
        else:
            fields[key] = field.contents()
    return fields


@pytest.mark.parametrize("name", ["ggml-vocab-llama-spm", "ggml-vocab-bert-bge"])  # GGUFReader is slow
def test_every_field_equals_the_gguf_packages(vocab_path, name):
    path = vocab_path(name)
    meta = read_metadata(path)
    want = reference_fields(path)
    assert meta.fields.keys() == want.keys()
    for key, value in want.items():
        got = meta.fields[key]
        if isinstance(value, np.ndarray):
            assert np.array_equal(np.asarray(got), value), key
        else:
            assert got == value, key
    assert meta.get("tokenizer.ggml.model") in ("llama", "bert")
    assert is_gguf(path)


def gguf_bytes(*kvs: bytes, kv_count: int | None = None, magic: bytes = b"GGUF", version: int = 3) -> bytes:
    count = len(kvs) if kv_count is None else kv_count
    return magic + struct.pack("<IQQ", version, 0, count) + b"".join(kvs)


def string(s: bytes, length: int | None = None) -> bytes:
    return struct.pack("<Q", len(s) if length is None else length) + s


def kv_string(key: bytes, value: bytes, length: int | None = None) -> bytes:
    return string(key) + struct.pack("<I", 8) + string(value, length)


def kv_array(key: bytes, etype: int, n: int, payload: bytes = b"") -> bytes:
    return string(key) + struct.pack("<IIQ", 9, etype, n) + payload


def test_a_small_file_reads(tmp_path):
    path = tmp_path / "ok.gguf"
    path.write_bytes(gguf_bytes(
        kv_string(b"general.name", "naïve".encode()),
        kv_array(b"tokenizer.ggml.scores", 6, 2, struct.pack("<ff", 0.5, -1.0)),
        kv_array(b"tokenizer.ggml.tokens", 8, 2, string(b"a") + string(b"\xff")),
    ))
    meta = read_metadata(path)
    assert meta.get("general.name") == "naïve"
    assert meta.get("tokenizer.ggml.scores").tolist() == [0.5, -1.0]
    assert meta.get("tokenizer.ggml.tokens")[0] == "a"
    assert meta.get("tokenizer.ggml.tokens")[1].encode("utf-8", "surrogateescape") == b"\xff"


@pytest.mark.parametrize(("content", "message"), [
    (b"", "not a GGUF file"),
    (b"PK\x03\x04" + bytes(40), r"not a GGUF file \(it starts with b'PK\\x03\\x04'"),
    (b"GGUF\x03\x00", "truncated GGUF header"),
    (gguf_bytes(version=7), "GGUF version 7 is not supported"),
    (gguf_bytes(version=3 << 24), "a big-endian file"),
    (gguf_bytes(kv_count=10**15), "key/values cannot fit in the file"),
    (gguf_bytes(kv_string(b"k", b"v", length=2**62)), r"4,611,686,018,427,387,904 bytes needed.* in 'k'"),
    (gguf_bytes(kv_array(b"tokens", 8, 2**40)), "an array of 1,099,511,627,776 strings cannot fit"),
    (gguf_bytes(kv_array(b"scores", 6, 2**61)), "an array of .* values cannot fit"),
    (gguf_bytes(kv_array(b"tokens", 8, 2, string(b"a") + string(b"b", length=99))), "a string of 99 bytes runs past"),
    (gguf_bytes(string(b"k") + struct.pack("<I", 99)), "unknown value type 99 in 'k'"),
    (gguf_bytes(kv_array(b"k", 42, 1)), "unknown array element type 42"),
    (gguf_bytes(kv_string(b"k", b"v") + struct.pack("<Q", 1000) + bytes(20), kv_count=2), "1,000 bytes needed"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_broken_files_are_one_clear_error(tmp_path, content, message):
    path = tmp_path / "broken.gguf"
    path.write_bytes(content)
    with pytest.raises(GGUFError, match=message) as info:
        read_metadata(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_a_truncated_real_vocabulary(tmp_path, vocab_path):
    data = vocab_path("ggml-vocab-gpt-2").read_bytes()
    for cut in (30, 5000, len(data) // 2):
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(data[:cut])
        with pytest.raises(GGUFError, match="corrupt or truncated"):
            read_metadata(path)


def test_a_missing_file(tmp_path):
    with pytest.raises(GGUFError, match="cannot read"):
        read_metadata(tmp_path / "nope.gguf")
    assert not is_gguf(tmp_path / "nope.gguf")


@pytest.mark.parametrize(
    "name", ["ggml-vocab-qwen2", "ggml-vocab-llama-spm", "ggml-vocab-gemma-4", "ggml-vocab-bert-bge"]
)
def test_the_summary_agrees_with_the_full_read(vocab_path, name):
    meta = read_metadata(vocab_path(name))
    summary = read_summary(vocab_path(name))
    assert summary.name == meta.get("general.name")
    assert summary.architecture == meta.get("general.architecture")
    assert summary.model == meta.get("tokenizer.ggml.model")
    assert summary.pre == meta.get("tokenizer.ggml.pre")
    assert summary.vocab_size == len(meta.get("tokenizer.ggml.tokens"))


def test_the_summary_skips_arrays_and_reads_what_follows(tmp_path):
    path = tmp_path / "late.gguf"
    path.write_bytes(gguf_bytes(
        kv_array(b"tokenizer.ggml.scores", 6, 2, struct.pack("<ff", 0.5, -1.0)),
        kv_array(b"tokenizer.ggml.merges", 8, 2, string(b"a b") + string(b"ab c")),
        kv_string(b"tokenizer.ggml.model", b"gpt2"),
        kv_array(b"tokenizer.ggml.tokens", 8, 3, string(b"a") + string(b"b") + string(b"c")),
    ))
    summary = read_summary(path)
    assert (summary.model, summary.vocab_size, summary.name, summary.pre) == ("gpt2", 3, None, None)


def test_a_truncated_summary_is_one_clear_error(tmp_path):
    path = tmp_path / "cut.gguf"
    path.write_bytes(gguf_bytes(kv_array(b"tokenizer.ggml.merges", 8, 2, string(b"a") + string(b"b", length=99))))
    with pytest.raises(GGUFError, match="runs past the end"):
        read_summary(path)


def kv(key: bytes, vtype: int, payload: bytes) -> bytes:
    return string(key) + struct.pack("<I", vtype) + payload


def nested(depth: int) -> bytes:
    """An array of one array of one array ... of an empty array of u32, `depth` levels deep."""
    return struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * depth + struct.pack("<IQ", 4, 0)


@pytest.mark.parametrize("depth", [17, 100_000])
def test_deeply_nested_arrays_are_one_clear_error(tmp_path, depth):
    """An array of arrays one level per 12 bytes ran the parser out of stack (RecursionError)."""
    path = tmp_path / "deep.gguf"
    path.write_bytes(gguf_bytes(string(b"k") + nested(depth)))
    with pytest.raises(GGUFError, match=r"deep\.gguf: arrays nested more than 16 deep in 'k'"):
        read_metadata(path)
    path.write_bytes(gguf_bytes(string(b"k") + nested(depth), string(b"general.name") + nested(2)))
    with pytest.raises(GGUFError, match="arrays nested more than 16 deep"):
        read_summary(path)  # skipping it, too


def test_arrays_nested_a_little_still_read(tmp_path):
    path = tmp_path / "ok.gguf"
    path.write_bytes(gguf_bytes(string(b"k") + nested(15)))
    value = read_metadata(path).get("k")
    for _ in range(15):
        value = value[0]
    assert len(value) == 0


@pytest.mark.parametrize("key, vtype, payload, message", [
    (b"general.name", 9, struct.pack("<IQ", 8, 1) + string(b"x"),
     "general.name must be a string, not an array of strings (1)"),
    (b"tokenizer.ggml.model", 4, struct.pack("<I", 5), "tokenizer.ggml.model must be a string, not the integer 5"),
    (b"tokenizer.chat_template", 4, struct.pack("<I", 3), "tokenizer.chat_template must be a string"),
    (b"tokenizer.chat_template.tool_use", 7, b"\x01", "tokenizer.chat_template.tool_use must be a string"),
    (b"tokenizer.ggml.tokens", 8, string(b"abc"),
     "tokenizer.ggml.tokens must be an array of strings, not the string 'abc'"),
    (b"tokenizer.ggml.merges", 9, struct.pack("<IQ", 4, 1) + struct.pack("<I", 1),
     "tokenizer.ggml.merges must be an array of strings, not an array of uint32 (1)"),
    (b"tokenizer.ggml.token_type", 9, struct.pack("<IQ", 8, 1) + string(b"a"),
     "tokenizer.ggml.token_type must be an array of integers, not an array of strings (1)"),
    (b"tokenizer.ggml.token_type", 4, struct.pack("<I", 1),
     "token_type must be an array of integers, not the integer 1"),
    (b"tokenizer.ggml.scores", 4, struct.pack("<I", 1),
     "tokenizer.ggml.scores must be an array of numbers, not the integer 1"),
    (b"tokenizer.ggml.bos_token_id", 8, string(b"abc"),
     "bos_token_id must be a token id (an integer), not the string 'abc'"),
    (b"tokenizer.ggml.bos_token_id", 6, struct.pack("<f", float("nan")),
     "bos_token_id must be a token id (an integer), not the number nan"),
    (b"tokenizer.ggml.add_bos_token", 9, struct.pack("<IQ", 4, 2) + struct.pack("<II", 1, 1),
     "add_bos_token must be true or false, not an array of uint32 (2)"),
    (b"tokenizer.ggml.add_bos_token", 4, struct.pack("<I", 7),
     "add_bos_token must be true or false, not the integer 7"),
])
def test_keys_tokviz_reads_must_have_their_type(tmp_path, key, vtype, payload, message):
    """Wrong types were a TypeError / IndexError traceback or a bare numpy message in the backend."""
    path = tmp_path / "typed.gguf"
    path.write_bytes(gguf_bytes(kv(key, vtype, payload)))
    with pytest.raises(GGUFError, match=r"typed\.gguf: ") as e:
        read_metadata(path)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("key, vtype, payload", [
    (b"tokenizer.ggml.padding_token_id", 5, struct.pack("<i", -1)),  # none, as some writers say it
    (b"tokenizer.ggml.add_bos_token", 7, b"\x00"),
    (b"tokenizer.ggml.add_bos_token", 0, b"\x01"),
    (b"tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 1) + struct.pack("<f", 0.5)),
    (b"tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, 1) + struct.pack("<i", 1)),
    (b"some.other.key", 9, struct.pack("<IQ", 4, 1) + struct.pack("<I", 1)),  # not read: any type
])
def test_keys_of_the_right_type_read(tmp_path, key, vtype, payload):
    path = tmp_path / "typed.gguf"
    path.write_bytes(gguf_bytes(kv(key, vtype, payload)))
    assert key.decode() in read_metadata(path)
