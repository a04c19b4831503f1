"""Format inflation: what the same content costs written another way, in each tokenizer.

JSON minified vs indented (2, 4, tabs) vs `\\u`-escaped; code indented with tabs vs 2 or 4 spaces.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import regex

from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import sanitize


@dataclass(frozen=True)
class InflationRow:
    """One way of writing the same content, and what it costs in each tokenizer."""

    variant: str
    chars: int
    bytes: int
    tokens: Mapping[str, int]


def json_variants(text: str) -> dict[str, str]:
    """The same JSON data written several ways (ValueError if `text` is not JSON).

    >>> list(json_variants('{"a": [1, 2]}').values())[:2]
    ['{"a":[1,2]}', '{"a": [1, 2]}']
    """
    data = json.loads(text)
    dump = lambda **kw: json.dumps(data, ensure_ascii=kw.pop("ascii", False), **kw)  # noqa: E731
    return {
        "minified": dump(separators=(",", ":")),
        "one line": dump(),
        "indent 2": dump(indent=2),
        "indent 4": dump(indent=4),
        "tabs": dump(indent="\t"),
        "minified, \\u escapes": dump(separators=(",", ":"), ascii=True),
    }


_LEADING = regex.compile(r"^[ \t]+", regex.MULTILINE)


def indent_variants(text: str) -> dict[str, str]:
    """The same code indented with tabs, 2 spaces and 4 spaces.

    The indent unit is a tab or the smallest run of leading spaces; spaces left over after whole
    units (alignment) are kept.

    >>> indent_variants("if x:\\n    y\\n")["tabs"]
    'if x:\\n\\ty\\n'
    """
    spaces = [len(m) for m in _LEADING.findall(text) if "\t" not in m]
    unit = min(spaces) if spaces else 4

    def reindent(style: str) -> str:
        def sub(match: regex.Match) -> str:
            lead = match.group()
            levels = lead.count("\t") + lead.count(" ") // unit
            return style * levels + " " * (lead.count(" ") % unit)

        return _LEADING.sub(sub, text)

    return {"tabs": reindent("\t"), "2 spaces": reindent("  "), "4 spaces": reindent("    ")}


def format_inflation(
    text: str, tokenizers: Sequence[Tokenizer], *, kind: Literal["auto", "json", "indent"] = "auto",
    policy: SpecialPolicy = SpecialPolicy(),
) -> list[InflationRow]:
    """Token counts of `text` as given and rewritten (JSON re-serialized, or code re-indented)."""
    if kind == "json" or kind == "auto" and _is_json(text):
        variants = json_variants(text)
    else:
        variants = indent_variants(text)
    rows = []
    for name, variant in {"as given": text, **variants}.items():
        counts = {t.name: len(t.encode_with(variant, policy)) for t in tokenizers}
        rows.append(InflationRow(name, len(variant), len(sanitize(variant).encode("utf-8")), counts))
    return rows


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
