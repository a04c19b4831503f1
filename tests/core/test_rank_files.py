"""Rank files tiktoken would panic on are refused first, with the file and the reason; a Rust
panic that still happens is an ordinary TokenizerError, not a BaseException that kills the process."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest

from tokviz.core import catalog
from tokviz.core.backends.tiktoken_backend import TiktokenTokenizer
from tokviz.core.tokenizer import TokenizerError

BYTES = {bytes([b]): b for b in range(256)}


def rank_file(path: Path, ranks: dict[bytes, int] | list[tuple[bytes, object]]) -> Path:
    items = ranks.items() if isinstance(ranks, dict) else ranks
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in items))
    return path


@pytest.mark.parametrize("ranks, message", [
    ({**BYTES, b"ab": 5}, r"rank 5 is given to two tokens \(b'\\x05' and b'ab'\)"),
    ([*BYTES.items(), (b"a", 300)], r"line 257 repeats the token b'a' of line 98"),
    ({k: v for k, v in BYTES.items() if k != b"h"}, r"1 of the 256 single-byte tokens are missing \(b'h'\)"),
    ({**BYTES, b"ab": 2**32}, r"rank 4294967296 of b'ab' is not a whole number from 0 to 4,294,967,294"),
    ([*BYTES.items(), (b"ab", "2.5")], r"line 257 is not '<base64 token> <rank>'"),
])
def test_rank_files_tiktoken_would_panic_on_are_refused(tmp_path, ranks, message):
    path = rank_file(tmp_path / "bad.tiktoken", ranks)
    with pytest.raises(TokenizerError, match=message) as e:
        catalog.load(str(path))
    assert str(path) in str(e.value) or "bad" in str(e.value)


def test_bad_base64_names_the_line(tmp_path):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(rank_file(tmp_path / "ok.tiktoken", BYTES).read_bytes() + b"!!notbase64 256\n")
    with pytest.raises(TokenizerError, match=r"bad\.tiktoken: line 257 is not '<base64 token> <rank>'"):
        catalog.load(str(path))


def test_a_panic_while_encoding_is_a_tokenizer_error():
    """A tiny in-memory vocabulary without the byte 'c': tiktoken panics on text that needs it."""
    tok = TiktokenTokenizer("tiny", {b"a": 0, b"b": 1}, pattern=r"\S+")
    assert tok.encode_ids("ab") == [0, 1]
    with pytest.raises(TokenizerError, match="tiny: the tokenizer library failed"):
        tok.encode_ids("abc")
    with pytest.raises(TokenizerError, match="tiny: the tokenizer library failed"):
        tok.encode_columns("abc")


def test_the_cli_says_one_line_for_a_duplicated_rank(tmp_path):
    path = rank_file(tmp_path / "dup.tiktoken", {**BYTES, b"ab": 5})
    out = subprocess.run([sys.executable, "-m", "tokviz", "encode", "-t", str(path), "hello"],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.strip() == (f"tokviz: error: {path}: cannot build tokenizer 'dup': rank 5 is given to two tokens "
                                  f"(b'\\x05' and b'ab')")


def test_a_byte_order_mark_before_the_first_line_is_skipped_as_tiktoken_skips_it(tmp_path):
    from tiktoken.load import load_tiktoken_bpe

    path = tmp_path / "bom.tiktoken"
    path.write_bytes(b"\xef\xbb\xbf" + rank_file(tmp_path / "plain.tiktoken", {**BYTES, b"ab": 256}).read_bytes())
    tok = catalog.load(str(path))
    assert dict(tok.mergeable_ranks) == load_tiktoken_bpe(str(path))
    assert tok.encode_ids("abab") == [256, 256]


def test_a_bad_line_is_quoted_as_the_text_it_is(tmp_path):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(rank_file(tmp_path / "ok.tiktoken", BYTES).read_bytes() + "YWI= ２５６\n".encode())
    with pytest.raises(TokenizerError, match="line 257 is not '<base64 token> <rank>': 'YWI= ２５６'"):
        catalog.load(str(path))
