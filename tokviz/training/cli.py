"""`tokviz train`: the command line for the trainer.

The main CLI wires it in with `add_train_parser(subparsers)`; the parser's default `func` is
`run_train`, which returns the exit status (0 ok, 1 error, 130 interrupted). Errors are one line on
stderr, never a traceback. Progress goes to stderr: a carriage-return bar on a terminal, an
occasional line otherwise.

This module does not train (see `trainer`) or write files itself (see `vocabfile`).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from tokviz.core.tokenizer import TokenizerError
from tokviz.training.events import Progress, TrainingCancelled, TrainingError
from tokviz.training.pretokenize import PRESETS

_UNITS = {"scanning": "files", "counting": "MB", "merging": "merges"}


def add_train_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
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
                   help=f"split pattern: {', '.join(PRESETS)} or a regex (default cl100k)")
    p.add_argument("--include", action="append", default=[], metavar="GLOB", help="only files matching (repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip files/folders matching (repeatable)")
    p.add_argument("--gitignore", action="store_true", help="honour .gitignore files")
    p.add_argument("--non-utf8", choices=["skip", "replace"], default="skip", help="non-UTF-8 files: skip (default) or decode with U+FFFD")
    p.add_argument("--special", nargs="+", default=[], metavar="TOKEN", help="special tokens, added after the merges")
    p.add_argument("--min-frequency", type=int, default=2, metavar="F", help="stop when no pair occurs F times (default 2)")
    p.add_argument("--jobs", type=int, default=None, metavar="J", help="worker processes for counting (default: all cores)")
    p.add_argument("--word-counts", metavar="FILE",
                   help="also train on 'chunk<TAB>count' lines (in the chunk: \\t \\n \\r \\\\ escapes)")
    p.add_argument("--hf-json", action="store_true", help="also write NAME.tokenizer.json for Hugging Face tokenizers")
    p.set_defaults(func=run_train)
    return p


class ProgressBar:
    """Render progress events on a stream: `\\r`-updated on a terminal, a line every few seconds otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.last_line = 0.0
        self.width = 0
        self.phase: str | None = None

    def __call__(self, event: Progress) -> None:
        now = time.monotonic()
        changed = event.phase != self.phase
        if not self.tty and not changed and now - self.last_line < 5:
            return
        if changed and self.tty and self.phase is not None:
            self.stream.write("\n")
            self.width = 0
        self.phase, self.last_line = event.phase, now
        line = self.render(event)
        if self.tty:
            # pad over what the previous, longer line left behind
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    @staticmethod
    def render(e: Progress) -> str:
        scale = 1e6 if e.phase == "counting" else 1
        done, unit = e.done / scale, _UNITS[e.phase]
        text = f"{e.phase:<9} "
        if e.total:
            frac = min(e.done / e.total, 1.0)
            bar = "#" * int(frac * 24)
            text += f"[{bar:<24}] {frac:4.0%} {done:,.0f}/{e.total / scale:,.0f} {unit}"
        else:
            text += f"{done:,.0f} {unit}"
        text += f"  {e.rate / scale:,.0f} {unit}/s"
        if e.eta is not None:
            text += f"  eta {e.eta:,.0f}s"
        if e.phase == "counting":
            text += f"  files {e.files_read:,} read, {e.files_skipped:,} skipped"
        return text

    def finish(self) -> None:
        if self.tty and self.phase is not None:
            self.stream.write("\n")
            self.stream.flush()


def run_train(args: argparse.Namespace, *, stderr: TextIO | None = None) -> int:
    """Train, save and summarise; return the exit status."""
    from tokviz.training import vocabfile
    from tokviz.training.trainer import train

    err = stderr or sys.stderr
    folder = vocabfile.output_paths(args.output)[0].parent
    if not folder.is_dir():  # say so before a long training run, not after it
        print(f"tokviz train: error: cannot save to {args.output}: folder {folder} does not exist", file=err)
        return 1
    bar = ProgressBar(err)
    try:
        result = train(
            args.paths, vocab_size=args.vocab_size, name=_stem(args.output), pattern=args.pattern,
            include=args.include, exclude=args.exclude, gitignore=args.gitignore,
            non_utf8=args.non_utf8, special_tokens=args.special, min_frequency=args.min_frequency,
            jobs=args.jobs, word_counts=args.word_counts, progress=bar,
        )
        bar.finish()
        written = vocabfile.save(result, args.output, hf_json=args.hf_json)
    except KeyboardInterrupt:
        bar.finish()
        print("tokviz train: interrupted; nothing written", file=err)
        return 130
    except (TrainingError, TrainingCancelled, TokenizerError, OSError) as e:
        bar.finish()
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"tokviz train: error: {message}", file=err)
        return 1
    _summary(result, written, err)
    return 0


def _stem(output: str) -> str:
    from pathlib import Path

    name = Path(output).name
    return name[: -len(".tiktoken")] if name.endswith(".tiktoken") else name


def _summary(result, written, err: TextIO) -> None:
    c = result.corpus
    stopped = "" if result.vocab_size >= result.requested_vocab_size else " (no pair left to merge; stopped early)"
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
        print(f"corpus tokens {tokens[0]:,} -> {tokens[-1]:,} ({tokens[0] / max(tokens[-1], 1):.2f} bytes/token)", file=err)
    print(f"wrote {', '.join(str(p) for p in written)} in {result.seconds:.1f} s", file=err)
