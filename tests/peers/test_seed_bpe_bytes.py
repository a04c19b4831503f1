"""Every example of the "same sentence, different token counts" article (BPE from UTF-8 bytes:
256 byte ids, merges numbered from 256, ties broken by a fixed rule, the vocabulary size only an
upper bound, encoding in the learned order, exact round trips, Korean against English cost),
through `tokviz train`, `tokviz encode` and `tokviz stats` and the Tokenizer interface."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.peers.cli import encode_json, run
from tests.training.texts import ENGLISH, KOREAN, KOREAN_HELD_OUT
from tokviz.core import catalog
from tokviz.core.tokens import TokenKind


def train(capsys, tmp_path: Path, name: str, texts: dict[str, str], *options: str) -> tuple[Path, str]:
    """`tokviz train` on a folder holding `texts`; the written rank file and stderr."""
    corpus = tmp_path / f"{name}-corpus"
    corpus.mkdir()
    for file, text in texts.items():
        (corpus / file).write_text(text, encoding="utf-8")
    code, _, err = run(capsys, "train", str(corpus), "-o", str(tmp_path / name), "--jobs", "1", *options)
    assert code == 0, err
    return tmp_path / f"{name}.tiktoken", err


def ranks(path: Path) -> list[tuple[bytes, int]]:
    return [(base64.b64decode(b), int(r)) for b, r in (line.split() for line in path.read_text().splitlines())]


@pytest.fixture(scope="module")
def bytes_only(tmp_path_factory) -> str:
    """A vocabulary of the 256 bytes and no merge at all."""
    folder = tmp_path_factory.mktemp("bytes")
    (folder / "c").mkdir()
    (folder / "c" / "a.txt").write_text("hello", encoding="utf-8")
    from tokviz.cli import main

    assert main(["train", str(folder / "c"), "-o", str(folder / "bytes"), "--vocab-size", "256", "--jobs", "1"]) == 0
    return str(folder / "bytes.tiktoken")


def test_a_letter_is_one_byte_a_hangul_syllable_three(capsys, bytes_only):
    assert [len(c.encode()) for c in "A가"] == [1, 3] and "가".encode() == b"\xea\xb0\x80"
    [a], [ga] = (encode_json(capsys, "-t", bytes_only, text) for text in ("A", "가"))
    assert [t["id"] for t in a["tokens"]] == [65]
    assert [t["id"] for t in ga["tokens"]] == [0xEA, 0xB0, 0x80]
    assert [t["kind"] for t in ga["tokens"]] == ["fragment"] * 3
    assert all((t["start"], t["end"]) == (0, 1) for t in ga["tokens"])  # each byte covers the syllable


def test_with_no_merges_a_greeting_is_nine_tokens_and_hello_five(capsys, bytes_only):
    greeting = "안녕 hi"
    assert [len(c.encode()) for c in greeting] == [3, 3, 1, 1, 1]
    [g], [h] = (encode_json(capsys, "-t", bytes_only, text) for text in (greeting, "hello"))
    assert g["count"] == 9 and [t["id"] for t in g["tokens"]] == list(greeting.encode())
    assert h["count"] == 5 and [t["id"] for t in h["tokens"]] == [104, 101, 108, 108, 111]
    code, out, _ = run(capsys, "stats", "--text", greeting, "-t", bytes_only, "--json", "-")
    assert code == 0
    row = json.loads(out)["tokenizers"][0]
    assert (row["tokens"], row["chars"], row["bytes"]) == (9, 5, 9)


def test_hello_ties_are_broken_by_a_fixed_rule_and_ids_count_from_256(capsys, tmp_path):
    # all four pairs of "hello" occur once: a tie; the smallest (left, right) wins, so (e, l) first
    first, _ = train(capsys, tmp_path, "h1", {"a.txt": "hello"}, "--vocab-size", "260", "--min-frequency", "1")
    second, _ = train(capsys, tmp_path, "h2", {"a.txt": "hello"}, "--vocab-size", "260", "--min-frequency", "1")
    assert first.read_bytes() == second.read_bytes()  # the same text gives the same vocabulary
    learned = ranks(first)[256:]
    assert learned == [(b"el", 256), (b"hel", 257), (b"lo", 258), (b"hello", 259)]
    assert catalog.load(str(first)).encode_ids("hello") == [259]


def test_training_is_deterministic_across_runs_and_worker_counts(capsys, tmp_path):
    texts = {"en.txt": ENGLISH, "ko.txt": KOREAN}
    one, _ = train(capsys, tmp_path, "d1", texts, "--vocab-size", "700")
    corpus = tmp_path / "d1-corpus"
    code, _, err = run(capsys, "train", str(corpus), "-o", str(tmp_path / "d2"), "--vocab-size", "700", "--jobs", "2")
    assert code == 0, err
    assert one.read_bytes() == (tmp_path / "d2.tiktoken").read_bytes()


def test_the_vocabulary_size_is_only_an_upper_bound(capsys, tmp_path):
    path, err = train(capsys, tmp_path, "small", {"a.txt": "hello hello world"}, "--vocab-size", "50000")
    tok = catalog.load(str(path))
    assert tok.vocab_size < 300  # asked for 50,000; a pair seen once is not worth an id
    assert f"vocab {tok.vocab_size:,} of 50,000 requested" in err and "stopped early" in err
    assert tok.encode_ids("hello") == [tok.vocab_size - 1]  # h+e, l+l ... the last merge is "hello"


def test_encoding_follows_the_learned_order(capsys, tmp_path):
    # later merges are built from earlier ones: each token's parents have smaller ids
    path, _ = train(capsys, tmp_path, "order", {"en.txt": ENGLISH * 2}, "--vocab-size", "400")
    tok = catalog.load(str(path))
    rank = tok.mergeable_ranks
    for data, token_id in rank.items():
        if token_id >= 256:
            assert any(rank.get(data[:k], token_id) < token_id and rank.get(data[k:], token_id) < token_id
                       for k in range(1, len(data))), data


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("mixed")
    (folder / "c").mkdir()
    (folder / "c" / "en.txt").write_text(ENGLISH, encoding="utf-8")
    (folder / "c" / "ko.txt").write_text(KOREAN, encoding="utf-8")
    from tokviz.cli import main

    assert main(["train", str(folder / "c"), "-o", str(folder / "mixed"), "--vocab-size", "600", "--jobs", "1"]) == 0
    return str(folder / "mixed.tiktoken")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(exclude_categories=["Cs"]), max_size=60))
def test_decoding_gives_back_every_character(capsys, mixed, text):
    tok = catalog.load(mixed)
    ids = tok.encode_ids(text)
    assert tok.decode(ids) == text
    if text != "-":  # "-" alone names stdin
        [result] = encode_json(capsys, "-t", mixed, "--", text)
        assert b"".join(bytes.fromhex(t["bytes"]) for t in result["tokens"]) == text.encode()


def test_an_english_only_vocabulary_costs_korean_a_token_per_byte(capsys, tmp_path):
    size = str(256 + 150)
    both, _ = train(capsys, tmp_path, "both", {"en.txt": ENGLISH, "ko.txt": KOREAN}, "--vocab-size", size)
    english, _ = train(capsys, tmp_path, "english", {"en.txt": ENGLISH * 2}, "--vocab-size", size)
    assert catalog.load(str(both)).vocab_size == catalog.load(str(english)).vocab_size == int(size)
    assert not any(0xEA <= b <= 0xED for data, _ in ranks(english)[256:] for b in data)  # no Hangul merge

    paragraph = tmp_path / "ko_paragraph.txt"
    paragraph.write_text(KOREAN_HELD_OUT, encoding="utf-8")
    code, out, err = run(capsys, "stats", str(paragraph), "-t", str(both), "-t", str(english), "--json", "-")
    assert code == 0, err
    rows = {r["tokenizer"]: r for r in json.loads(out)["tokenizers"]}
    n_bytes = len(KOREAN_HELD_OUT.encode())
    assert rows["english"]["tokens"] > 0.9 * n_bytes  # about one token per byte
    assert rows["both"]["tokens"] < 0.75 * rows["english"]["tokens"]
    for path in (both, english):  # and both still decode the paragraph exactly
        tok = catalog.load(str(path))
        assert tok.decode(tok.encode_ids(KOREAN_HELD_OUT)) == KOREAN_HELD_OUT
    hangul = [t for t in catalog.load(str(english)).encode(KOREAN_HELD_OUT) if t.kind is TokenKind.FRAGMENT]
    assert len(hangul) >= 3 * sum("가" <= c <= "힣" for c in KOREAN_HELD_OUT) * 0.9
