"""Token cost and context analysis: what the same content costs in each tokenizer.

Prices and context limits are counted in tokens, while people estimate with characters; the estimate
fails silently for Korean, indented JSON, logs and emoji. Every count here comes from encoding the
user's text with the real tokenizer. The one exception is `TokenizerStats.estimate`, the characters
rule itself, shown beside the real count so its error can be seen.

* `analyze_text` / `analyze_paths` -> `Analysis`: one `TextStats` (characters, bytes, words, characters
  per script) and one `TokenizerStats` per tokenizer (tokens, ratios, tokens per script, estimate
  error, ratio to a baseline tokenizer, cost, context budget). Folders are read here: text files
  only; binary and non-UTF-8 files are skipped and reported, never fatal.
* Tokens per script: a token's weight of 1 is spread evenly over the bytes of the input it covers,
  and each byte counts for the class (`tokviz.core.scripts`) of its character. A token that covers
  no input (SentencePiece's dummy-prefix `▁`) counts for the classes of its own text (whitespace).
  So the per-script counts of a text always add up to its token count.
* `context_budget` says where a token limit falls in a text; `truncate_to_tokens` cuts a text to at
  most N tokens at a grapheme boundary (`tokviz.core.context`-style helpers live here too).
* `format_inflation`: the same content as minified vs indented JSON, tabs vs spaces, in tokens.
* Export: `stats_rows`, `script_rows`, `file_rows` -> `to_csv`; `Analysis.to_dict` -> `to_json`.

This module never loads tokenizers (the caller passes them) and imports no Qt: the GUI runs
`analyze_paths` in a worker with the `progress` callback and the `cancel` event.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Literal, Mapping, Sequence

import numpy as np
import regex

from tokviz.core.columns import TokenColumns, span_columns
from tokviz.core.files import write_atomic
from tokviz.core.scripts import OTHER, SCRIPTS, char_classes, code_points
from tokviz.core.tokenizer import SpecialPolicy, Tokenizer
from tokviz.core.tokens import Token, sanitize

FORMAT = "tokviz-stats"
VERSION = 1
DEFAULT_CHARS_PER_TOKEN = 4.0

Progress = Callable[[int, int], None]  # (files done, files in total)


class AnalysisCancelled(Exception):
    """The cancel event was set; no partial result is returned."""


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
    def of(cls, text: str, classes: np.ndarray | None = None) -> "TextStats":
        classes = char_classes(text) if classes is None else classes
        counts = np.bincount(classes, minlength=len(SCRIPTS)).tolist()
        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        return cls(len(text), _utf8_length(text), len(text.split()), lines, dict(zip(SCRIPTS, counts)))

    def __add__(self, other: "TextStats") -> "TextStats":
        return TextStats(
            self.chars + other.chars, self.bytes + other.bytes, self.words + other.words,
            self.lines + other.lines, _add(self.script_chars, other.script_chars), self.files + other.files,
        )


@dataclass(frozen=True)
class ContextBudget:
    """Where a token limit falls: the first `fit_chars` characters are covered only by tokens within
    the limit (for a folder: summed over files, each file cut on its own)."""

    limit: int
    tokens: int
    fit_chars: int
    chars: int
    files: int = 1
    files_fitting: int = 0

    @property
    def fits(self) -> bool:
        """The whole text (every file of a folder) fits within the limit."""
        return self.files_fitting == self.files

    @property
    def fraction(self) -> float:
        """How much of the text fits, in characters (1.0 for an empty text)."""
        return self.fit_chars / self.chars if self.chars else 1.0

    def __add__(self, other: "ContextBudget") -> "ContextBudget":
        return ContextBudget(
            self.limit, self.tokens + other.tokens, self.fit_chars + other.fit_chars,
            self.chars + other.chars, self.files + other.files, self.files_fitting + other.files_fitting,
        )


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

    tokens_per_char = property(lambda self: _ratio(self.tokens, self.text.chars))
    tokens_per_byte = property(lambda self: _ratio(self.tokens, self.text.bytes))
    tokens_per_word = property(lambda self: _ratio(self.tokens, self.text.words))
    chars_per_token = property(lambda self: _ratio(self.text.chars, self.tokens))
    bytes_per_token = property(lambda self: _ratio(self.text.bytes, self.tokens))

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


def attribute_tokens(text: str, tokens: Sequence[Token], classes: np.ndarray | None = None) -> np.ndarray:
    """Spread each token over the classes of the bytes it covers; a float per class of `SCRIPTS`.

    The result adds up to `len(tokens)` (up to float rounding).

    >>> from tokviz.core.tokens import Token, TokenKind
    >>> t = Token(1, b" ab", 0, 3, 0, 3, TokenKind.NORMAL, "Ġab")
    >>> w = attribute_tokens(" ab", [t]); round(float(w[SCRIPTS.index("latin")]), 3), round(float(w.sum()), 3)
    (0.667, 1.0)
    """
    classes = char_classes(text) if classes is None else classes
    weights = np.zeros(len(SCRIPTS))
    if not tokens:
        return weights
    cps = code_points(text)
    widths = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)  # UTF-8 bytes per character
    byte_classes = np.repeat(classes, widths)
    n = len(byte_classes)
    byte_starts, byte_ends, _ = span_columns(tokens)
    starts, ends = byte_starts.clip(0, n), byte_ends.clip(0, n)
    spans = ends > starts
    share = np.where(spans, 1.0 / np.maximum(ends - starts, 1), 0.0)
    # difference array: +share from byte_start, -share from byte_end; its running sum is each
    # byte's weight (tokens that overlap on a cut character simply add up)
    diff = np.bincount(starts, share, minlength=n + 1) - np.bincount(ends, share, minlength=n + 1)
    weights += np.bincount(byte_classes, np.cumsum(diff)[:n], minlength=len(SCRIPTS))
    for k in np.flatnonzero(~spans).tolist():
        own = char_classes(tokens[k].text)
        if len(own):
            weights += np.bincount(own, minlength=len(SCRIPTS)) / len(own)
        else:
            weights[OTHER] += 1.0
    return weights


# -- context budget ------------------------------------------------------------------------------


def context_budget(text: str, tokens: Sequence[Token], limit: int) -> ContextBudget:
    """Say where a limit of `limit` tokens falls in `text`, encoded as `tokens`.

    `fit_chars` is the start of the first character any token past the limit touches: a character
    cut across the limit (a fragment token on each side) does not fit. Encoding `text[:fit_chars]`
    alone may give a different count; `truncate_to_tokens` makes sure.
    """
    if limit < 0:
        raise ValueError(f"the token limit must be 0 or more, got {limit}")
    if len(tokens) <= limit:
        fit = len(text)
    else:
        fit = min(int(span_columns(tokens)[2][limit:].min()), len(text))
    return ContextBudget(limit, len(tokens), fit, len(text), 1, int(len(tokens) <= limit))


_GRAPHEME = regex.compile(r"\X")


def grapheme_floor(text: str, offset: int) -> int:
    """The largest grapheme-cluster boundary <= `offset` (never splits 👍🏽, 🇰🇷, `e`+U+0301, CRLF).

    >>> grapheme_floor("a🇰🇷", 2), grapheme_floor("ab", 1)
    (1, 1)
    """
    if offset >= len(text):
        return len(text)
    # a boundary always follows a control character (Unicode rule GB4), so start scanning there
    start = max(text.rfind(c, 0, offset) for c in "\n\t") + 1
    boundary = start
    for match in _GRAPHEME.finditer(text, start):
        if match.end() > offset:
            break
        boundary = match.end()
    return boundary


def truncate_to_tokens(
    tokenizer: Tokenizer, text: str, n: int, *, policy: SpecialPolicy = SpecialPolicy()
) -> str:
    """Cut `text` to a prefix that encodes to at most `n` tokens, at a grapheme boundary.

    A prefix can encode to more tokens than the first tokens of the whole text (a word cut in half
    splits into more pieces), so the prefix is re-encoded and cut again where the limit falls in
    *its* tokens, until it fits; each round cuts at least one character, and usually one or two
    rounds do. The result always fits; it is the longest prefix when the first cut fits.

    >>> from tokviz.core.catalog import load  # doctest: +SKIP
    >>> truncate_to_tokens(load("cl100k_base"), "hello world, hello", 2)  # doctest: +SKIP
    'hello world'
    """
    if n < 0:
        raise ValueError(f"the token limit must be 0 or more, got {n}")
    cut = len(text)
    tokens = tokenizer.encode_with(text, policy)
    while len(tokens) > n:
        if cut == 0:
            raise ValueError(f"{tokenizer.name} gives {len(tokens)} tokens even for an empty text")
        fit = context_budget(text[:cut], tokens, n).fit_chars
        cut = grapheme_floor(text, min(fit, cut - 1))
        tokens = tokenizer.encode_with(text[:cut], policy)
    return text[:cut]


# -- analysing texts and folders ------------------------------------------------------------------


@dataclass(frozen=True)
class FileStats:
    """One analysed file (or `<text>`): its size and each tokenizer's count."""

    path: str
    chars: int
    bytes: int
    tokens: Mapping[str, int]


@dataclass(frozen=True)
class Skipped:
    """A file left out of a folder analysis, and why (binary, not UTF-8, unreadable)."""

    path: str
    reason: str


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
        self.scripts = np.zeros(len(SCRIPTS))
        self.budget: ContextBudget | None = None

    def add(self, text: str, tokens: Sequence[Token], classes: np.ndarray, limit: int | None) -> None:
        self.tokens += len(tokens)
        self.scripts += attribute_tokens(text, tokens, classes)
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
    paths: Iterable[str | os.PathLike[str]], tokenizers: Sequence[Tokenizer], *,
    options: StatsOptions = StatsOptions(), progress: Progress | None = None,
    cancel: threading.Event | None = None, include_hidden: bool = False,
) -> Analysis:
    """Count every text file under `paths` (files or folders) in every tokenizer.

    Each file is encoded on its own (a document each). Binary files (a NUL byte), files that are not
    UTF-8 and unreadable files are skipped and listed in `Analysis.skipped`. Hidden files and folders
    (`.git`) are left out unless named or `include_hidden`. `progress(done, total)` is called after
    each file; setting `cancel` raises `AnalysisCancelled` at the next file.
    """
    files = list_files(paths, include_hidden=include_hidden)
    skipped: list[Skipped] = []

    def texts() -> Iterable[tuple[str, str]]:
        for path in files:
            text = read_text_file(path)
            if isinstance(text, Skipped):
                skipped.append(text)
            else:
                yield str(path), text

    return _analyze(texts(), tokenizers, options, skipped, progress, cancel, len(files))


def _analyze(
    texts: Iterable[tuple[str, str]], tokenizers: Sequence[Tokenizer], options: StatsOptions,
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
        classes = char_classes(text)
        stats = TextStats.of(text, classes)
        text_stats = stats if text_stats is None else text_stats + stats
        counts = {}
        for tokenizer, total_ in zip(tokenizers, totals):
            _check(cancel)
            tokens = TokenColumns(tokenizer.encode_columns(
                text, allowed_special=options.policy.allowed_special,
                disallowed_special=options.policy.disallowed_special,
            ))
            total_.add(text, tokens, classes, options.limit)
            counts[tokenizer.name] = len(tokens)
        files.append(FileStats(path, stats.chars, stats.bytes, counts))
        done += 1
        if progress is not None:
            progress(done + len(skipped), total)
    _check(cancel)
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


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise AnalysisCancelled("analysis cancelled")


def list_files(paths: Iterable[str | os.PathLike[str]], *, include_hidden: bool = False) -> list[Path]:
    """The files named and the files under the folders named, folders walked in sorted order.

    A path that does not exist raises FileNotFoundError (the caller typed it).
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if include_hidden or not d.startswith("."))
                found.extend(
                    Path(root, n) for n in sorted(names) if include_hidden or not n.startswith(".")
                )
        else:
            raise FileNotFoundError(2, "no such file or folder", str(path))
    return found


def read_text_file(path: Path) -> str | Skipped:
    """The file's UTF-8 text, or why it is skipped."""
    try:
        data = path.read_bytes()
    except OSError as e:
        return Skipped(str(path), f"unreadable ({e.strerror or e})")
    if (nul := data.find(b"\0")) >= 0:
        return Skipped(str(path), f"binary (NUL byte at offset {nul})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        return Skipped(str(path), f"not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})")


# -- format inflation ---------------------------------------------------------------------------------


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
        rows.append(InflationRow(name, len(variant), _utf8_length(variant), counts))
    return rows


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# -- export ---------------------------------------------------------------------------------------------


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


__all__ = [
    "Analysis", "AnalysisCancelled", "ContextBudget", "FileStats", "InflationRow", "Skipped",
    "StatsOptions", "TextStats", "TokenizerStats", "analyze_paths", "analyze_text", "attribute_tokens",
    "context_budget", "csv_text", "file_rows", "format_inflation", "grapheme_floor", "indent_variants",
    "json_text", "json_variants", "list_files", "read_text_file", "script_rows", "stats_rows", "to_csv",
    "to_json", "truncate_to_tokens",
]
