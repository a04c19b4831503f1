"""`tokviz overlap` as a user sees it: counts, tables, the tokens only one has, JSON, errors."""

from __future__ import annotations

import json

from tokviz.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_output(capsys):
    code, out, err = run(capsys, "overlap", "-t", "r50k_base", "-t", "p50k_base")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[:4] == [
        "r50k_base   50,256 tokens        0 only here",
        "p50k_base   50,280 tokens       24 only here",
        "shared by all: 50,256 of 50,280 distinct tokens",
        "r50k_base & p50k_base: 50,256 common (50,256 under the same id), Jaccard 0.9995",
    ]
    assert "by script:" in lines and "by length:" in lines
    assert "only in p50k_base (24):" in lines and "    50257  ··" in lines
    assert "new merges in p50k_base (24):" in lines
    assert "    50257  ··  <- · + ·  (220 + 220)" in lines


def test_json(capsys):
    code, out, _ = run(capsys, "overlap", "--json", "-t", "r50k_base", "-t", "p50k_base")
    assert code == 0
    result = json.loads(out)
    assert result["shared"] == 50256 and result["union"] == 50280
    assert result["pairs"] == [{"a": "r50k_base", "b": "p50k_base", "common": 50256, "same_ids": 50256,
                                "jaccard": 50256 / 50280}]
    p50k = result["vocabularies"][1]
    assert p50k["only"] == 24 and p50k["only_tokens"][0] == {"id": 50257, "bytes": "2020", "text": "  "}
    assert [m["id"] for m in result["new_merges"]] == list(range(50257, 50281))
    assert result["new_merges"][0]["parents"] == [220, 220]


def test_no_new_merges_when_neither_contains_the_other(capsys):
    code, out, _ = run(capsys, "overlap", "--json", "-t", "cl100k_base", "-t", "o200k_base")
    assert code == 0
    result = json.loads(out)
    assert "new_merges" not in result and 0 < result["pairs"][0]["jaccard"] < 1


def test_one_vocabulary_is_an_error(capsys):
    code, _, err = run(capsys, "overlap", "-t", "r50k_base")
    assert code == 1 and err == "tokviz: error: overlap needs at least two vocabularies (-t A -t B)\n"
