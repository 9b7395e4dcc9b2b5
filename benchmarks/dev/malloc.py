"""The cluster dasktree starts against Dask's default worker environment (``MALLOC_TRIM_THRESHOLD_``).

Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also fixes
glibc's mmap threshold at 128 KiB; dasktree's ``local_cluster`` leaves it unset.
This developer tool fits the same Agrawal data (F2, 5% perturbation, 16 Parquet
files, depth 10, 2 worker processes of one thread) on each kind of cluster, each in
a fresh process (cluster started, warmed by small fits, then ``--fits`` fits),
alternately for ``--rounds`` rounds, and prints the medians of the fit and of the
level passes' sum and the ratio Dask's environment / dasktree's (above 1: Dask's
is slower). Nothing is written to ``benchmarks/results/``.

Usage: python benchmarks/dev/malloc.py [--rows 1000000] [--rounds 3] [--fits 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from benchmarks import harness  # noqa: E402

MODES = {"dasktree": "MALLOC_TRIM_THRESHOLD_ unset (dasktree's cluster)",
         "dask": "MALLOC_TRIM_THRESHOLD_=65536 (Dask's default)"}


def measure(mode: str, path: str, fits: int) -> list[dict]:
    """In this process: a cluster of ``mode``, warmed by a small fit, then ``fits`` depth-10 fits."""
    import logging

    from distributed import Client, LocalCluster

    from dasktree import fit
    from dasktree.engine.cluster import local_cluster

    if mode == "dask":
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)
    else:
        cluster = local_cluster(n_workers=2)
    client = Client(cluster, direct_to_workers=True)
    try:
        fit(harness.agrawal(50_000, files=2), target="class", max_depth=10, client=client)
        out = []
        for _ in range(fits):
            run = fit(path, target="class", max_depth=10, client=client).run
            out.append({"fit": run["seconds"]["total"], "levels": sum(lv["seconds"] for lv in run["levels"])})
        return out
    finally:
        client.close()
        cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fits", type=int, default=2)
    parser.add_argument("--measure", choices=list(MODES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    path = harness.agrawal(args.rows)
    if args.measure:
        print(json.dumps(measure(args.measure, path, args.fits)))
        return
    commands = {mode: [sys.executable, __file__, "--rows", str(args.rows), "--fits", str(args.fits), "--measure", mode]
                for mode in MODES}
    runs = harness.alternate(commands, args.rounds)
    fits = {mode: [f for r in rs for f in harness.last_json(r)] for mode, rs in runs.items()}
    med = {mode: {k: statistics.median(f[k] for f in fs) for k in ("fit", "levels")} for mode, fs in fits.items()}
    for mode, m in med.items():
        peak = max(r["peak_bytes"] for r in runs[mode]) / 2**20
        print(f"{MODES[mode]}: fit {m['fit']:.2f} s, level passes {m['levels']:.2f} s, peak {peak:.0f} MB")
    print(f"Dask's / dasktree's: fit {med['dask']['fit'] / med['dasktree']['fit']:.2f}x, "
          f"level passes {med['dask']['levels'] / med['dasktree']['levels']:.2f}x")


if __name__ == "__main__":
    main()
