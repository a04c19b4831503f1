"""Counting throughput on a Dask cluster: `tokviz dataset` and `tokviz train`'s counting stage
with 1, 2 and 4 local Dask workers (`--scheduler local:N`) beside the local default.

Two stages, each timed in this process from the first task to the last result (the cluster is
started before the clock starts; its start-up is printed apart):

- dataset: `analysis.dataset.count_dataset` over bench_dataset.py's JSONL (texts and
  conversations, `-t cl100k_base --template chatml`), the local default being `--jobs` = the
  cores; MB/s of the file.
- train: the distinct-chunk table of bench_train.py's corpus (text files, cl100k pattern):
  `corpus.count_corpus` with its default jobs, against `training.cluster.count_files_on_cluster`;
  MB/s of the corpus, the distinct chunks and the table's size as flat buffers (what the client
  holds and a reduce task holds a part of).

Each cluster result is checked against the local one (same per-example totals; same table) and
the line says so. The inputs are built once into the bench cache (TOKVIZ_BENCH_CACHE, default
~/.cache/tokviz-bench) from this machine's own files; nothing is downloaded.

    python bench/bench_dask.py                  # dataset 50 MB, corpus 100 MB
    python bench/bench_dask.py --mb 10 --corpus-mb 10 --workers 1 2   # quick

This is not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_dataset  # noqa: E402
import bench_train  # noqa: E402

from tokviz.analysis.dataset import DatasetOptions, ExampleCount, count_dataset  # noqa: E402
from tokviz.analysis.dataset_cluster import ClusterCounts  # noqa: E402
from tokviz.core.cluster import Cluster  # noqa: E402
from tokviz.training.cluster import count_files_on_cluster  # noqa: E402
from tokviz.training.corpus import count_corpus, default_jobs  # noqa: E402
from tokviz.training.pieces import compact  # noqa: E402
from tokviz.training.pretokenize import CL100K_PATTERN  # noqa: E402


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def dataset_totals(path: Path, options: DatasetOptions, cluster: Cluster | None) -> tuple[float, list[int]]:
    remote = ClusterCounts(cluster, options) if cluster is not None else None
    start = time.perf_counter()
    totals = [r.tokens[0] for r in count_dataset([path], options, remote=remote) if isinstance(r, ExampleCount)]
    return time.perf_counter() - start, totals


def train_table(files: list[Path], cluster: Cluster | None) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    if cluster is None:
        counts, _ = count_corpus(files, pattern=CL100K_PATTERN)
    else:
        counts, _ = count_files_on_cluster(cluster, files, pattern=CL100K_PATTERN)
    return time.perf_counter() - start, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="dataset JSONL size (default 50)")
    parser.add_argument("--corpus-mb", type=int, default=100, help="training corpus size (default 100)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="local Dask workers (1 2 4)")
    parser.add_argument("--only", choices=["dataset", "train"], help="one stage only")
    args = parser.parse_args()
    cores = _cores()
    print(f"machine: {cores} cores, load {os.getloadavg()[0]:.1f}; python {sys.version.split()[0]}")

    if args.only != "train":
        path = bench_dataset.build(args.mb)
        size = path.stat().st_size
        options = DatasetOptions(("cl100k_base",), template="chatml", jobs=cores)
        seconds, local = dataset_totals(path, options, None)
        print(f"dataset  {size / 1e6:.0f} MB, {len(local):,} examples")
        print(f"  local default (--jobs {cores}): {seconds:6.1f} s  {size / 1e6 / seconds:5.1f} MB/s")
        for n in args.workers:
            began = time.perf_counter()
            with Cluster(f"local:{n}") as cluster:
                up = time.perf_counter() - began
                seconds, remote = dataset_totals(path, options, cluster)
            same = "same counts" if remote == local else "DIFFERENT COUNTS"
            print(f"  dask local:{n} ({up:.1f} s to start): {seconds:6.1f} s  {size / 1e6 / seconds:5.1f} MB/s  {same}")

    if args.only != "dataset":
        folder = bench_train.build_corpus(args.corpus_mb, one_file=False)
        files = bench_train.corpus_files(folder)
        size = sum(f.stat().st_size for f in files)
        seconds, local_table = train_table(files, None)
        keys, values = compact(local_table)
        print(f"train    {size / 1e6:.0f} MB in {len(files)} files; distinct table {len(local_table):,} chunks, "
              f"{(len(keys) + len(values)) / 1e6:.1f} MB as flat buffers")
        print(f"  local default (jobs {default_jobs(size)}): {seconds:6.1f} s  {size / 1e6 / seconds:5.1f} MB/s")
        for n in args.workers:
            began = time.perf_counter()
            with Cluster(f"local:{n}") as cluster:
                up = time.perf_counter() - began
                seconds, table = train_table(files, cluster)
            same = "same table" if table == local_table else "DIFFERENT TABLE"
            print(f"  dask local:{n} ({up:.1f} s to start): {seconds:6.1f} s  {size / 1e6 / seconds:5.1f} MB/s  {same}")
            del table


if __name__ == "__main__":
    main()
