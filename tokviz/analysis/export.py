"""Tables and results as files: CSV (columns in first-seen order) and JSON, written atomically."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tokviz.core.files import write_atomic
from tokviz.core.tokens import Token


def csv_text(rows: Sequence[Mapping[str, object]]) -> str:
    """Rows as CSV, columns in first-seen order; None is an empty cell, a float has at most ten
    significant digits (sums of fractional attributions carry noise like `20.833333333333325`).

    >>> csv_text([{"tokens": 20.833333333333325, "share": 0.1 + 0.2, "files": 3, "note": None}]).splitlines()
    ['tokens,share,files,note', '20.83333333,0.3,3,']
    """
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, restval="")
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
    return out.getvalue()


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(float(f"{value:.10g}"))  # 1.0 stays 1.0
    return value


def json_text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def to_csv(rows: Sequence[Mapping[str, object]], path: str | os.PathLike[str]) -> None:
    """Write rows as a UTF-8 CSV file, atomically."""
    write_atomic(Path(path), csv_text(rows).encode("utf-8"))


def to_json(data: object, path: str | os.PathLike[str]) -> None:
    """Write JSON-ready data (say `Analysis.to_dict()`) as a UTF-8 file, atomically."""
    write_atomic(Path(path), json_text(data).encode("utf-8"))


def encoding_record(name: str, family: str, tokens: Sequence[Token]) -> dict[str, object]:
    """One tokenizer's tokens as `tokviz encode --json` prints them (and the GUI copies them).

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> r = encoding_record("cl100k_base", "tiktoken", [Token(15339, b"hi", 0, 2, 0, 2, TokenKind.NORMAL, "hi")])
    >>> r["tokenizer"], r["count"], r["tokens"][0]  # doctest: +NORMALIZE_WHITESPACE
    ('cl100k_base', 1,
     {'id': 15339, 'bytes': '6869', 'start': 0, 'end': 2, 'kind': 'normal', 'text': 'hi', 'piece': 'hi'})
    """
    return {
        "tokenizer": name,
        "family": family,
        "count": len(tokens),
        "tokens": [
            {"id": t.id, "bytes": t.bytes.hex(), "start": t.start, "end": t.end, "kind": t.kind.value,
             "text": t.text, "piece": t.piece}
            for t in tokens
        ],
    }


def ids_text(ids: Iterable[int]) -> str:
    """Token ids as a list literal, as Python and JSON read it.

    >>> ids_text([15339, 1917])
    '[15339, 1917]'
    """
    return "[" + ", ".join(str(int(i)) for i in ids) + "]"
