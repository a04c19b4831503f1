"""Count the odd tokens of every catalog vocabulary (tokviz.analysis.oddities), with the time taken.

For each vocabulary here: the ordinary ids examined, how many were tested for reachability (with a
dummy prefix only the pieces that begin with it), and the ids in each category: unreachable
(the token's text alone does not encode to it), fragments (not whole UTF-8 alone), duplicate bytes,
control-looking; then the seconds the scan took (load not included) and a few examples.

    python bench/bench_oddities.py [-t NAME ...] [--examples 3]

This is not a test: it asserts nothing. It needs the provisioned vocabularies (`tokviz vocabs fetch`).
"""

from __future__ import annotations

import argparse
import time

from tokviz.analysis.oddities import CATEGORIES, find_oddities
from tokviz.core import catalog
from tokviz.core.tokenizer import TokenizerError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-t", "--tokenizer", action="append", dest="names", help="only these (repeatable)")
    parser.add_argument("--examples", type=int, default=3, help="examples per category and vocabulary")
    args = parser.parse_args()
    names = args.names or [e.name for e in catalog.entries() if e.available]
    head = f"{'vocabulary':<26} {'ids':>7} {'tested':>7} " + " ".join(f"{c:>15}" for c in CATEGORIES) + "   seconds"
    print(head)
    notes = []
    for name in names:
        try:
            tokenizer = catalog.load(name)
        except TokenizerError as e:
            print(f"{name:<26} not loaded: {e}")
            continue
        start = time.perf_counter()
        odd = find_oddities(tokenizer)
        seconds = time.perf_counter() - start
        counts = odd.counts()
        print(f"{name:<26} {odd.examined:>7,} {odd.tested:>7,} "
              + " ".join(f"{counts[c]:>15,}" for c in CATEGORIES) + f"   {seconds:7.2f}", flush=True)
        for c in CATEGORIES:
            shown = [f"{i}:{tokenizer.piece(i)!r}" + (f"->{odd.instead[i]}" if c == "unreachable" else "")
                     for i in odd.ids[c][: args.examples].tolist()]
            if shown:
                notes.append(f"  {name} {c}: {', '.join(shown)}")
    print("\nexamples:")
    print("\n".join(notes))


if __name__ == "__main__":
    main()
