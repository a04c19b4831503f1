"""Vocabulary overlap on real vocabularies, the expected sets read from tiktoken itself."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.training.texts import TRAINING
from tokviz.analysis.overlap import (
    contained_pairs,
    length_bucket,
    new_merges,
    only_table,
    overlap_of,
    overlap_of_sets,
    token_bytes_of,
)
from tokviz.cli import main
from tokviz.core import catalog
from tokviz.core.cancel import Cancelled


def _tiktoken_ordinary(tokenizer) -> dict[bytes, int]:
    """Every ordinary id's bytes as tiktoken's own `decode_single_token_bytes` gives them."""
    enc = tokenizer.encoding
    specials = set(enc.special_tokens_set)
    out = {}
    for i in range(enc.n_vocab):
        data = enc.decode_single_token_bytes(i)
        if data.decode("utf-8", "replace") not in specials:
            out[data] = i
    return out


def test_r50k_and_p50k_share_r50k_whole_and_p50k_adds_space_runs(vocab):
    r50k, p50k = vocab("r50k_base"), vocab("p50k_base")
    r_bytes, p_bytes = _tiktoken_ordinary(r50k), _tiktoken_ordinary(p50k)
    # what tiktoken says: r50k's 50,256 ordinary tokens are p50k's first ranks, under the same ids
    assert len(r_bytes) == 50256 and all(p_bytes[d] == i for d, i in r_bytes.items())
    extra = sorted((i, d) for d, i in p_bytes.items() if d not in r_bytes)
    assert [i for i, _ in extra] == list(range(50257, 50281))
    assert [d for _, d in extra] == [b" " * n for n in range(2, 26)]

    o = overlap_of([r50k, p50k])
    assert o.sets[0] == r_bytes and o.sets[1] == p_bytes
    assert o.shared == set(r_bytes) and o.only[0] == set()
    assert o.only_rows(1) == extra
    assert o.jaccard(0, 1) == pytest.approx(50256 / 50280) and o.jaccard(1, 0) == o.jaccard(0, 1)
    assert o.same_ids(0, 1) == 50256
    assert o.specials == [{"<|endoftext|>"}, {"<|endoftext|>"}]
    by_script = {label: (totals, shared, only) for label, totals, shared, only in o.breakdown("script")}
    assert by_script["whitespace"][2] == [0, 24]  # every extra token is whitespace
    assert sum(t[0][0] for t in by_script.values()) == 50256
    by_length = {label: only for label, _, _, only in o.breakdown("length")}
    assert sum(only[1] for only in by_length.values()) == 24
    assert by_length["2"] == [0, 1] and by_length["17+"] == [0, 9]  # lengths 2 and 17..25

    merges = new_merges(o.sets[0], p50k)
    assert [(m.id, m.data) for m in merges] == extra
    assert merges[0].parents == (220, 220)  # "  " is " " + " " (220 is " " in both)
    for m in merges:
        assert m.parent_bytes is not None and m.parent_bytes[0] + m.parent_bytes[1] == m.data
        assert max(m.parents) < m.id


def test_byte_fallback_pieces_count_by_their_bytes(vocab):
    mistral = vocab("mistral-7b-v0.1")
    tokens = token_bytes_of(mistral)
    assert b"\n" in tokens  # <0x0A>
    assert "<s>" in mistral.special_tokens and b"<s>" not in tokens
    assert b"<unk>" not in tokens


def test_three_vocabularies_and_a_disjoint_pair():
    o = overlap_of_sets(["a", "b", "c"], [{b"x": 0, b"y": 1}, {b"x": 0, b"z": 1}, {b"x": 3, b"y": 4}])
    assert o.shared == {b"x"} and o.only == [set(), {b"z"}, set()]  # y is in a and c
    assert o.jaccard(0, 2) == 1.0 and o.same_ids(0, 2) == 0
    disjoint = overlap_of_sets(["a", "b"], [{b"x": 0}, {b"\xe6": 0}])
    assert disjoint.jaccard(0, 1) == 0.0
    assert [row[0] for row in disjoint.breakdown("script")] == ["fragment", "latin"]
    with pytest.raises(ValueError, match="at least two"):
        overlap_of_sets(["a"], [{b"x": 0}])
    assert length_bucket(9) == "9-16"


def _train(tmp_path: Path, size: int) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for i, text in enumerate(TRAINING):
        (corpus / f"doc{i}.txt").write_text(text * 2, encoding="utf-8")
    out = tmp_path / f"v{size}"
    assert main(["train", str(corpus), "-o", str(out), "--vocab-size", str(size), "--jobs", "1"]) == 0
    return out.with_suffix(".tiktoken")


def test_a_trained_vocabulary_and_its_smaller_base(tmp_path: Path, capsys):
    # training is deterministic: the first 300 merges of a 340-id run are the 300-id run's
    small, big = catalog.load(str(_train(tmp_path, 300))), catalog.load(str(_train(tmp_path, 340)))
    capsys.readouterr()
    o = overlap_of([small, big])
    assert o.only[0] == set() and o.same_ids(0, 1) == len(o.sets[0]) == 300
    assert contained_pairs(o) == [(0, 1)]
    merges = new_merges(o.sets[0], big)
    assert [m.id for m in merges] == list(range(300, 340))
    ranks = big.encoding
    for m in merges:
        assert ranks.decode_single_token_bytes(m.id) == m.data
        assert m.parents is not None and ranks.encode_single_token(m.parent_bytes[0]) == m.parents[0]


def test_an_extension_made_by_tokviz_extend(tmp_path: Path, capsys):
    words = tmp_path / "words.txt"
    words.write_text("대한민국\t5\n tokenizers\t3\n", encoding="utf-8")
    ext = tmp_path / "ext.tiktoken"
    assert main(["extend", "r50k_base", str(words), "-o", str(ext)]) == 0
    capsys.readouterr()
    sidecar = json.loads(ext.with_suffix(".json").read_text())
    expected = [(bytes.fromhex(left) + bytes.fromhex(right), token_id)
                for left, right, _, token_id in sidecar["merges"]]
    o = overlap_of([catalog.load("r50k_base"), catalog.load(str(ext))])
    assert o.only[0] == set() and o.shared_count == 50256
    merges = new_merges(o.sets[0], catalog.load(str(ext)))
    assert [(m.data, m.id) for m in merges] == expected
    assert [m.parent_bytes for m in merges] == [
        (bytes.fromhex(left), bytes.fromhex(right)) for left, right, _, _ in sidecar["merges"]
    ]


def test_the_table_of_tokens_only_one_has(vocab):
    r50k, p50k = vocab("r50k_base"), vocab("p50k_base")
    o = overlap_of([r50k, p50k])
    table = only_table(o, [r50k, p50k])
    # p50k's 24 runs of spaces, ids 50257.., spelled by p50k itself (GPT-2's byte alphabet)
    assert len(table) == 24 and set(table.vocab.tolist()) == {1}
    assert table.ids.tolist() == list(range(50257, 50281))
    assert [table.cell(r, "piece") for r in range(2)] == [p50k.piece(50257), p50k.piece(50258)] == ["ĠĠ", "ĠĠĠ"]
    assert [table.cell(0, c) for c in ("text", "hex", "script")] == ["··", "20 20", "whitespace"]
    assert table.filter(script="whitespace").tolist() == list(range(24))
    assert table.filter(vocabulary=0).tolist() == [] and table.filter(script="latin").tolist() == []
    assert table.filter(length="17+").tolist() == list(range(15, 24))  # 17 to 25 spaces
    assert table.filter(text="·" * 25).tolist() == [23]
    assert table.filter(text="20 20 20").tolist() == list(range(1, 24))  # hex: 3 spaces or more
    assert table.sort(None, "length", descending=True).tolist() == list(range(23, -1, -1))
    assert table.sort(None, "text").tolist() == list(range(24))  # "··" < "···" < …
    assert table.csv_rows([0]) == [{"vocabulary": "p50k_base", "id": 50257, "text": "··", "spelling": "ĠĠ",
                                    "bytes": "20 20", "length": 2, "script": "whitespace"}]


def test_two_unrelated_vocabularies_and_cancelling(vocab):
    cl100k, mistral = vocab("cl100k_base"), vocab("mistral-7b-v0.1")
    o = overlap_of([cl100k, mistral])
    pair = o.pair(0, 1)
    assert (pair.common, pair.same_ids) == (o.common(0, 1), o.same_ids(0, 1))
    assert pair.jaccard == o.jaccard(0, 1) and contained_pairs(o) == []
    table = only_table(o, [cl100k, mistral])
    assert len(table) == len(o.only[0]) + len(o.only[1])
    assert (table.vocab == 0).sum() == len(o.only[0])
    # each row's spelling is its own vocabulary's: SentencePiece writes a space as ▁
    spaced = [int(r) for r in table.filter(vocabulary=1, text="·") if table.data[r].startswith(b" ")]
    assert len(spaced) > 1000 and all(table.cell(r, "piece").startswith("▁") for r in spaced)
    by_script = {label: only for label, _, _, only in o.breakdown("script")}
    for label, only in by_script.items():
        assert [len(table.filter(vocabulary=i, script=label)) for i in (0, 1)] == only
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        overlap_of([cl100k, mistral], cancel=cancel)
    with pytest.raises(Cancelled):
        only_table(overlap_of([cl100k, mistral]), [cl100k, mistral], cancel=cancel)
    with pytest.raises(Cancelled):
        new_merges(o.sets[0], mistral, cancel=cancel)
