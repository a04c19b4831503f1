"""Token cost statistics on real tokenizers: counts, per-script sums, options, folders, export."""

from __future__ import annotations

import csv
import json
import threading

import pytest

from tokviz.analysis.export import to_csv, to_json
from tokviz.analysis.stats import (
    StatsOptions,
    analyze_paths,
    analyze_text,
    file_rows,
    script_rows,
    stats_rows,
)
from tokviz.core.cancel import Cancelled
from tokviz.core.resources import sample_text, samples
from tokviz.core.scripts import SCRIPTS

BACKENDS = ["cl100k_base", "qwen", "mistral-7b-v0.1"]
SAMPLE_FILES = [s.file for s in samples()]


@pytest.mark.parametrize("name", BACKENDS)
def test_counts_equal_the_backends_own(vocab, name):
    tok = vocab(name)
    for file in SAMPLE_FILES:
        text = sample_text(file)
        [r] = analyze_text(text, [tok]).results
        assert r.tokens == len(tok.encode(text)), file
        assert r.text.chars == len(text) and r.text.bytes == len(text.encode())


@pytest.mark.parametrize("name", BACKENDS)
def test_per_script_tokens_add_up_to_the_total(vocab, name):
    tok = vocab(name)
    for file in SAMPLE_FILES:
        r = analyze_text(sample_text(file), [tok]).results[0]
        assert sum(r.script_tokens.values()) == pytest.approx(r.tokens, rel=1e-9, abs=1e-9), file
        assert set(r.script_tokens) == set(SCRIPTS) and min(r.script_tokens.values()) >= -1e-9


def test_korean_costs_more_per_character_than_english(vocab):
    """The seed's point, measured on the shipped samples."""
    for name in ("cl100k_base", "o200k_base", "qwen"):
        tok = vocab(name)
        english = analyze_text(sample_text("english.txt"), [tok]).results[0]
        korean = analyze_text(sample_text("korean.txt"), [tok]).results[0]
        assert korean.tokens_per_char > 2 * english.tokens_per_char, name
        assert korean.script_tokens_per_char()["hangul"] > 2 * english.script_tokens_per_char()["latin"]
    cl100k = analyze_text(sample_text("korean.txt"), [vocab("cl100k_base")]).results[0]
    assert cl100k.tokens_per_char > 0.8  # close to a token per character
    assert cl100k.estimate_error_pct < -60  # the 4-characters rule under-counts Korean badly
    english = analyze_text(sample_text("english.txt"), [vocab("cl100k_base")]).results[0]
    assert abs(english.estimate_error_pct) < 25  # and is about right for English


def test_baseline_ratio_cost_and_estimate(vocab):
    toks = [vocab("cl100k_base"), vocab("o200k_base")]
    text = sample_text("korean.txt")
    options = StatsOptions(chars_per_token=3, prices={"o200k_base": 2.5}, baseline="o200k_base")
    a = analyze_text(text, toks, options=options)
    cl, o2 = a.by_name("cl100k_base"), a.by_name("o200k_base")
    assert a.baseline == "o200k_base" and o2.ratio_to_baseline == 1.0
    assert cl.ratio_to_baseline == pytest.approx(cl.tokens / o2.tokens) and cl.ratio_to_baseline > 1.3
    assert o2.cost == pytest.approx(o2.tokens * 2.5 / 1e6) and cl.cost is None
    assert cl.estimate == pytest.approx(len(text) / 3)
    assert cl.estimate_error_pct == pytest.approx(100 * (len(text) / 3 - cl.tokens) / cl.tokens)
    with pytest.raises(ValueError, match="baseline"):
        analyze_text(text, toks, options=StatsOptions(baseline="qwen"))


def test_options_are_validated():
    for bad in ({"chars_per_token": 0}, {"limit": -1}, {"prices": {"x": -1.0}}, {"prices": {"x": float("nan")}}):
        with pytest.raises(ValueError):
            StatsOptions(**bad)


def test_empty_text(vocab):
    r = analyze_text("", [vocab("cl100k_base")], options=StatsOptions(limit=5)).results[0]
    assert r.tokens == 0 and r.tokens_per_char is None and r.estimate_error_pct is None
    assert r.budget.fits and r.budget.fraction == 1.0


def test_folder_budget_is_per_file(vocab, tmp_path):
    (tmp_path / "a.txt").write_text("hello " * 50)
    (tmp_path / "b.txt").write_text("hi")
    a = analyze_paths([tmp_path], [vocab("cl100k_base")], options=StatsOptions(limit=10))
    b = a.results[0].budget
    assert b.files == 2 and b.files_fitting == 1 and not b.fits
    assert b.fit_chars == 2 + len("hello " * 10) - 1  # the space before the 11th token is its start


def test_folder_skips_binary_and_latin1_and_reports_progress(vocab, tmp_path):
    (tmp_path / "ko.txt").write_text(sample_text("korean.txt"), encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "en.md").write_text("hello world\n", encoding="utf-8")
    (tmp_path / "image.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "latin1.txt").write_bytes("café crème".encode("latin-1"))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: x")
    calls = []
    tok = vocab("qwen")
    a = analyze_paths([tmp_path], [tok], progress=lambda d, t: calls.append((d, t)))
    assert sorted(s.path.rsplit("/", 1)[1] for s in a.skipped) == ["image.bin", "latin1.txt"]
    reasons = {s.path.rsplit("/", 1)[1]: s.reason for s in a.skipped}
    assert reasons["image.bin"].startswith("binary") and "0xe9 at offset 3" in reasons["latin1.txt"]
    assert [f.path.rsplit("/", 1)[1] for f in a.files] == ["ko.txt", "en.md"]
    expected = len(tok.encode(sample_text("korean.txt"))) + len(tok.encode("hello world\n"))
    assert a.results[0].tokens == expected and a.text.files == 2
    assert calls[-1] == (4, 4) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    with pytest.raises(FileNotFoundError):
        analyze_paths([tmp_path / "missing"], [tok])


def test_cancel_raises(vocab, tmp_path):
    for i in range(3):
        (tmp_path / f"{i}.txt").write_text("text")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        analyze_paths([tmp_path], [vocab("qwen")], cancel=cancel)


def test_exports_parse_back(vocab, tmp_path):
    toks = [vocab("cl100k_base"), vocab("qwen")]
    a = analyze_text(sample_text("mixed.txt"), toks, options=StatsOptions(limit=50, prices={"qwen": 0.4}))
    to_csv(stats_rows(a), tmp_path / "stats.csv")
    with open(tmp_path / "stats.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["tokenizer"] for r in rows] == ["cl100k_base", "qwen"]
    assert [int(r["tokens"]) for r in rows] == [r.tokens for r in a.results]
    assert float(rows[1]["cost_usd"]) == pytest.approx(a.results[1].cost) and rows[0]["cost_usd"] == ""
    assert sum(float(rows[0][f"tokens_{s}"]) for s in SCRIPTS) == pytest.approx(a.results[0].tokens)
    to_json(a.to_dict(), tmp_path / "stats.json")
    data = json.loads((tmp_path / "stats.json").read_text("utf-8"))
    assert data["format"] == "tokviz-stats" and data["version"] == 1
    assert data == json.loads(json.dumps(a.to_dict()))
    assert data["tokenizers"][0]["fit_chars"] == a.results[0].budget.fit_chars
    assert {r["script"] for r in script_rows(a)} >= {"hangul", "han", "latin", "emoji"}
    assert file_rows(a)[0]["tokens_qwen"] == a.results[1].tokens
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically, no temp file left


def test_csv_cells_carry_no_float_noise(tmp_path):
    from tokviz.analysis.export import csv_text

    text = csv_text([{"tokens": 20.833333333333325, "share": 0.1 + 0.2, "files": 3, "note": None}])
    assert text.splitlines() == ["tokens,share,files,note", "20.83333333,0.3,3,"]
