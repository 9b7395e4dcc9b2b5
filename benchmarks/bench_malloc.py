"""Worker allocation benchmark: the cluster dasktree starts against Dask's default worker environment.

Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also fixes glibc's
mmap threshold at 128 KiB; ``dasktree.engine.cluster.local_cluster`` leaves it unset. On the same
Agrawal data as ``bench_core.py`` (F2, 5% perturbation, 16 Parquet files, depth 10, 2 worker
processes of one thread), alternately in the same run: ``bench_core.py``'s measurement runs in
a fresh process with each kind of cluster (started, warmed by a small fit, then ``--fits``
fits); this repeats ``--rounds`` times. Reported: medians of the fit and of the level passes'
sum, and the ratio Dask's
environment / dasktree's (above 1: Dask's is slower). Peak memory of each is the largest
over its fits (client, scheduler and workers).

Usage: python benchmarks/bench_malloc.py [--sizes 1000000 4000000] [--rounds 3] [--fits 2]
Writes benchmarks/results/malloc.json and malloc.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from bench_core import DASK_MALLOC, REPEAT, ensure_data, run_child  # noqa: E402
from results_io import write_results  # noqa: E402

MODES = {"dasktree": "MALLOC_TRIM_THRESHOLD_ unset (dasktree's cluster)",
         "dask": "MALLOC_TRIM_THRESHOLD_=65536 (Dask's default)"}


def measure(mode: str, path: str, fits: int) -> list[dict]:
    """``bench_core``'s measurement in a fresh process (cluster, warm-up, ``fits`` fits) in ``mode``."""
    os.environ[REPEAT] = str(fits)
    if mode == "dask":
        os.environ[DASK_MALLOC] = "1"
    else:
        os.environ.pop(DASK_MALLOC, None)
    result = run_child(os.path.join(HERE, "bench_core.py"), "dasktree", path)
    levels = [sum(runs) for runs in zip(*(lv["runs"] for lv in result["levels"]))]
    return [{"fit": fit, "levels": lv, "peak_rss": result["peak_rss"]} for fit, lv in zip(result["fits"], levels)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 4_000_000])
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fits", type=int, default=2)
    args = parser.parse_args()
    results = {}
    for rows in args.sizes:
        path = ensure_data(rows, args.files)
        runs = {mode: [] for mode in MODES}
        for _ in range(args.rounds):
            for mode in MODES:  # alternated: the machine's slow moments fall on both
                runs[mode] += measure(mode, path, args.fits)
        results[rows] = runs
    report(results, args)


def report(results: dict, args) -> None:
    lines = ["# Worker allocation benchmark", "",
             f"Agrawal F2 with 5% perturbation, {args.files} Parquet files, depth 10, 2-process LocalCluster "
             f"(2 cores). {args.rounds} rounds, each starting a cluster of both kinds in turn and fitting "
             f"{args.fits} times on it; medians of the {args.rounds * args.fits} fits of each kind.", "",
             "| rows | workers | fit s | level passes s | peak MB |", "|---|---|---|---|---|"]
    summary = {}
    for rows, runs in results.items():
        med = {mode: {k: statistics.median(r[k] for r in rs) for k in ("fit", "levels")}
               for mode, rs in runs.items()}
        for mode, rs in runs.items():
            m = med[mode]
            lines.append(f"| {rows:,} | {MODES[mode]} | {m['fit']:.2f} | {m['levels']:.2f} | "
                         f"{max(r['peak_rss'] for r in rs) / 2**20:.0f} |")
        summary[rows] = {k: med["dask"][k] / med["dasktree"][k] for k in ("fit", "levels")}
    lines += ["", "Dask's environment / dasktree's (medians):", "",
              "| rows | fit | level passes |", "|---|---|---|"]
    for rows, r in summary.items():
        lines.append(f"| {rows:,} | {r['fit']:.2f}x | {r['levels']:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    write_results("malloc", text, {"results": {str(k): v for k, v in results.items()},
                                   "summary": {str(k): v for k, v in summary.items()}})


if __name__ == "__main__":
    main()
