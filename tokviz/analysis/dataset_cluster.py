"""`tokviz dataset --scheduler`: the dataset's shards counted as Dask tasks.

`ClusterCounts(cluster, options)` is the `remote` of `analysis.dataset.count_dataset`: one task
per shard (a file, a Parquet row group, a byte range of a big JSONL file), or per batch of a
`--sample`, each counted by `dataset.Counter` on a worker and given back in input order, so the
per-example counts and their order are those of a local run. A worker reads the shard itself
(the paths must be readable there at the same place); only the counts come back.

What a worker needs besides tokviz arrives with the work: each tokenizer's files
(`core.cluster.ShippedVocab`, checked by sha256 on the worker) and the chat templates chosen
here, in one `_Plan` submitted once as a task of its own, so a worker that joins or restarts
mid-run gets it from the scheduler like any task result. A worker makes its `Counter` once per
plan.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tokviz.analysis.chat_sources import TemplateSourceError, choose_template
from tokviz.analysis.chat_template import ChatTemplate
from tokviz.analysis.dataset import Counter, DatasetOptions, ExampleCount, _count_shard_with
from tokviz.core.cluster import Cluster, ShippedVocab, prepare_worker, worker_cache
from tokviz.core.records import Record, Shard, Skip


@dataclass(frozen=True)
class _Plan:
    """Everything a worker needs to count: the options, the vocabularies' files, and per
    tokenizer its chat template or why it has none (raised only when a conversation needs it)."""

    options: DatasetOptions
    vocabs: tuple[ShippedVocab, ...]
    templates: tuple[tuple[str, str, str, tuple[tuple[str, str], ...]] | str, ...]  # fields, or an error

    @property
    def digest(self) -> str:
        return hashlib.sha256(pickle.dumps((self.options, [v.digest for v in self.vocabs], self.templates))).hexdigest()


class _ShippedCounter(Counter):
    """A `Counter` whose templates were chosen where the run started."""

    def __init__(self, plan: _Plan) -> None:
        super().__init__(plan.options, [v.load() for v in plan.vocabs])
        self._plan_templates = plan.templates

    def template(self, k: int) -> ChatTemplate:
        if k not in self._templates:
            found = self._plan_templates[k]
            if isinstance(found, str):
                raise TemplateSourceError(found)
            source, name, origin, strings = found
            self._templates[k] = ChatTemplate(source, name=name, origin=origin, special_strings=dict(strings))
        return self._templates[k]


def _counter(plan: _Plan) -> _ShippedCounter:
    prepare_worker()
    # once per worker process, plan and thread: a worker may run tasks on several threads, and a
    # ChatTemplate renders one prompt at a time
    key = f"{plan.digest}:{threading.get_ident()}"
    counter: _ShippedCounter = worker_cache(key, lambda: _ShippedCounter(plan))
    return counter


def _received(plan: _Plan) -> _Plan:
    """The plan, as a task result: its files checked by sha256 where it ran."""
    for vocab in plan.vocabs:
        for f in vocab.files:
            f.check()
    return plan


def _count_shard_task(plan: _Plan, shard: Shard, field: str | None) -> list[ExampleCount | Skip]:
    return _count_shard_with(_counter(plan), shard, field)


def _count_batch_task(plan: _Plan, records: list[Record]) -> list[ExampleCount | Skip]:
    return _counter(plan).count(records, 0)


def _template_fields(spec: str, choice: str | None) -> tuple[str, str, str, tuple[tuple[str, str], ...]] | str:
    try:
        t = choose_template(spec, choice)
    except TemplateSourceError as e:
        return str(e)
    return t.source, t.name, t.origin, tuple(sorted(t.special_strings.items()))


class ClusterCounts:
    """Counts a dataset's shards on `cluster` (`count_dataset(..., remote=ClusterCounts(...))`)."""

    def __init__(self, cluster: Cluster, options: DatasetOptions, *, cancel: threading.Event | None = None) -> None:
        self.cluster = cluster
        self.cancel = cancel
        plan = _Plan(options, tuple(ShippedVocab.of(spec) for spec in options.specs),
                     tuple(_template_fields(spec, options.template) for spec in options.specs))
        self._plan: Any = cluster.submit(_received, plan)

    def shards(self, shards: Sequence[Shard], field: str | None) -> Iterator[list[ExampleCount | Skip]]:
        return self.cluster.map_ordered(_count_shard_task, ((self._plan, s, field) for s in shards),
                                        cancel=self.cancel)

    def batches(self, batches: Iterable[list[Record]]) -> Iterator[list[ExampleCount | Skip]]:
        return self.cluster.map_ordered(_count_batch_task, ((self._plan, b) for b in batches), cancel=self.cancel)

    def close(self) -> None:
        self.cluster.cancel([self._plan])


__all__ = ["ClusterCounts"]
