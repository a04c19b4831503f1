"""Odd tokens of a vocabulary: the ones behind "glitch token" reports, Qt-free.

Four categories, each a set of ids (a token may be in several):

* `unreachable`: a token of whole UTF-8 text that ordinary encoding of its own text does not give
  (the text does not encode to exactly that one id): a BPE token whose merges never fire, a piece
  shadowed by another, a piece the normalizer rewrites (a SentencePiece piece with a space the
  model never sees alone). Reachable inside a longer text is not checked: "alone" is the test,
  except for a WordPiece continuation piece (`##ing`), which by construction is never alone: it
  is reachable when a word yields it, and the words tried are a one-character word start and
  the piece's text (`q` + `ing` -> `q` `##ing`), for the six word starts fewest pieces begin with.
  No such word yields a piece whose text cannot stand inside a word (it holds punctuation or
  needs normalizing), or that a longer piece always shadows after every word start tried.
* `fragments`: bytes that are not whole UTF-8 characters: such a token decodes to U+FFFD alone.
* `duplicates`: ids whose bytes another id also has (every id of such a group).
* `control_looking`: ordinary tokens spelled like control tokens (`<|endoftext|>`, `<s>`, `[PAD]`,
  `<unk>`) or holding control characters other than tab, newline and carriage return.

Only ordinary pieces are examined: special and unknown pieces, and byte-fallback pieces (`<0x41>`,
there by design for bytes no piece covers, shadowed by `A` where one does), are none of these.
Where the normalizer puts a dummy prefix before every text (SentencePiece's `▁`), a piece that
begins with it (`▁the`) is tested by encoding its text after the prefix (`the`), and a piece
without it (`ing`, only ever inside a word) is not tested: no text alone can give it. Everything
goes through the `Tokenizer` interface: the texts are encoded in batches (`encode_ordinary_batch`:
the library's own batch encode where the backend has one, else the texts joined by one of the
vocabulary's special tokens parsed only at the joins, so every text is cut as an ordinary segment
of its own).

>>> from tokviz.core.catalog import load  # doctest: +SKIP
>>> odd = find_oddities(load("r50k_base"))  # doctest: +SKIP
>>> odd.counts()["fragments"]  # doctest: +SKIP
344
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import regex

from tokviz.core.tokenizer import Tokenizer
from tokviz.core.tokens import TokenKind, is_fragment

__all__ = ["CATEGORIES", "Category", "Oddities", "find_oddities", "looks_like_control"]

Category = Literal["unreachable", "fragments", "duplicates", "control_looking"]
CATEGORIES: tuple[Category, ...] = ("unreachable", "fragments", "duplicates", "control_looking")
#: a human label per category, for tables and filters
LABELS: dict[Category, str] = {
    "unreachable": "unreachable", "fragments": "fragment alone", "duplicates": "duplicate bytes",
    "control_looking": "control-looking",
}
_BATCH = 4096
_CONTROL_NAME = regex.compile(
    r"\s*(?:<\|[^<>|\s]{1,40}\|>|</?[A-Za-z_][\w.\-]{0,30}>|\[[A-Z][A-Z_0-9]{1,20}\]|<0x[0-9A-Fa-f]{2}>)\s*"
)
_CONTROL_CHAR = regex.compile(r"[\p{Cc}--[\t\n\r]]", flags=regex.V1)


def looks_like_control(text: str) -> bool:
    """Whether a token's text is spelled like a control token or holds a control character.

    >>> [looks_like_control(t) for t in ("<|endoftext|>", " <s>", "[PAD]", "<0x0A>", "\\x1b", "<b", "\\n")]
    [True, True, True, True, True, False, False]
    """
    return bool(_CONTROL_NAME.fullmatch(text) or _CONTROL_CHAR.search(text))


@dataclass
class Oddities:
    """The ids of each category for one vocabulary, and how many ids were examined."""

    name: str
    examined: int
    #: how many of them were tested for reachability (with a dummy prefix: those that begin with it)
    tested: int
    ids: dict[Category, np.ndarray] = field(default_factory=dict)
    #: for an unreachable id, what its text encodes to instead
    instead: dict[int, list[int]] = field(default_factory=dict)

    def counts(self) -> dict[Category, int]:
        return {c: len(self.ids[c]) for c in CATEGORIES}


def find_oddities(
    tokenizer: Tokenizer, *, progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Oddities:
    """Examine every ordinary id of `tokenizer` (seconds for 200k ids: run it off the GUI thread).

    `progress(done, total)` is called after each batch; when `cancelled()` turns true the scan
    stops and what was found so far is returned (the unreachable ids only of the batches done).
    """
    ids: list[int] = []
    data: list[bytes] = []
    for entry in tokenizer.vocab():
        if entry.kind in (TokenKind.NORMAL, TokenKind.FRAGMENT):
            ids.append(entry.id)
            data.append(entry.bytes)
        if cancelled is not None and not len(ids) % 4096 and cancelled():  # a closing window waits for this
            break
    fragments = [i for i, d in zip(ids, data) if is_fragment(d)]
    texts = {i: d.decode("utf-8") for i, d in zip(ids, data) if d and not is_fragment(d)}
    first: dict[bytes, int] = {}
    dup: set[int] = set()
    for i, d in zip(ids, data):
        other = first.setdefault(d, i)
        if other != i:
            dup.update((other, i))
    control = [i for i, t in texts.items() if looks_like_control(t)]
    prefix = _prefix_id(tokenizer)
    if prefix is None:
        tested = list(texts.items())
    else:  # `▁the` is what `the` alone encodes to; `the` (inside a word) is never alone: not tested
        tested = [(i, t[1:]) for i, t in texts.items() if t.startswith(" ") and len(t) > 1]
    continuing = tokenizer.word_continuations() or frozenset()
    starts = [(i, t) for i, t in tested if i not in continuing]
    continuations = [(i, t) for i, t in tested if i in continuing]
    instead = _unreachable(tokenizer, starts, progress, cancelled, total=len(tested))
    if continuations and not (cancelled is not None and cancelled()):
        instead.update(_unreached_continuations(
            tokenizer, continuations, progress, cancelled, done=len(starts), total=len(tested)))
    instead = dict(sorted(instead.items()))
    odd = Oddities(tokenizer.name, len(ids), len(tested), instead=instead)
    odd.ids = {
        "unreachable": np.array(sorted(instead), dtype=np.int64),
        "fragments": np.array(fragments, dtype=np.int64),
        "duplicates": np.array(sorted(dup), dtype=np.int64),
        "control_looking": np.array(control, dtype=np.int64),
    }
    return odd


def _prefix_id(tokenizer: Tokenizer) -> int | None:
    """The id of the piece a normalizer puts before every text (SentencePiece's dummy prefix `▁`),
    when it has one."""
    normalized = tokenizer.normalize("a")
    if normalized is None or not normalized.endswith("a") or len(normalized) < 2:
        return None
    prefix = normalized[:-1]
    return next((e.id for e in tokenizer.vocab() if e.piece == prefix), None)


def _unreachable(
    tokenizer: Tokenizer, items: Sequence[tuple[int, str]],
    progress: Callable[[int, int], None] | None, cancelled: Callable[[], bool] | None,
    *, done: int = 0, total: int | None = None,
) -> dict[int, list[int]]:
    """The ids whose text alone does not encode to `[id]`, each with what it encodes to."""
    out: dict[int, list[int]] = {}
    total = len(items) if total is None else total
    for at in range(0, len(items), _BATCH):
        if cancelled is not None and cancelled():
            break
        batch = items[at:at + _BATCH]
        for (token_id, _), got in zip(batch, tokenizer.encode_ordinary_batch([t for _, t in batch])):
            if got != [token_id]:
                out[token_id] = got
        if progress is not None:
            progress(done + min(at + _BATCH, len(items)), total)
    return out


def _unreached_continuations(
    tokenizer: Tokenizer, items: Sequence[tuple[int, str]],
    progress: Callable[[int, int], None] | None, cancelled: Callable[[], bool] | None,
    *, done: int, total: int,
) -> dict[int, list[int]]:
    """The WordPiece continuation pieces no witness word yields, each with what its text alone
    encodes to. A witness word is a one-character word start followed by the piece's text
    (`q` + `ing`); a few word starts are tried, those fewest pieces begin with first (a word start
    that a longer piece extends, `a` in `aing` -> `ai` `##ng`, hides the piece)."""
    left = list(items)
    for start in _witnesses(tokenizer):
        if not left or (cancelled is not None and cancelled()):
            break
        words = [start + text for _, text in left]
        cuts = [got for at in range(0, len(words), _BATCH)
                for got in tokenizer.encode_ordinary_batch(words[at:at + _BATCH])]
        left = [(token_id, text) for (token_id, text), got in zip(left, cuts) if token_id not in got]
        if progress is not None:
            progress(done + len(items) - len(left), total)
    alone = tokenizer.encode_ordinary_batch([text for _, text in left])
    if progress is not None:
        progress(total, total)
    return {token_id: got for (token_id, _), got in zip(left, alone)}


#: how many one-character word starts a continuation piece is tried after
_WITNESSES = 6


def _witnesses(tokenizer: Tokenizer) -> list[str]:
    """One-character texts that encode to one word-start piece, those fewest vocabulary pieces
    begin with first."""
    candidates = list("qxzjvkwyfbgh0123456789")
    single = [c for c, got in zip(candidates, tokenizer.encode_ordinary_batch(candidates)) if len(got) == 1]
    begins: dict[str, int] = dict.fromkeys(single, 0)
    for entry in tokenizer.vocab():
        head = entry.bytes.lstrip(b" ")[:1].decode("latin-1")
        if head in begins:
            begins[head] += 1
    return sorted(single, key=lambda c: begins[c])[:_WITNESSES]
