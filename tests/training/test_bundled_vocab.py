"""The vocabulary tokviz ships for a first start: trained by tokviz itself, reproducible to the byte."""

from __future__ import annotations

import importlib.resources
import subprocess
import sys
from pathlib import Path

from tokviz.core import catalog
from tokviz.core.resources import resource_path


def test_retraining_on_the_shipped_samples_gives_the_shipped_file_byte_for_byte(tmp_path):
    samples = Path(str(resource_path("samples")))
    out = tmp_path / "again"
    subprocess.run(
        [sys.executable, "-m", "tokviz", "train", str(samples), "-o", str(out), "--vocab-size", "1024",
         "--pattern", "cl100k", "--special", "<|endoftext|>", "--exclude", "samples.json", "--jobs", "1"],
        check=True, capture_output=True,
    )
    shipped = importlib.resources.files("tokviz.resources").joinpath("vocabs", "tokviz-samples.tiktoken")
    assert (tmp_path / "again.tiktoken").read_bytes() == shipped.read_bytes()


def test_available_with_nothing_provisioned(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKVIZ_DATA_DIR", str(tmp_path / "empty"))
    entry = catalog.find("tokviz-samples")
    assert entry.bundled and entry.available
    assert [e.name for e in catalog.entries() if e.available] == ["tokviz-samples"]
    tok = catalog.load("tokviz-samples")
    assert tok.family == "trained" and tok.vocab_size == 1024
    text = "Tokenizers see every script differently. 토큰은 글자가 아니다."
    assert tok.decode(tok.encode_ids(text)) == text
    assert tok.encode_ids("<|endoftext|>", allowed_special="all") == [1023]
