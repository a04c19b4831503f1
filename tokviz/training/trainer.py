"""Train a byte-level BPE vocabulary: the one entry point for the CLI and the GUI.

`train(paths, TrainOptions(vocab_size=...))` (or `train(paths, vocab_size=...)`) walks, counts,
merges and returns a `TrainingResult` in memory; `train_texts(texts, ...)` does the same for
strings. Neither writes anything: save the result with `vocabfile.save` (so a cancelled run leaves
nothing on disk).

For a GUI worker: call `train` on the worker's thread with `progress=callback` and
`cancel=threading.Event()`. Exactly one of: a result is returned; `TrainingError` is raised (bad
input, with a message for the user); `Cancelled` is raised (at the next check of `cancel`, which
every phase makes between short steps). `Progress` events come from the calling thread,
rate-limited per phase; in the merging
phase they carry the new merges and the corpus token count (`events.Progress`).

The paths are folders and files of text, or with `dataset` / `field` datasets read as `tokviz
dataset` reads them (`datasets`); with `scheduler` the counting stage runs on a Dask cluster
(`cluster`) and the merge loop here, on the same table a local count gives.

This module does not write files (see `vocabfile`) or parse command lines (see `tokviz.cli.train`).
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tokviz.core.walk import collect_files
from tokviz.training.bpe import MAX_ID, BpeTrainer, compression_curve
from tokviz.training.corpus import CorpusReport, check_corpus, count_corpus
from tokviz.training.events import ProgressCallback, Reporter, TrainingError
from tokviz.training.pretokenize import ChunkCounter, chunk_key, compile_pattern, resolve_pattern

if TYPE_CHECKING:
    from tokviz.core.cluster import Cluster

NonUtf8 = Literal["skip", "replace"]


@dataclass
class TrainingResult:
    """What a run learned: merges in order (merge i is id 256 + i), then special tokens."""

    name: str
    pattern: str | None  # None: no split
    pattern_preset: str | None
    merges: list[tuple[int, int, int]]  # (left_id, right_id, count when merged)
    replaced: list[int]  # corpus tokens each merge removed
    initial_tokens: int  # corpus tokens before any merge (its bytes)
    special_tokens: dict[str, int]
    requested_vocab_size: int
    params: dict[str, Any]
    corpus: CorpusReport
    seconds: float = 0.0
    _bytes: list[bytes] = field(default_factory=list, repr=False)

    @property
    def vocab_size(self) -> int:
        """Ids reached: 256 bytes + merges + special tokens (below the request if merges ran out)."""
        return 256 + len(self.merges) + len(self.special_tokens)

    def token_bytes(self) -> list[bytes]:
        """The bytes of every non-special id, in id order."""
        if len(self._bytes) != 256 + len(self.merges):
            table = [bytes([i]) for i in range(256)]
            for left, right, _ in self.merges:
                table.append(table[left] + table[right])
            self._bytes = table
        return self._bytes

    def ranks(self, num_merges: int | None = None) -> dict[bytes, int]:
        """tiktoken's `mergeable_ranks` for the first `num_merges` merges (all by default)."""
        table = self.token_bytes()
        n = 256 + (len(self.merges) if num_merges is None else num_merges)
        ranks = {data: rank for rank, data in enumerate(table[:n])}
        if len(ranks) != n:
            # possible in principle ((ab, c) and (a, bc) both learned); never seen on real text
            first = next(i for i, data in enumerate(table[:n]) if ranks[data] != i)
            raise TrainingError(
                f"merge {first - 256} makes the same bytes as a later merge ({table[first]!r}); "
                "a tiktoken rank file cannot hold both"
            )
        return ranks

    def corpus_tokens(self) -> list[int]:
        """Corpus token count before any merge and after each merge: the compression curve."""
        return compression_curve(self.initial_tokens, self.replaced)


def _check_options(
    vocab_size: int, special_tokens: Sequence[str], min_frequency: int, jobs: int | None = None
) -> int:
    """Refuse bad options before anything is read; return the number of merges to learn."""
    if len(set(special_tokens)) != len(special_tokens):
        raise TrainingError(f"special tokens must be distinct: {list(special_tokens)}")
    if any(not s for s in special_tokens):
        raise TrainingError("a special token cannot be empty")
    floor = 256 + len(special_tokens)
    if vocab_size < floor:
        raise TrainingError(
            f"vocab size {vocab_size} is too small: the 256 bytes and {len(special_tokens)} special "
            f"tokens need at least {floor}"
        )
    if vocab_size > MAX_ID + 1:  # the merge loop's largest id (`bpe.MAX_ID`)
        raise TrainingError(f"vocab size {vocab_size:,} is too large: at most {MAX_ID + 1:,} ids are supported")
    if min_frequency < 1:
        raise TrainingError(f"min frequency must be at least 1, got {min_frequency}")
    if jobs is not None and jobs < 1:
        raise TrainingError(f"jobs must be at least 1, got {jobs}")
    return vocab_size - floor


@dataclass(frozen=True)
class TrainOptions:
    """How to train: every option of `train`, in one place for the CLI, the trainer panel and the
    child process that trains for the panel. `pattern` is a preset (`gpt2`, `cl100k`, `o200k`,
    `none`) or a regex; `word_counts` is an optional file of `chunk<TAB>count` lines, counted as if
    read."""

    vocab_size: int
    name: str = "trained"
    pattern: str = "cl100k"
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    gitignore: bool = False
    non_utf8: NonUtf8 = "skip"
    special_tokens: Sequence[str] = ()
    min_frequency: int = 2
    jobs: int | None = None
    word_counts: str | os.PathLike[str] | None = None
    #: read the paths as datasets (`tokviz dataset`'s readers), texts from `field` if given
    dataset: bool = False
    field: str | None = None
    #: count on a Dask cluster: `tcp://host:8786` or `local[:N]` (None: tokviz's own processes)
    scheduler: str | None = None

    def __post_init__(self) -> None:
        for name in ("include", "exclude", "special_tokens"):  # lists from argparse: keep it hashable
            object.__setattr__(self, name, tuple(getattr(self, name)))


def train(
    paths: Sequence[str | os.PathLike[str]] = (),
    options: TrainOptions | None = None,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    **fields: Any,
) -> TrainingResult:
    """Learn a vocabulary of at most `vocab_size` ids (special tokens included) from files.

    `paths` are files or folders (walked recursively). The options are a `TrainOptions`, or its
    fields as keywords (`train(paths, vocab_size=1000, pattern="gpt2")`), or both (the keywords win).
    """
    o = TrainOptions(**fields) if options is None else dataclasses.replace(options, **fields)
    vocab_size, special_tokens, word_counts = o.vocab_size, o.special_tokens, o.word_counts
    start = time.perf_counter()
    num_merges = _check_options(vocab_size, special_tokens, o.min_frequency, o.jobs)
    split, preset = resolve_pattern(o.pattern)
    if not paths and word_counts is None:
        raise TrainingError("nothing to train on: give files or folders, or a word-count file")
    counts, report = _count(paths, o, split, progress, cancel)
    if word_counts is not None:
        _add_word_counts(counts, report, Path(word_counts))
    check_corpus(report, counts, [*map(str, paths), *([str(word_counts)] if word_counts else [])])
    params = {
        "vocab_size": vocab_size, "min_frequency": o.min_frequency, "jobs": o.jobs,
        "include": list(o.include), "exclude": list(o.exclude), "gitignore": o.gitignore,
        "non_utf8": o.non_utf8, "paths": [str(p) for p in paths],
        "word_counts": str(word_counts) if word_counts else None,
    }
    if o.dataset or o.field is not None:
        params["dataset"] = True
        params["field"] = o.field
    trainer = BpeTrainer(counts, min_frequency=o.min_frequency)
    del counts  # the trainer holds the chunks now; the dict would only double the memory
    return _finish(
        trainer, num_merges, name=o.name, pattern=split, preset=preset, special_tokens=special_tokens,
        vocab_size=vocab_size, params=params, report=report, progress=progress, cancel=cancel, start=start,
    )


def _count(
    paths: Sequence[str | os.PathLike[str]], o: TrainOptions, split: str | None,
    progress: ProgressCallback | None, cancel: threading.Event | None,
) -> tuple[dict[str, int], CorpusReport]:
    """The distinct-chunk table of `paths` and its report: files or datasets, here or on a cluster."""
    scan = Reporter(progress, cancel, "scanning")
    if o.dataset or o.field is not None:
        if o.include or o.exclude or o.gitignore:
            raise TrainingError("include, exclude and gitignore choose the text files of folders, "
                                "not what a dataset is read from")
        from tokviz.core.records import DatasetError
        from tokviz.training.datasets import count_dataset_corpus, dataset_shards

        try:
            shards = dataset_shards(paths)
        except DatasetError as e:
            raise TrainingError(str(e)) from None
        scan.emit(len({s.path for s in shards}), files_skipped=0)
        if o.scheduler is None:
            return count_dataset_corpus(shards, pattern=split, field=o.field, progress=progress, cancel=cancel)
        from tokviz.training.cluster import count_shards_on_cluster

        return _on_cluster(o.scheduler, lambda cluster: count_shards_on_cluster(
            cluster, shards, pattern=split, field=o.field, progress=progress, cancel=cancel))
    try:
        listing = collect_files(paths, include=o.include, exclude=o.exclude, gitignore=o.gitignore, on_folder=scan.tick)
    except FileNotFoundError as e:
        raise TrainingError(f"{e.filename}: no such file or folder") from None
    scan.emit(len(listing.files), files_skipped=len(listing.skipped))
    if o.scheduler is None:
        counts, report = count_corpus(
            listing.files, pattern=split, non_utf8=o.non_utf8, jobs=o.jobs, progress=progress, cancel=cancel
        )
    else:
        from tokviz.training.cluster import count_files_on_cluster

        counts, report = _on_cluster(o.scheduler, lambda cluster: count_files_on_cluster(
            cluster, listing.files, pattern=split, non_utf8=o.non_utf8, progress=progress, cancel=cancel))
    report.files_skipped = sorted(listing.skipped + report.files_skipped, key=lambda s: s.path)
    return counts, report


def _on_cluster(
    address: str, count: Callable[[Cluster], tuple[dict[str, int], CorpusReport]]
) -> tuple[dict[str, int], CorpusReport]:
    from tokviz.core.cluster import Cluster, ClusterError

    try:
        with Cluster(address) as cluster:
            return count(cluster)
    except ClusterError as e:
        raise TrainingError(str(e)) from None


def train_texts(
    texts: Iterable[str],
    *,
    vocab_size: int,
    name: str = "trained",
    pattern: str = "cl100k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> TrainingResult:
    """Learn a vocabulary from strings in memory (each string is one document).

    >>> r = train_texts(["aaabdaaabac"], vocab_size=259, pattern="none")
    >>> [m[:2] for m in r.merges]
    [(97, 97), (97, 98), (256, 257)]
    """
    start = time.perf_counter()
    num_merges = _check_options(vocab_size, special_tokens, min_frequency)
    split, preset = resolve_pattern(pattern)
    compiled = compile_pattern(split)
    reporter = Reporter(progress, cancel, "counting")
    counter = ChunkCounter(compiled)
    report = CorpusReport()
    for text in texts:
        data = text.encode("utf-8")
        counter.add(text, data)
        report.files_read += 1
        report.bytes += len(data)
        reporter.tick(report.bytes, files_read=report.files_read, bytes_read=report.bytes)
    counts = {chunk_key(k): v for k, v in counter.counts().items()}
    report.unique_chunks = len(counts)
    if not counts:
        raise TrainingError("no text to train on: the texts are empty")
    params = {"vocab_size": vocab_size, "min_frequency": min_frequency, "texts": report.files_read}
    trainer = BpeTrainer(counts, min_frequency=min_frequency)
    del counts
    return _finish(
        trainer, num_merges, name=name, pattern=split, preset=preset, special_tokens=special_tokens,
        vocab_size=vocab_size, params=params, report=report, progress=progress, cancel=cancel, start=start,
    )


def _finish(
    trainer: BpeTrainer,
    num_merges: int,
    *,
    name: str,
    pattern: str | None,
    preset: str | None,
    special_tokens: Sequence[str],
    vocab_size: int,
    params: dict[str, Any],
    report: CorpusReport,
    progress: ProgressCallback | None,
    cancel: threading.Event | None,
    start: float,
) -> TrainingResult:
    """Run the merge loop and put the result together; special tokens take the ids after the merges."""
    stats = trainer.train(num_merges, progress=progress, cancel=cancel)
    first_special = 256 + len(stats.merges)
    specials = {s: first_special + i for i, s in enumerate(special_tokens)}
    return TrainingResult(
        name=name, pattern=pattern, pattern_preset=preset, merges=stats.merges,
        replaced=stats.replaced, initial_tokens=stats.initial_tokens, special_tokens=specials,
        requested_vocab_size=vocab_size, params=params, corpus=report,
        seconds=time.perf_counter() - start,
    )


_ESCAPES = re.compile(r"\\([\\tnr])")
_ESCAPED = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def read_word_counts(path: Path) -> dict[str, int]:
    r"""Read `chunk<TAB>count` lines; in the chunk `\t`, `\n`, `\r` and `\\` are escapes.

    The chunks are used as they are (already split); a bad line raises TrainingError naming it.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TrainingError(f"cannot read word-count file {path}: {getattr(e, 'strerror', None) or e}") from e
    counts: dict[str, int] = {}
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        chunk, sep, number = line.rstrip("\r").rpartition("\t")
        try:
            n = int(number)
        except ValueError:
            n = -1
        if not sep or not chunk or n < 1:
            raise TrainingError(
                f"{path}: line {lineno} is not '<chunk><TAB><positive count>': {line[:60]!r}"
            )
        key = chunk_key(_ESCAPES.sub(lambda m: _ESCAPED[m.group(1)], chunk))
        counts[key] = counts.get(key, 0) + n
    return counts


def _add_word_counts(counts: dict[str, int], report: CorpusReport, path: Path) -> None:
    extra = read_word_counts(path)
    for key, n in extra.items():
        counts[key] = counts.get(key, 0) + n
    report.files_read += 1
    report.bytes += sum(len(k) * n for k, n in extra.items())
    report.unique_chunks = len(counts)
