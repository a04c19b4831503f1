"""Format inflation: the same content rewritten, counted by real tokenizers."""

from __future__ import annotations

import pytest

from tokviz.analysis.inflation import format_inflation, indent_variants, json_variants
from tokviz.analysis.stats import analyze_text
from tokviz.core.resources import sample_text

BACKENDS = ["cl100k_base", "qwen", "mistral-7b-v0.1"]


def test_indented_json_costs_more_than_minified(vocab):
    toks = [vocab(n) for n in BACKENDS]
    indented = analyze_text(sample_text("json_indented.json"), toks)
    minified = analyze_text(sample_text("json_minified.json"), toks)
    for a, b in zip(indented.results, minified.results):
        assert a.tokens > 1.3 * b.tokens, a.name
    rows = {r.variant: r for r in format_inflation(sample_text("json_indented.json"), toks)}
    for name in BACKENDS:
        assert rows["indent 4"].tokens[name] > rows["minified"].tokens[name]
        assert rows["as given"].tokens[name] == len(vocab(name).encode(sample_text("json_indented.json")))


def test_json_and_indent_variants():
    v = json_variants('{"k": ["한", 1]}')
    assert v["minified"] == '{"k":["한",1]}' and v["minified, \\u escapes"] == '{"k":["\\ud55c",1]}'
    assert v["tabs"] == '{\n\t"k": [\n\t\t"한",\n\t\t1\n\t]\n}'
    code = "def f():\n    if x:\n        y = (1,\n             2)\n"
    got = indent_variants(code)
    assert got["tabs"] == "def f():\n\tif x:\n\t\ty = (1,\n\t\t\t 2)\n"
    assert got["2 spaces"] == "def f():\n  if x:\n    y = (1,\n       2)\n"
    assert got["4 spaces"] == code
    with pytest.raises(ValueError):
        json_variants("not json")
