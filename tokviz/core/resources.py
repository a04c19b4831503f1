"""Access to the assets tokviz ships (package ``tokviz.resources``). Qt-free.

Everything goes through :mod:`importlib.resources`, so it works the same from a source
checkout, an editable install, a wheel, or a zip.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

PACKAGE = "tokviz.resources"
SAMPLES_DIR = "samples"
SAMPLES_INDEX = "samples.json"
SAMPLES_FORMAT = "tokviz-samples"
PALETTE_FILE = "palette.json"
PALETTE_FORMAT = "tokviz-palette"

__all__ = ["Sample", "palette", "resource_path", "sample_text", "samples"]


def resource_path(*parts: str) -> Traversable:
    """The traversable for ``parts`` inside ``tokviz.resources`` (e.g. ``"icons", "add.svg"``).

    For a real filesystem path (say, for Qt) wrap it in ``importlib.resources.as_file``.
    """
    node = files(PACKAGE)
    for part in parts:
        node = node.joinpath(part)
    return node


@dataclass(frozen=True, slots=True)
class Sample:
    """One entry of ``samples/samples.json``."""

    file: str
    title: str
    language: str
    kind: str

    def path(self) -> Traversable:
        return resource_path(SAMPLES_DIR, self.file)

    def read_text(self) -> str:
        return sample_text(self.file)


def _load_json(*parts: str, expected_format: str) -> dict[str, Any]:
    data = json.loads(resource_path(*parts).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != expected_format:
        raise ValueError(f"{'/'.join(parts)}: expected format {expected_format!r}")
    return data


@lru_cache(maxsize=1)
def _samples() -> tuple[Sample, ...]:
    data = _load_json(SAMPLES_DIR, SAMPLES_INDEX, expected_format=SAMPLES_FORMAT)
    return tuple(
        Sample(file=e["file"], title=e["title"], language=e["language"], kind=e["kind"])
        for e in data["samples"]
    )


def samples() -> list[Sample]:
    """The shipped sample texts, in menu order."""
    return list(_samples())


def sample_text(file: str) -> str:
    """The UTF-8 text of the sample ``file`` (a name inside ``samples/``)."""
    if not file or "/" in file or "\\" in file or file in (".", ".."):
        raise ValueError(f"not a sample file name: {file!r}")
    return resource_path(SAMPLES_DIR, file).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _palette() -> str:
    return resource_path(PALETTE_FILE).read_text(encoding="utf-8")


def palette() -> dict[str, Any]:
    """The token palette: ``{"tokens": [hex, ...], "kinds": {kind: hex}, "highlight": hex, ...}``.

    Returns a fresh dict each call, so callers may modify it.
    """
    data: dict[str, Any] = json.loads(_palette())
    if data.get("format") != PALETTE_FORMAT:
        raise ValueError(f"{PALETTE_FILE}: expected format {PALETTE_FORMAT!r}")
    return data
