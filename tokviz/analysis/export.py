"""Tables and results as files: CSV (columns in first-seen order) and JSON, written atomically."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Mapping, Sequence

from tokviz.core.files import write_atomic


def csv_text(rows: Sequence[Mapping[str, object]]) -> str:
    """Rows as CSV, columns in first-seen order; None is an empty cell."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, restval="")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
    return out.getvalue()


def json_text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def to_csv(rows: Sequence[Mapping[str, object]], path: str | os.PathLike[str]) -> None:
    """Write rows as a UTF-8 CSV file, atomically."""
    write_atomic(Path(path), csv_text(rows).encode("utf-8"))


def to_json(data: object, path: str | os.PathLike[str]) -> None:
    """Write JSON-ready data (say `Analysis.to_dict()`) as a UTF-8 file, atomically."""
    write_atomic(Path(path), json_text(data).encode("utf-8"))
