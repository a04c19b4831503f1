"""Finding a shipped sample by a short name (`mixed`, `korean`, `python_code.py`)."""

from __future__ import annotations

from tokviz.core.resources import Sample, samples


def find_sample(name: str) -> Sample:
    key = name.lower()
    items = samples()
    for match in (
        lambda s: s.file.lower() == key,
        lambda s: s.file.rsplit(".", 1)[0].lower() == key,
        lambda s: s.kind.lower() == key or s.language.lower() == key,
        lambda s: key in s.title.lower(),
    ):
        found = [s for s in items if match(s)]
        if found:
            return found[0]
    names = ", ".join(s.file.rsplit(".", 1)[0] for s in items)
    raise KeyError(f"no sample {name!r} (samples: {names})")


def sample_text(name: str) -> str:
    return find_sample(name).read_text()
