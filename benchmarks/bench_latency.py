"""What a level pass cannot go below on Dask: the task latency beside the scan floor.

A level pass on a cluster is two dependent task stages, as the issue asks
(split selection on the workers): a histogram task per worker thread, then one
search task per chunk that sums its cells of every worker's histogram; the
client then gathers the chosen tests. This script times that shape with empty
tasks on the benchmarks' 2-process LocalCluster (:func:`bench_core.start_cluster`),
and a one-stage round trip beside it, next to the pyarrow scan floor of the
Agrawal data (measured as ``bench_core.py`` does: in a process of its own,
before the cluster starts) and the level passes of a plain
depth-10 fit on the same cluster. Whatever the kernels cost, a pass takes at
least the empty two-stage latency; the table shows how much of "2x the scan
floor" is left for the counting and the search.

Usage: python benchmarks/bench_latency.py [--sizes 1000000 4000000] [--files 16] [--rounds 60] [--name latency]
Writes benchmarks/results/NAME.json and NAME.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_core import ensure_data, run_child, start_cluster, warm_workers  # noqa: E402
from results_io import write_results  # noqa: E402


def _empty(*_inputs) -> int:
    return 0


def stage_latency(client, stages: int, rounds: int) -> list[float]:
    """Seconds of ``rounds`` round trips: ``stages`` dependent stages of one task per worker (each task
    of a stage after the first needs every task of the stage before), then a gather."""
    workers = sorted(client.scheduler_info()["workers"])
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        futures = [client.submit(_empty, workers=[w], pure=False) for w in workers]
        for _stage in range(stages - 1):
            futures = [client.submit(_empty, *futures, workers=[w], pure=False) for w in workers]
        client.gather(futures)
        times.append(time.perf_counter() - t)
        del futures
    return times


def level_passes(client, path: str, fits: int) -> list[float]:
    """Median seconds of each level pass of a plain depth-10 fit, over ``fits`` fits."""
    from dasktree import fit

    runs = [fit(path, target="class", max_depth=10, client=client).run["levels"] for _ in range(fits)]
    return [statistics.median(run[i]["seconds"] for run in runs) for i in range(len(runs[0]))]


def _quartiles(times: list[float]) -> dict:
    q = statistics.quantiles(times, n=4)
    return {"median": statistics.median(times), "p25": q[0], "p75": q[2], "min": min(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 4_000_000])
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=60, help="round trips timed per shape")
    parser.add_argument("--fits", type=int, default=3, help="plain fits per size (the median level pass is shown)")
    parser.add_argument("--name", default="latency", help="results file stem in benchmarks/results/")
    args = parser.parse_args()

    paths = {rows: ensure_data(rows, args.files) for rows in args.sizes}
    floors = {rows: run_child(os.path.join(HERE, "bench_core.py"), "scan", path)["scan_floor"]
              for rows, path in paths.items()}
    cluster, client = start_cluster()
    try:
        warm_workers(client)
        stage_latency(client, 2, 5)  # the first round trips open connections
        one = _quartiles(stage_latency(client, 1, args.rounds))
        two = _quartiles(stage_latency(client, 2, args.rounds))
        sizes = {rows: {"scan_floor": floors[rows], "levels": level_passes(client, path, args.fits)}
                 for rows, path in paths.items()}
    finally:
        client.close()
        cluster.close()

    ms = lambda s: f"{1000 * s:.1f}"  # noqa: E731
    lines = [
        "# Dask task latency beside the scan floor",
        "",
        f"Empty tasks on the benchmarks' 2-process LocalCluster, {args.rounds} round trips each "
        "(the machines are shared: quartiles, not one figure).",
        "",
        "| shape | median ms | p25 ms | p75 ms | min ms |",
        "|---|---|---|---|---|",
        f"| one stage (a task per worker, gathered) | {ms(one['median'])} | {ms(one['p25'])} | {ms(one['p75'])} | "
        f"{ms(one['min'])} |",
        f"| two stages (a level pass's shape) | {ms(two['median'])} | {ms(two['p25'])} | {ms(two['p75'])} | "
        f"{ms(two['min'])} |",
        "",
        "| rows | scan floor ms | 2x floor ms | left for the work after the empty two stages (median) ms | "
        "level passes 1-9 ms (median of fits) |",
        "|---|---|---|---|---|",
    ]
    for rows, s in sizes.items():
        budget = 2 * s["scan_floor"]
        lines.append(f"| {rows:,} | {ms(s['scan_floor'])} | {ms(budget)} | {ms(budget - two['median'])} | "
                     + ", ".join(ms(x) for x in s["levels"][1:]) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    write_results(args.name, text, {"one_stage": one, "two_stages": two, "rounds": args.rounds,
                                    "sizes": {str(k): v for k, v in sizes.items()}})


if __name__ == "__main__":
    main()
