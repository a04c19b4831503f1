"""Token cost statistics: what the same content costs in each tokenizer.

Prices and context limits are counted in tokens, while people estimate with characters; the estimate
fails silently for Korean, indented JSON, logs and emoji. Every count here comes from encoding the
user's text with the real tokenizer. The one exception is `TokenizerStats.estimate`, the characters
rule itself, shown beside the real count so its error can be seen.

`analyze_text` / `analyze_paths` -> `Analysis`: one `TextStats` (characters, bytes, words, characters
per script) and one `TokenizerStats` per tokenizer (tokens, ratios, tokens per script from
`attribution`, estimate error, ratio to a baseline tokenizer, cost, the context budget from
`budget`). Folders are walked by `tokviz.core.walk` (regular files only) and read here: text files
only; binary and non-UTF-8 files are skipped and reported, never fatal. `stats_rows`, `script_rows`
and `file_rows` flatten an analysis for tables and charts, and for `export`'s CSV;
`Analysis.to_dict` is the JSON.

Format inflation lives in `inflation`. This module never loads tokenizers (the caller passes them)
and imports no Qt: the GUI runs `analyze_paths` in a worker with the `progress` callback and the
`cancel` event.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from tokviz.analysis.attribution import add_share_counts, share_counts, share_weights
from tokviz.analysis.budget import ContextBudget, context_budget
from tokviz.analysis.large_text import LargeText, count_text, count_tokens
from tokviz.core.cancel import check
from tokviz.core.scripts import SCRIPTS, char_classes
from tokviz.core.stream import encode_whole
from tokviz.core.textfile import wide_text
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import Token, sanitize
from tokviz.core.walk import Skipped, collect_files

FORMAT = "tokviz-stats"
VERSION = 1
DEFAULT_CHARS_PER_TOKEN = 4.0

Progress = Callable[[int, int], None]  # (files done, files in total)


@dataclass(frozen=True)
class StatsOptions:
    """What the user set: the characters rule, prices, a context limit, the baseline, specials."""

    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN
    prices: Mapping[str, float] = field(default_factory=dict)  # tokenizer name -> USD per 1M tokens
    limit: int | None = None  # context limit in tokens
    baseline: str | None = None  # a tokenizer name; None: the first tokenizer
    policy: SpecialPolicy = SpecialPolicy()

    def __post_init__(self) -> None:
        if not self.chars_per_token > 0:
            raise ValueError(f"characters per token must be positive, got {self.chars_per_token}")
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"the token limit must be 0 or more, got {self.limit}")
        for name, price in self.prices.items():
            if not (price >= 0 and math.isfinite(price)):
                raise ValueError(f"the price for {name} must be a finite number >= 0, got {price}")


# -- counts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextStats:
    """What a text is, independent of any tokenizer. Words are whitespace-separated runs (Chinese and
    Japanese, written without spaces, have few)."""

    chars: int
    bytes: int
    words: int
    lines: int
    script_chars: Mapping[str, int]  # every class of SCRIPTS, in order, zeros included
    files: int = 1

    @classmethod
    def of(cls, text: str, classes: np.ndarray | None = None) -> TextStats:
        classes = char_classes(text) if classes is None else classes
        counts = np.bincount(classes, minlength=len(SCRIPTS)).tolist()
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        return cls(len(text), _utf8_length(text), len(text.split()), lines, dict(zip(SCRIPTS, counts)))

    def __add__(self, other: TextStats) -> TextStats:
        return TextStats(
            self.chars + other.chars, self.bytes + other.bytes, self.words + other.words,
            self.lines + other.lines, _add(self.script_chars, other.script_chars), self.files + other.files,
        )


class Counts(NamedTuple):
    """A cut's size: `tokens` for `chars` characters of `bytes` UTF-8 bytes. Ratios are None where
    they would divide by 0. The pane footers show these; `TokenizerStats` derives its ratios from them.

    >>> Counts(10, 40, 50).chars_per_token, Counts(0, 0, 0).bytes_per_token
    (4.0, None)
    """

    tokens: int
    chars: int
    bytes: int

    @property
    def chars_per_token(self) -> float | None:
        return _ratio(self.chars, self.tokens)

    @property
    def bytes_per_token(self) -> float | None:
        return _ratio(self.bytes, self.tokens)

    @property
    def tokens_per_char(self) -> float | None:
        return _ratio(self.tokens, self.chars)

    @property
    def tokens_per_byte(self) -> float | None:
        return _ratio(self.tokens, self.bytes)

    def summary(self, first: Counts | None = None) -> str:
        """Two lines for a pane footer (`first`: the first pane's counts, None for the first pane).

        >>> print(Counts(10, 40, 50).summary(Counts(8, 40, 50)))
        10 tokens · +2 (+25.0%) vs first
        4.00 chars/tok · 5.00 bytes/tok · 25.0 tok/100 chars
        >>> print(Counts(0, 0, 0).summary())
        0 tokens · first pane
        – chars/tok · – bytes/tok · – tok/100 chars
        """
        head = f"{self.tokens:,} tokens"
        head += f" · {difference(self.tokens, first.tokens)} vs first" if first is not None else " · first pane"
        per_100 = None if self.tokens_per_char is None else 100 * self.tokens_per_char
        return (
            f"{head}\n{_fmt(self.chars_per_token, '.2f')} chars/tok · {_fmt(self.bytes_per_token, '.2f')} "
            f"bytes/tok · {_fmt(per_100, '.1f')} tok/100 chars"
        )


def difference(count: int, reference: int) -> str:
    """Say how `count` differs from `reference`.

    >>> difference(12, 10), difference(10, 10), difference(5, 0)
    ('+2 (+20.0%)', '±0 (0.0%)', '+5')
    """
    delta = count - reference
    sign = "+" if delta > 0 else ("±" if delta == 0 else "")
    if reference == 0:
        return f"{sign}{delta}"
    return f"{sign}{delta} ({100.0 * delta / reference:+.1f}%)".replace("(+0.0%)", "(0.0%)")


def _fmt(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


@dataclass(frozen=True)
class TokenizerStats:
    """One tokenizer's counts for a text (or a folder); ratios are None where they would divide by 0."""

    name: str
    family: str
    tokens: int
    text: TextStats
    script_tokens: Mapping[str, float]  # every class of SCRIPTS; adds up to `tokens`
    chars_per_token_rule: float = DEFAULT_CHARS_PER_TOKEN
    baseline_tokens: int | None = None
    price_per_mtok: float | None = None
    budget: ContextBudget | None = None

    @property
    def counts(self) -> Counts:
        return Counts(self.tokens, self.text.chars, self.text.bytes)

    tokens_per_char = property(lambda self: self.counts.tokens_per_char)
    tokens_per_byte = property(lambda self: self.counts.tokens_per_byte)
    tokens_per_word = property(lambda self: _ratio(self.tokens, self.text.words))
    chars_per_token = property(lambda self: self.counts.chars_per_token)
    bytes_per_token = property(lambda self: self.counts.bytes_per_token)

    @property
    def estimate(self) -> float:
        """Tokens by the characters rule (characters / rule)."""
        return self.text.chars / self.chars_per_token_rule

    @property
    def estimate_error_pct(self) -> float | None:
        """(estimate - real) / real in percent: negative when the rule under-counts (Korean)."""
        return None if not self.tokens else 100.0 * (self.estimate - self.tokens) / self.tokens

    @property
    def ratio_to_baseline(self) -> float | None:
        return None if self.baseline_tokens is None else _ratio(self.tokens, self.baseline_tokens)

    @property
    def cost(self) -> float | None:
        """USD for the text at `price_per_mtok`, None when no price was given."""
        return None if self.price_per_mtok is None else self.tokens * self.price_per_mtok / 1e6

    def script_tokens_per_char(self) -> dict[str, float | None]:
        return {s: _ratio(self.script_tokens[s], self.text.script_chars[s]) for s in SCRIPTS}


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def _add(a: Mapping[str, float], b: Mapping[str, float]) -> dict:
    return {k: a[k] + b[k] for k in a}


def _utf8_length(text: str) -> int:
    return len(sanitize(text).encode("utf-8"))


# -- analysing texts and folders ------------------------------------------------------------------


@dataclass(frozen=True)
class FileStats:
    """One analysed file (or `<text>`): its size and each tokenizer's count."""

    path: str
    chars: int
    bytes: int
    tokens: Mapping[str, int]


@dataclass(frozen=True)
class Analysis:
    """The result of `analyze_text` / `analyze_paths`."""

    text: TextStats
    results: list[TokenizerStats]
    baseline: str
    options: StatsOptions
    files: list[FileStats] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def by_name(self, name: str) -> TokenizerStats:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict:
        """Everything, JSON-ready, with a format version."""
        return {
            "format": FORMAT, "version": VERSION, "baseline": self.baseline,
            "chars_per_token_rule": self.options.chars_per_token, "limit": self.options.limit,
            "text": {
                "files": self.text.files, "chars": self.text.chars, "bytes": self.text.bytes,
                "words": self.text.words, "lines": self.text.lines, "script_chars": dict(self.text.script_chars),
            },
            "tokenizers": stats_rows(self), "scripts": script_rows(self), "files": file_rows(self),
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


class _Totals:
    """Running sums for one tokenizer over the texts of an analysis."""

    def __init__(self) -> None:
        self.tokens = 0
        self.shares = np.zeros((len(SCRIPTS), 1), dtype=np.int64)  # see attribution.share_counts
        self.budget: ContextBudget | None = None

    @property
    def scripts(self) -> np.ndarray:
        return share_weights(self.shares)

    def add_counts(self, tokens: int, shares: np.ndarray, budget: ContextBudget | None) -> None:
        self.tokens += tokens
        self.shares = add_share_counts(self.shares, shares)
        if budget is not None:
            self.budget = budget if self.budget is None else self.budget + budget

    def add(self, text: str, tokens: Sequence[Token], classes: np.ndarray, limit: int | None) -> None:
        self.tokens += len(tokens)
        self.shares = add_share_counts(self.shares, share_counts(text, tokens, classes))
        if limit is not None:
            budget = context_budget(text, tokens, limit)
            self.budget = budget if self.budget is None else self.budget + budget


def analyze_text(
    text: str, tokenizers: Sequence[Tokenizer], *, options: StatsOptions = StatsOptions(),
    cancel: threading.Event | None = None,
) -> Analysis:
    """Count `text` in every tokenizer.

    >>> from tokviz.core.catalog import load  # doctest: +SKIP
    >>> a = analyze_text("안녕하세요", [load("cl100k_base"), load("qwen")])  # doctest: +SKIP
    >>> a.by_name("qwen").ratio_to_baseline  # doctest: +SKIP
    """
    return _analyze([("<text>", text)], tokenizers, options, [], None, cancel, 1)


def analyze_paths(
    paths: Sequence[str | os.PathLike[str]], tokenizers: Sequence[Tokenizer], *,
    options: StatsOptions = StatsOptions(), progress: Progress | None = None,
    cancel: threading.Event | None = None, include_hidden: bool = False,
) -> Analysis:
    """Count every text file under `paths` (files or folders) in every tokenizer.

    Each file is encoded on its own (a document each). What is not a regular file (a FIFO, a link to
    `/dev/zero`), binary files (a NUL byte), files that are not UTF-8 and unreadable files are
    skipped and listed in `Analysis.skipped`. Hidden files and folders (`.git`) are left out unless
    named or `include_hidden`. A path that does not exist raises FileNotFoundError.
    `progress(done, total)` is called after each file; setting `cancel` raises `Cancelled`
    at the next file (or folder, while walking).
    """
    listing = collect_files(paths, hidden=include_hidden, on_folder=lambda _: check(cancel, "analysis"))
    files = listing.files
    skipped: list[Skipped] = []

    def texts() -> Iterable[tuple[str, str | LargeText]]:
        for path in files:
            text = _read_file(path)
            if isinstance(text, Skipped):
                skipped.append(text)
            else:
                yield str(path), text

    analysis = _analyze(texts(), tokenizers, options, skipped, progress, cancel, len(files))
    return dataclasses.replace(analysis, skipped=sorted(listing.skipped + skipped, key=lambda s: s.path))


def _analyze(
    texts: Iterable[tuple[str, str | LargeText]], tokenizers: Sequence[Tokenizer], options: StatsOptions,
    skipped: list[Skipped], progress: Progress | None, cancel: threading.Event | None, total: int,
) -> Analysis:
    if not tokenizers:
        raise ValueError("no tokenizer to analyse with")
    names = [t.name for t in tokenizers]
    baseline = options.baseline or names[0]
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the tokenizers ({', '.join(names)})")
    totals = [_Totals() for _ in tokenizers]
    text_stats: TextStats | None = None
    files: list[FileStats] = []
    done = 0
    for path, text in texts:
        if isinstance(text, LargeText):
            stats, counts = _add_large(text, tokenizers, totals, options, cancel)
            text_stats = stats if text_stats is None else text_stats + stats
            files.append(FileStats(path, stats.chars, stats.bytes, counts))
            done += 1
            if progress is not None:
                progress(done + len(skipped), total)
            continue
        classes = char_classes(text)
        stats = TextStats.of(text, classes)
        text_stats = stats if text_stats is None else text_stats + stats
        counts = {}
        for tokenizer, total_ in zip(tokenizers, totals):
            check(cancel, "analysis")
            tokens = encode_whole(
                tokenizer, text, allowed_special=options.policy.allowed_special,
                disallowed_special=options.policy.disallowed_special,
            )
            total_.add(text, tokens, classes, options.limit)
            counts[tokenizer.name] = len(tokens)
        files.append(FileStats(path, stats.chars, stats.bytes, counts))
        done += 1
        if progress is not None:
            progress(done + len(skipped), total)
    check(cancel, "analysis")
    if progress is not None and skipped:
        progress(total, total)
    if text_stats is None:
        text_stats = TextStats(0, 0, 0, 0, dict.fromkeys(SCRIPTS, 0), files=0)
    base_tokens = totals[names.index(baseline)].tokens
    results = [
        TokenizerStats(
            tokenizer.name, tokenizer.family, t.tokens, text_stats,
            dict(zip(SCRIPTS, t.scripts.tolist())), options.chars_per_token, base_tokens,
            options.prices.get(tokenizer.name), t.budget,
        )
        for tokenizer, t in zip(tokenizers, totals)
    ]
    return Analysis(text_stats, results, baseline, options, files, skipped)


#: files larger than this are counted in blocks (`large_text`), not read whole: one encode of a
#: whole file holds every token's columns at once, and the library's own state besides, many
#: times the file's size; in blocks the output is the same (bench/bench_cli_memory.py)
LARGE_FILE_BYTES = 1 << 20


def _read_file(path: Path) -> str | LargeText | Skipped:
    try:
        large = path.stat().st_size > LARGE_FILE_BYTES
    except OSError:
        large = False
    if not large:
        return read_text_file(path)
    text = LargeText(path)
    problem = text.problem()
    return problem if problem is not None else text


def _add_large(
    text: LargeText, tokenizers: Sequence[Tokenizer], totals: list[_Totals], options: StatsOptions,
    cancel: threading.Event | None,
) -> tuple[TextStats, dict[str, int]]:
    """Count a large file into `totals`, one tokenizer at a time: its TextStats and token counts."""
    c = count_text(text)
    counts = {}
    for tokenizer, total_ in zip(tokenizers, totals):
        check(cancel, "analysis")
        counted = count_tokens(text, tokenizer, options.policy, options.limit, c.chars)
        total_.add_counts(counted.tokens, counted.shares, counted.budget)
        counts[tokenizer.name] = counted.tokens
    return TextStats(c.chars, c.bytes, c.words, c.lines, c.script_chars), counts


def read_text_file(path: Path) -> str | Skipped:
    """The file's UTF-8 text, or why it is skipped."""
    try:
        data = path.read_bytes()
    except OSError as e:
        return Skipped(str(path), f"unreadable ({e.strerror or e})")
    if (wide := wide_text(data[:4])) is not None:
        return Skipped(str(path), wide)
    if (nul := data.find(b"\0")) >= 0:
        return Skipped(str(path), f"binary (NUL byte at offset {nul})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        return Skipped(str(path), f"not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})")


# -- rows for tables, charts and export -------------------------------------------------------------


def stats_rows(analysis: Analysis) -> list[dict]:
    """One flat row per tokenizer (the CSV table), with `tokens_<script>` columns."""
    rows = []
    for r in analysis.results:
        b = r.budget
        rows.append({
            "tokenizer": r.name, "family": r.family, "files": r.text.files, "tokens": r.tokens,
            "chars": r.text.chars, "bytes": r.text.bytes, "words": r.text.words,
            "tokens_per_char": r.tokens_per_char, "tokens_per_byte": r.tokens_per_byte,
            "chars_per_token": r.chars_per_token, "bytes_per_token": r.bytes_per_token,
            "estimate": r.estimate, "estimate_error_pct": r.estimate_error_pct,
            "baseline": analysis.baseline, "ratio_to_baseline": r.ratio_to_baseline,
            "price_per_mtok": r.price_per_mtok, "cost_usd": r.cost,
            "limit": b.limit if b else None, "fit_chars": b.fit_chars if b else None,
            "fit_fraction": b.fraction if b else None, "files_fitting": b.files_fitting if b else None,
            **{f"tokens_{s}": r.script_tokens[s] for s in SCRIPTS},
        })
    return rows


def script_rows(analysis: Analysis) -> list[dict]:
    """One row per tokenizer and script present in the text (for bar charts)."""
    return [
        {"tokenizer": r.name, "script": s, "chars": r.text.script_chars[s], "tokens": r.script_tokens[s],
         "tokens_per_char": r.script_tokens[s] / r.text.script_chars[s]}
        for r in analysis.results for s in SCRIPTS if r.text.script_chars[s]
    ]


def file_rows(analysis: Analysis) -> list[dict]:
    return [
        {"path": f.path, "chars": f.chars, "bytes": f.bytes, **{f"tokens_{k}": v for k, v in f.tokens.items()}}
        for f in analysis.files
    ]
