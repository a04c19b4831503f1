"""Vocabulary extension: learn the merges that make given words single tokens of an existing BPE.

Appending a word to a byte-level BPE vocabulary does nothing unless the merges that build it exist,
so this learns them, as Qwen's `add_merges.py` does: each word (NFC-normalised, one pre-token chunk
of the base's split pattern, not already a token) is first cut by the base vocabulary; then the
most frequent adjacent pair over all words is merged, again and again, until every word is one
token. Ties go to the shorter result (in characters, then bytes), then the lexicographically
smaller one: the order Qwen's tool uses, which its worked example depends on.

New ranks start after the base's ids (Qwen: 151,643 ranks + 208 special tokens -> 151851) and
never overwrite one. This module writes nothing itself; `save_extension` does, atomically.
"""

from __future__ import annotations

import base64
import hashlib
import json
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import regex

from tokviz.core.backends.tiktoken_backend import MAX_ID
from tokviz.core.files import write_files_atomic
from tokviz.core.sidecar import EXTENSION_FORMAT, EXTENSION_VERSION
from tokviz.core.tokenizer import Tokenizer


class ExtensionError(ValueError):
    """Bad word list or start id: the message names the file and line where there is one."""


@dataclass(frozen=True)
class Merge:
    left: bytes
    right: bytes
    frequency: int
    id: int

    @property
    def token(self) -> bytes:
        return self.left + self.right

    def describe(self) -> str:
        text = self.token.decode("utf-8", errors="replace")
        return f"{self.left!r} + {self.right!r} -> {text!r} id {self.id} (frequency {self.frequency})"


@dataclass
class Extension:
    merges: list[Merge] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    start_id: int = 0

    @property
    def ranks(self) -> dict[bytes, int]:
        return {m.token: m.id for m in self.merges}


def read_word_list(path: str | Path) -> dict[str, int]:
    """Read a `word<TAB>frequency` file; see `parse_words`. Errors name the file and the line."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise ExtensionError(f"cannot read {path}: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise ExtensionError(f"{path} is not UTF-8 text (byte offset {e.start})") from e
    try:
        return parse_words(text)
    except ExtensionError as e:
        raise ExtensionError(f"{path}: {e}") from None


def parse_words(text: str, *, spaces: bool = False) -> dict[str, int]:
    """Parse `word<TAB>frequency` lines; NFC-normalise words; sum repeated words.

    With `spaces`, a line without a tab may also be `word frequency` (split at the last space, so
    a word may hold spaces), as people type them. Raises ExtensionError naming the line.

    >>> parse_words("一只猫\\t100\\n夸张的 比喻手法 20\\n一只猫 1", spaces=True)
    {'一只猫': 101, '夸张的 比喻手法': 20}
    """
    words: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t") if "\t" in line or not spaces else line.rstrip().rsplit(None, 1)
        if len(parts) != 2 or not parts[0].strip():
            form = "'word<TAB>frequency' (or 'word frequency')" if spaces else "'word<TAB>frequency'"
            raise ExtensionError(f"line {lineno} is not {form}: {line!r}")
        word, freq = parts
        try:
            frequency = int(freq)
        except ValueError:
            raise ExtensionError(f"line {lineno}: frequency {freq!r} is not a whole number") from None
        if frequency <= 0:
            raise ExtensionError(f"line {lineno}: frequency must be positive, not {frequency}")
        word = unicodedata.normalize("NFC", word)
        words[word] = words.get(word, 0) + frequency
    if not words:
        raise ExtensionError("no words (one 'word<TAB>frequency' per line)")
    return words


def byte_level_bpe(base: Tokenizer) -> tuple[Mapping[bytes, int], str]:
    """The base's ranks and split pattern; ExtensionError when it is not a byte-level BPE."""
    ranks, pattern = base.mergeable_ranks, base.split_pattern
    if ranks is None or pattern is None:
        raise ExtensionError(f"{base.name}: extension needs a byte-level BPE (.tiktoken) base, not {base.family}")
    return ranks, pattern


def default_start_id(base: Tokenizer) -> int:
    """The first id after every rank and special token of the base."""
    ranks, _ = byte_level_bpe(base)
    return max([*ranks.values(), *base.special_tokens.values()]) + 1


def learn_extension(
    base: Tokenizer, words: dict[str, int], *, start_id: int | None = None
) -> Extension:
    """Learn the merges that make each word one token; see the module docstring for the order.

    >>> ext = learn_extension(qwen, {"我是一只猫": 20, "一只猫": 100})  # doctest: +SKIP
    >>> [m.id for m in ext.merges]  # doctest: +SKIP
    [151851, 151852, 151853, 151854]
    """
    check_start_id(start_id)
    first_free = default_start_id(base)
    if start_id is None:
        start_id = first_free
    elif start_id < first_free:
        raise ExtensionError(
            f"start id {start_id} is inside the base's existing ids (0..{first_free - 1}); "
            f"new ids must start at {first_free} or later so no rank is overwritten"
        )
    extension = Extension(start_id=start_id)
    ranks, pattern = byte_level_bpe(base)
    segments = _initial_segments(base, ranks, regex.compile(pattern), words, extension.warnings)
    _merge_until_whole(segments, extension, ranks)
    if extension.merges and extension.merges[-1].id > MAX_ID:
        raise ExtensionError(
            f"start id {start_id:,} leaves no room for {len(extension.merges)} new ids: the last would be "
            f"{extension.merges[-1].id:,}, past {MAX_ID:,}, the largest id tiktoken accepts"
        )
    return extension


def check_start_id(start_id: int | None) -> None:
    """Refuse a start id no `.tiktoken` loader accepts (tiktoken keeps ids as 32-bit numbers).

    >>> check_start_id(10**11)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    tokviz.training.extend.ExtensionError: start id 100,000,000,000 is past 4,294,967,294,
    the largest id tiktoken accepts
    """
    if start_id is not None and start_id > MAX_ID:
        raise ExtensionError(f"start id {start_id:,} is past {MAX_ID:,}, the largest id tiktoken accepts")


def _initial_segments(
    base: Tokenizer, ranks: Mapping[bytes, int], pattern: regex.Pattern[str], words: dict[str, int], warnings: list[str]
) -> dict[tuple[bytes, ...], int]:
    segments: Counter[tuple[bytes, ...]] = Counter()
    for word, frequency in words.items():
        parts = pattern.findall(word)
        if len(parts) > 1:
            warnings.append(f"{word!r} would be pre-tokenized to {parts}, so it cannot become one token: skipped")
            continue
        data = word.encode("utf-8")
        if data in ranks:
            warnings.append(f"{word!r} is already a token (id {ranks[data]}): skipped")
            continue
        segments[tuple(t.bytes for t in base.encode(word))] += frequency  # special-token text is plain
    return dict(segments)


def _pair_key(item: tuple[tuple[bytes, bytes], int]) -> tuple[int, int, int, str, bytes]:
    (left, right), frequency = item
    merged = left + right
    text = merged.decode("utf-8", errors="replace")
    return -frequency, len(text), len(merged), text, merged


def _merge_until_whole(
    segments: dict[tuple[bytes, ...], int], extension: Extension, base_ranks: Mapping[bytes, int]
) -> None:
    # A word list is small (thousands of words), so recounting per merge is clear and fast enough.
    segments = {s: f for s, f in segments.items() if len(s) > 1}
    next_id = extension.start_id
    while segments:
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for seg, frequency in segments.items():
            for pair in zip(seg, seg[1:]):
                pairs[pair] += frequency
        (left, right), frequency = min(pairs.items(), key=_pair_key)
        if left + right in base_ranks:  # reachable only through a merge order the base never takes
            extension.warnings.append(
                f"{(left + right)!r} is already a token (id {base_ranks[left + right]}): merge kept, no new id"
            )
        else:
            extension.merges.append(Merge(left, right, frequency, next_id))
            next_id += 1
        segments = {
            merged: f for seg, f in segments.items() if len(merged := _apply(seg, left, right)) > 1
        }


def _apply(seg: tuple[bytes, ...], left: bytes, right: bytes) -> tuple[bytes, ...]:
    out: list[bytes] = []
    i = 0
    while i < len(seg):
        if i + 1 < len(seg) and seg[i] == left and seg[i + 1] == right:
            out.append(left + right)
            i += 2
        else:
            out.append(seg[i])
            i += 1
    return tuple(out)


def extension_paths(path: str | Path) -> tuple[Path, Path]:
    """`(OUT.tiktoken, OUT.json)` for an output named with either suffix (in any case) or none.

    >>> [p.name for p in extension_paths("out/ext.json")], extension_paths("ext")[0].name
    (['ext.tiktoken', 'ext.json'], 'ext.tiktoken')
    >>> [p.name for p in extension_paths("ext.JSON")], extension_paths("ext.Tiktoken")[0].name
    (['ext.tiktoken', 'ext.json'], 'ext.tiktoken')
    """
    path = Path(path)
    if path.suffix.lower() in (".tiktoken", ".json"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".tiktoken"), path.with_name(path.name + ".json")


def save_extension(extension: Extension, path: str | Path, *, base_spec: str, base_sha256: str) -> Path:
    """Write the extra `.tiktoken` (only the new ranks) and its sidecar, both or neither (a failure
    leaves the files that were there byte-identical; SaveError names the file and the cause).

    The sidecar names the base and its sha256, so loading the extra file alone gives the extended
    tokenizer, and a base that changed since is refused (`tokviz.core.sidecar` reads it). `path`
    may end in `.tiktoken`, `.json` or neither (`extension_paths`); the rank file's path is returned.
    """
    path, sidecar_file = extension_paths(path)
    lines = (
        f"{base64.b64encode(m.token).decode('ascii')} {m.id}\n" for m in sorted(extension.merges, key=lambda m: m.id)
    )
    ranks = "".join(lines).encode("ascii")
    sidecar = {
        "format": EXTENSION_FORMAT, "version": EXTENSION_VERSION, "base": base_spec, "base_sha256": base_sha256,
        "start_id": extension.start_id,
        "merges": [[m.left.hex(), m.right.hex(), m.frequency, m.id] for m in extension.merges],
        "warnings": extension.warnings, "ranks_sha256": hashlib.sha256(ranks).hexdigest(),
    }
    write_files_atomic([(path, ranks), (sidecar_file, json.dumps(sidecar, ensure_ascii=False, indent=1).encode())])
    return path


def iter_report(extension: Extension) -> Iterable[str]:
    for warning in extension.warnings:
        yield f"warning: {warning}"
    for merge in extension.merges:
        yield f"merge: {merge.describe()}"
