"""`tokviz train`: the command line for the trainer.

`add_parser(subparsers)` sets `run`, which trains, saves and summarises, and returns 0; errors
propagate to `tokviz.cli.main` (one line on stderr, `tokviz train: error: ...`). Progress goes to
stderr: a carriage-return bar on a terminal, an occasional line otherwise.

This module does not train (see `tokviz.training.trainer`) or write files itself (see
`tokviz.training.vocabfile`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from tokviz.cli.errors import CliError
from tokviz.cli.progress import ProgressBar
from tokviz.core.cancel import Cancelled
from tokviz.training.events import Progress
from tokviz.training.pretokenize import PRESETS

SCHEDULER_ENV = "TOKVIZ_SCHEDULER"  # `tokviz.core.cluster.SCHEDULER_ENV` (a test holds them equal)
_UNITS = {"scanning": "files", "counting": "MB", "merging": "merges"}


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "train",
        help="learn a byte-level BPE vocabulary from files",
        description="Learn a byte-level BPE vocabulary from files and folders; write NAME.tiktoken "
        "and the sidecar NAME.json (and NAME.tokenizer.json with --hf-json).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (walked recursively)")
    p.add_argument("-o", "--output", required=True, metavar="NAME", help="output name (NAME.tiktoken, NAME.json)")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N", help="ids wanted, special tokens included")
    p.add_argument("--pattern", default="cl100k", metavar="PRESET|REGEX",
                   help=f"split pattern: {', '.join(PRESETS)} or a regex (default cl100k); none: each line is a chunk")
    p.add_argument("--include", action="append", default=[], metavar="GLOB",
                   help="only files matching (repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip files/folders matching (repeatable)")
    p.add_argument("--gitignore", action="store_true", help="honour .gitignore files")
    p.add_argument("--non-utf8", choices=["skip", "replace"], default="skip",
                   help="non-UTF-8 files: skip (default) or decode with U+FFFD")
    p.add_argument("--special", nargs="+", default=[], metavar="TOKEN", help="special tokens, added after the merges")
    p.add_argument("--min-frequency", type=int, default=2, metavar="F",
                   help="stop when no pair occurs F times (default 2)")
    p.add_argument("--jobs", type=int, default=None, metavar="J",
                   help="processes counting the corpus, this one included (default: the cores, "
                   "at most 4, for a corpus of 4 MB or more; else 1); below 64 MB, 2 or more is this "
                   "process and one helper that splits")
    p.add_argument("--word-counts", metavar="FILE",
                   help="also train on 'chunk<TAB>count' lines (in the chunk: \\t \\n \\r \\\\ escapes)")
    p.add_argument("--dataset", action="store_true",
                   help="read PATHs as datasets (JSONL, JSON, Parquet, CSV, Arrow: `tokviz dataset`'s readers); "
                   "each text, or each message of a conversation, is a document")
    p.add_argument("--field", metavar="NAME", help="the dataset field holding the text or messages "
                   "(dotted: a.b.0); implies --dataset")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="count on a Dask cluster: a scheduler's tcp://host:8786, or local[:N] to start N "
                   "workers here (default: $TOKVIZ_SCHEDULER, else tokviz's own processes)")
    p.add_argument("--hf-json", action="store_true", help="also write NAME.tokenizer.json for Hugging Face tokenizers")
    p.add_argument("--force", action="store_true",
                   help="overwrite NAME.* even if they are not a vocabulary tokviz trained as NAME")
    p.set_defaults(run=run, prog="tokviz train", interrupted="interrupted; nothing written")
    return p


def progress_line(e: Progress, bar: ProgressBar) -> str:
    """One line for a training progress event: phase, gauge, done/total, rate, eta."""
    scale = 1e6 if e.phase == "counting" else 1
    done, unit = e.done / scale, _UNITS[e.phase]
    text = f"{e.phase:<9} "
    if e.total:
        text += (f"{bar.gauge(e.done, e.total)} {min(e.done / e.total, 1.0):4.0%} "
                 f"{done:,.0f}/{e.total / scale:,.0f} {unit}")
    else:
        text += f"{done:,.0f} {unit}"
    text += f"  {e.rate / scale:,.0f} {unit}/s"
    if e.eta is not None:
        text += f"  eta {e.eta:,.0f}s"
    if e.phase == "counting":
        text += f"  files {e.files_read:,} read, {e.files_skipped:,} skipped"
    return text


def run(args: argparse.Namespace) -> int:
    """Train, save and summarise on stderr; return 0 (errors propagate to the CLI's boundary)."""
    from tokviz.cli.outputs import check_outputs, vocabulary_output
    from tokviz.core.sidecar import TRAINED_FORMAT
    from tokviz.training import vocabfile
    from tokviz.training.trainer import TrainOptions, train

    err = sys.stderr
    args.output = vocabulary_output(args.output)
    name = vocabfile.output_stem(args.output).name
    ranks_path, sidecar_path, hf_path = vocabfile.output_paths(args.output)
    outputs = [ranks_path, sidecar_path, *([hf_path] if args.hf_json else [])]
    check_outputs(outputs, fmt=TRAINED_FORMAT, name=name, force=args.force)
    if args.hf_json:  # a pattern a tokenizer.json cannot hold: say so before training, not after
        from tokviz.training.pretokenize import resolve_pattern

        split, _ = resolve_pattern(args.pattern)
        if split is not None:
            vocabfile.hf_split_pattern(split)
    bar = ProgressBar(err)

    def progress(e: Progress) -> None:
        bar.show(progress_line(e, bar), phase=e.phase, last=bool(e.total and e.done >= e.total))

    try:
        options = TrainOptions(
            vocab_size=args.vocab_size, name=name, pattern=args.pattern,
            include=args.include, exclude=args.exclude, gitignore=args.gitignore,
            non_utf8=args.non_utf8, special_tokens=args.special, min_frequency=args.min_frequency,
            jobs=args.jobs, word_counts=args.word_counts, dataset=args.dataset, field=args.field,
            scheduler=_scheduler(args.scheduler),
        )
        result = train(args.paths, options, progress=progress)
        check_outputs(outputs, fmt=TRAINED_FORMAT, name=name, force=args.force)  # appeared meanwhile?
        written = vocabfile.save(result, args.output, hf_json=args.hf_json)
    except Cancelled as e:
        raise CliError(str(e) or "training cancelled") from None
    finally:
        bar.close(keep=True)
    _summary(result, written, err)
    return 0


def _scheduler(given: str | None) -> str | None:
    """`tokviz.core.cluster.scheduler_address`, without importing that module (logging, tempfile,
    hashlib: some ms of every run's start-up) when neither --scheduler nor its variable is set."""
    if given is None and SCHEDULER_ENV not in os.environ:
        return None
    from tokviz.core.cluster import scheduler_address

    return scheduler_address(given)


def _summary(result, written, err: TextIO) -> None:
    c = result.corpus
    # fewer merges than asked: every pair left occurs fewer than --min-frequency times (or none is left)
    floor = result.params.get("min_frequency", 2)
    stopped = ("" if result.vocab_size >= result.requested_vocab_size
               else f" (no pair left that occurs {floor:,} times or more; stopped early)")
    print(f"learned {len(result.merges):,} merges; vocab {result.vocab_size:,} of {result.requested_vocab_size:,} "
          f"requested{stopped}", file=err)
    print(f"read {c.files_read:,} files ({c.bytes / 1e6:,.1f} MB, {c.unique_chunks:,} unique chunks); "
          f"skipped {len(c.files_skipped):,}; replaced non-UTF-8 in {len(c.files_replaced):,}", file=err)
    for s in c.files_skipped[:10]:
        print(f"  skipped {s.path}: {s.reason}", file=err)
    if len(c.files_skipped) > 10:
        print(f"  ... and {len(c.files_skipped) - 10:,} more (listed in the sidecar)", file=err)
    tokens = result.corpus_tokens()
    if tokens[0]:
        print(f"corpus tokens {tokens[0]:,} -> {tokens[-1]:,} "
              f"({tokens[0] / max(tokens[-1], 1):.2f} bytes/token)", file=err)
    print(f"wrote {', '.join(str(p) for p in written)} in {result.seconds:.1f} s", file=err)
