"""`tokviz extend BASE WORDS -o OUT`: learn merges that make given words single tokens of a BPE."""

from __future__ import annotations

import argparse
from pathlib import Path

from tokviz.cli.errors import CliError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    ext = subparsers.add_parser("extend", help="learn merges that make given words single tokens of a BPE vocabulary")
    ext.add_argument("base", help="the base vocabulary: catalog name or .tiktoken file")
    ext.add_argument("words", help="word list: one 'word<TAB>frequency' per line")
    ext.add_argument("-o", "--output", required=True,
                     help="the extra .tiktoken to write (only the new ranks; OUT.json beside it)")
    ext.add_argument("--force", action="store_true",
                     help="overwrite OUT.tiktoken/OUT.json even if they are not a tokviz extension")
    ext.add_argument("--start-id", type=int, help="first new id (default: after the base's ids and special tokens)")
    ext.set_defaults(run=run)
    return ext


def run(args: argparse.Namespace) -> int:
    from tokviz.cli.outputs import check_outputs, vocabulary_output
    from tokviz.core import catalog
    from tokviz.core.sidecar import EXTENSION_FORMAT, sidecar_path
    from tokviz.training.extend import (
        byte_level_bpe,
        check_start_id,
        extension_paths,
        iter_report,
        learn_extension,
        read_word_list,
        save_extension,
    )

    check_start_id(args.start_id)  # before loading anything
    entry = catalog.find(args.base)
    base_file = entry.path if entry is not None else Path(args.base).expanduser()
    args.output = vocabulary_output(args.output)
    outputs = extension_paths(args.output)
    check = {"fmt": EXTENSION_FORMAT, "force": args.force, "base": (base_file, sidecar_path(base_file))}
    check_outputs(outputs, **check)  # before any work: the base first, then files in the way
    base = catalog.load(args.base)
    byte_level_bpe(base)  # before reading the words: a base that cannot be extended is the first error
    words = read_word_list(args.words)
    extension = learn_extension(base, words, start_id=args.start_id)
    for line in iter_report(extension):
        print(line)
    if not extension.merges:
        raise CliError(f"{args.words}: no new merges to learn (every word was skipped); nothing written")
    check_outputs(outputs, **check)  # again: a file may have appeared while learning
    if entry is not None:
        base_spec, base_sha = entry.name, entry.sha256
    else:
        base_path = Path(args.base).expanduser().resolve()
        base_spec, base_sha = str(base_path), catalog.file_sha256(base_path)
    path = save_extension(extension, args.output, base_spec=base_spec, base_sha256=base_sha)
    print(f"{len(extension.merges)} new merges, ids {extension.merges[0].id}..{extension.merges[-1].id}, "
          f"written to {path} (+ {path.with_suffix('.json').name}); load it with -t {path}")
    return 0
