"""What a whole dataset costs in each tokenizer, example by example. Qt-free.

A text example is counted as `tokviz encode` counts it (special-token text stays text); a
conversation as `tokviz chat` counts it: rendered with the tokenizer's own chat template, cut
with the control tokens the template wrote parsed and none of the messages' (`analyze_chat`), so
BOS, role markers and the template's other tokens are in the count. Texts are cut in batches with
the library's batch encoder (`Tokenizer.encode_ordinary_batch`, the same ids as `encode`).

Per tokenizer: the count of every example (kept as one int per example: what the per-example
output and the percentiles need), characters, template overhead, examples over a context limit,
and injection findings (special-token text in a message that a naive pipeline would turn into a
control token). An example one tokenizer cannot count (a conversation its template rejects) is
skipped for that tokenizer and said so; reading errors are skipped for all (`records.Skipped`).

`count_dataset` takes a progress callback and a cancel event, so a window can drive it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from threading import Event
from typing import Any

import numpy as np

from tokviz.analysis.chat import analyze_chat
from tokviz.analysis.chat_template import ChatTemplate, ChatTemplateError
from tokviz.core.cancel import check
from tokviz.core.records import Example, Item, Skipped
from tokviz.core.tokenizer import Tokenizer

BATCH = 256  # text examples encoded together


@dataclass
class TokenizerCounts:
    """One tokenizer's counts over a dataset (`counts[i]` is example i's; -1 where not counted)."""

    name: str
    counts: list[int] = field(default_factory=list)
    chars: int = 0
    overhead: int = 0  # the chat templates' own tokens, summed
    findings: int = 0  # special-token text in messages a naive pipeline would parse
    finding_examples: list[int] = field(default_factory=list)
    failed: list[tuple[int, str]] = field(default_factory=list)  # (example, why) this tokenizer skipped

    def add(self, number: int, count: int) -> None:
        """Example `number`'s count (examples come in any order: texts are counted in batches)."""
        if number >= len(self.counts):
            self.counts.extend([-1] * (number + 1 - len(self.counts)))
        self.counts[number] = count

    @property
    def counted(self) -> np.ndarray:
        values = np.array(self.counts, dtype=np.int64)
        return values[values >= 0]

    @property
    def total(self) -> int:
        return int(self.counted.sum())

    def summary(self, *, context: int | None = None, price: float | None = None) -> dict[str, Any]:
        """Examples, total, mean / median / p90 / p99 / max, chars per token, over `context`, cost
        at `price` USD per million tokens, findings."""
        counted = self.counted
        n = len(counted)
        row: dict[str, Any] = {"tokenizer": self.name, "examples": n, "tokens": int(counted.sum())}
        if n:
            row.update({
                "mean": float(counted.mean()), "median": float(statistics.median(counted.tolist())),
                "p90": float(np.percentile(counted, 90)), "p99": float(np.percentile(counted, 99)),
                "max": int(counted.max()),
            })
        row["chars_per_token"] = self.chars / row["tokens"] if row["tokens"] else None
        row["template_overhead"] = self.overhead
        if context is not None:
            row["over_context"] = int((counted > context).sum())
        if price is not None:
            row["cost_usd"] = row["tokens"] * price / 1e6
        row["findings"] = self.findings
        row["skipped"] = len(self.failed)
        return row


@dataclass
class DatasetCounts:
    """Every tokenizer's counts, and the rows nobody could read."""

    tokenizers: list[TokenizerCounts]
    examples: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    def per_example(self) -> Iterable[dict[str, Any]]:
        """One row per example in input order: `example`, then each tokenizer's count (None where
        it was not counted)."""
        for i in range(self.examples):
            row: dict[str, Any] = {"example": i}
            for t in self.tokenizers:
                value = t.counts[i] if i < len(t.counts) else -1
                row[t.name] = value if value >= 0 else None
            yield row

    def disagreements(self, top: int = 10) -> list[tuple[int, float]]:
        """The examples where the tokenizers' counts differ most (the largest over the smallest),
        with that ratio: where a choice of tokenizer matters."""
        width = max((len(t.counts) for t in self.tokenizers), default=0)
        table = np.full((len(self.tokenizers), width), -1, dtype=np.int64)
        for k, t in enumerate(self.tokenizers):
            table[k, :len(t.counts)] = t.counts
        ok = (table > 0).all(axis=0)
        if len(self.tokenizers) < 2 or not ok.any():
            return []
        ratio = table[:, ok].max(axis=0) / table[:, ok].min(axis=0)
        where = np.flatnonzero(ok)
        order = np.argsort(-ratio, kind="stable")[:top]
        return [(int(where[i]), float(ratio[i])) for i in order if ratio[i] > 1.0]


Progress = Callable[[int], None]


def count_dataset(
    items: Iterable[Item],
    tokenizers: Sequence[Tokenizer],
    templates: Mapping[str, ChatTemplate | None],
    *,
    add_generation_prompt: bool = False,
    template_kwargs: Mapping[str, Any] | None = None,
    strict: bool = False,
    progress: Progress | None = None,
    cancel: Event | None = None,
) -> DatasetCounts:
    """Count every example of `items` with every tokenizer. `templates[name]` renders that
    tokenizer's conversations (None: it has none, and its conversations are skipped for it).
    With `strict`, the first skipped row or example raises ValueError naming it."""
    result = DatasetCounts([TokenizerCounts(t.name) for t in tokenizers])
    texts: list[Example] = []

    def flush() -> None:
        if texts:
            _count_texts(texts, tokenizers, result)
            texts.clear()

    for item in items:
        check(cancel, "counting")
        result.examples = item.number + 1
        if isinstance(item, Skipped):
            if strict:
                raise ValueError(f"{item.where}: {item.reason}")
            result.skipped.append(item)
            continue
        if item.kind == "text":
            texts.append(item)
            if len(texts) >= BATCH:
                flush()
        else:
            _count_chat(item, tokenizers, templates, result, add_generation_prompt, template_kwargs, strict)
        if progress is not None:
            progress(result.examples)
    flush()
    for counts in result.tokenizers:  # every list as long as the dataset
        counts.counts.extend([-1] * (result.examples - len(counts.counts)))
    return result


def _count_texts(texts: Sequence[Example], tokenizers: Sequence[Tokenizer], result: DatasetCounts) -> None:
    chars = sum(len(e.text) for e in texts)
    for tokenizer, counts in zip(tokenizers, result.tokenizers):
        ids = tokenizer.encode_ordinary_batch([e.text for e in texts])
        for example, one in zip(texts, ids):
            counts.add(example.number, len(one))
        counts.chars += chars


def _count_chat(example: Example, tokenizers: Sequence[Tokenizer], templates: Mapping[str, ChatTemplate | None],
                result: DatasetCounts, add_generation_prompt: bool, template_kwargs: Mapping[str, Any] | None,
                strict: bool) -> None:
    for tokenizer, counts in zip(tokenizers, result.tokenizers):
        template = templates.get(tokenizer.name)
        if template is None:
            why = "no chat template (pass --template)"
        else:
            try:
                analysis = analyze_chat(tokenizer, template, list(example.messages), tools=example.tools,
                                        add_generation_prompt=add_generation_prompt, template_kwargs=template_kwargs)
            except (ChatTemplateError, ValueError) as e:
                why = str(e).splitlines()[0]
            else:
                counts.add(example.number, analysis.total)
                counts.chars += len(analysis.text)
                counts.overhead += analysis.overhead
                injected = sum(1 for f in analysis.findings if f.message is not None)
                if injected:
                    counts.findings += injected
                    counts.finding_examples.append(example.number)
                continue
        if strict:
            raise ValueError(f"{example.where}: {tokenizer.name}: {why}")
        counts.failed.append((example.number, why))
