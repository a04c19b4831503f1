"""A tiny word-frequency report, used as a sample of ordinary Python source.

The module reads one or more text files, counts words case-insensitively and
prints the most common ones as a small aligned table.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

WORD_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
DEFAULT_TOP = 10


@dataclass
class Report:
    """Word counts collected from a set of files."""

    counts: Counter[str] = field(default_factory=Counter)
    files: list[Path] = field(default_factory=list)
    total_words: int = 0

    def add_text(self, text: str) -> None:
        """Count every word in ``text``."""
        words = [w.lower() for w in WORD_RE.findall(text)]
        self.counts.update(words)
        self.total_words += len(words)

    def add_file(self, path: Path, encoding: str = "utf-8") -> None:
        """Read ``path`` and count its words; undecodable bytes are replaced."""
        self.add_text(path.read_text(encoding=encoding, errors="replace"))
        self.files.append(path)

    def top(self, n: int = DEFAULT_TOP) -> list[tuple[str, int]]:
        """Return the ``n`` most common words, ties broken alphabetically."""
        return sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    def format(self, n: int = DEFAULT_TOP) -> str:
        """Render the report as a plain-text table."""
        rows = self.top(n)
        if not rows:
            return "no words found"
        width = max(len(word) for word, _ in rows)
        lines = [f"{len(self.files)} file(s), {self.total_words:,} words, {len(self.counts):,} distinct"]
        for rank, (word, count) in enumerate(rows, start=1):
            share = count / self.total_words
            lines.append(f"{rank:>3}. {word:<{width}}  {count:>6}  {share:6.2%}")
        return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="text files to read")
    parser.add_argument("-n", "--top", type=int, default=DEFAULT_TOP, help="how many words to show")
    parser.add_argument("--encoding", default="utf-8", help="file encoding (default: %(default)s)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = Report()
    for path in args.paths:
        try:
            report.add_file(path, encoding=args.encoding)
        except OSError as exc:
            print(f"warning: skipping {path}: {exc.strerror}", file=sys.stderr)
    if not report.files:
        print("error: no readable files", file=sys.stderr)
        return 1
    print(report.format(args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
