"""`--per-example FILE`: one row per example, in input order, written as the counts arrive.

Columns: `example` (the record's 0-based place in the input), then one per tokenizer, named as
`tokviz encode` names it, holding that example's token count. The format follows the suffix:
`.csv`, `.jsonl` or `.parquet`. Rows go to a temporary file beside the target, renamed over it
only when the run ends well (`close`), so a cancelled or failed run leaves no half file.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FORMATS = (".csv", ".jsonl", ".parquet")


def per_example_format(path: str) -> str:
    """The suffix that picks the format, or ValueError naming the ones there are."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"--per-example {path}: the file must end in {', '.join(FORMATS)}")
    return suffix


class PerExampleWriter:
    """`add(index, counts)` for every example in order, then `close()` (or `discard()`)."""

    def __init__(self, path: str, names: Sequence[str], *, batch: int = 65536) -> None:
        self.path, self.names, self.format = path, list(names), per_example_format(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, self.temp = tempfile.mkstemp(prefix=f".{Path(path).name}.", suffix=".tmp", dir=folder)
        os.close(fd)
        self.rows: list[tuple[int, Sequence[int]]] = []
        self.batch = batch
        self._file: Any = None
        self._csv: Any = None
        self._parquet: Any = None
        if self.format == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            self._schema = pa.schema([("example", pa.int64()), *((n, pa.int64()) for n in self.names)])
            self._parquet = pq.ParquetWriter(self.temp, self._schema)
        else:
            self._file = open(self.temp, "w", encoding="utf-8", newline="")  # noqa: SIM115 (open across add() calls; closed in close/discard)
            if self.format == ".csv":
                self._csv = csv.writer(self._file, lineterminator="\n")
                self._csv.writerow(["example", *self.names])

    def add(self, index: int, counts: Sequence[int]) -> None:
        self.rows.append((index, counts))
        if len(self.rows) >= self.batch:
            self._flush()

    def _flush(self) -> None:
        if not self.rows:
            return
        if self.format == ".parquet":
            import pyarrow as pa

            columns = [[r[0] for r in self.rows], *([r[1][k] for r in self.rows] for k in range(len(self.names)))]
            self._parquet.write_table(pa.Table.from_arrays([pa.array(c, pa.int64()) for c in columns],
                                                           schema=self._schema))
        elif self.format == ".csv":
            self._csv.writerows([i, *c] for i, c in self.rows)
        else:
            self._file.writelines(
                json.dumps({"example": i, **dict(zip(self.names, c))}, ensure_ascii=False) + "\n" for i, c in self.rows
            )
        self.rows = []

    def close(self) -> None:
        """Write what is left and put the file in place."""
        try:
            self._flush()
            self._close_files()
            os.replace(self.temp, self.path)
        except BaseException:
            self.discard()  # no temporary left beside the target
            raise

    def discard(self) -> None:
        self._close_files()
        try:
            os.unlink(self.temp)
        except OSError:
            pass

    def _close_files(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
