"""What a level pass cannot go below on Dask: the task latency beside the scan floor.

A level pass as Dask tasks is two dependent stages (split selection on the
workers, as the issue asks): a histogram task per worker thread, then one
search task per chunk that sums its cells of every worker's histogram; the
client then gathers the chosen tests. A cached fit makes the same pass as one
call on a holder per worker (a Dask actor, ``dasktree.engine.part_holders``): count, fetch
the peers' cells holder to holder, search. This script times both shapes with
empty work on the benchmarks' 2-process LocalCluster (:func:`bench_core.start_cluster`),
holder calls carrying a 1 and a 32 MB argument (a deep forest level's plan) from a client
that talks to the workers directly (as dasktree's own) and from one that goes through the
scheduler (distributed's default),
and a one-stage round trip beside them, next to the pyarrow scan floor of the
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


class _EmptyHolder:
    """The shape of ``dasktree.engine.part_holders.PartHolder.level_pass`` with no work: count in a thread, then
    fetch a piece from every peer (each waits until that peer has counted), search in a thread."""

    def __init__(self):
        self.peers, self.counted = [], {}

    def set_peers(self, peers) -> None:
        self.peers = peers

    def _counted(self, number: int):
        import asyncio

        return self.counted.setdefault(number, asyncio.get_running_loop().create_future())

    async def level_pass(self, number: int) -> int:
        import asyncio

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, _empty)
        self._counted(number).set_result(None)
        self.counted.pop(number - 1, None)
        await asyncio.gather(*(peer.cells(number) for peer in self.peers))
        return await loop.run_in_executor(None, _empty)

    async def cells(self, number: int) -> int:
        await self._counted(number)
        return 0

    def take(self, plan) -> int:
        return int(plan.nbytes)


def holder_latency(client, rounds: int) -> list[float]:
    """Seconds of ``rounds`` level passes of empty holders, one per worker (called, then gathered)."""
    workers = sorted(client.scheduler_info()["workers"])
    futures = [client.submit(_EmptyHolder, workers=[w], actor=True, pure=False) for w in workers]
    holders = [f.result() for f in futures]
    for holder in holders:
        holder.set_peers([peer for peer in holders if peer is not holder]).result()
    times = []
    for number in range(rounds):
        t = time.perf_counter()
        for call in [holder.level_pass(number) for holder in holders]:
            call.result()
        times.append(time.perf_counter() - t)
    del holders, futures
    return times


def argument_latency(cluster, mb: float, rounds: int) -> dict[str, dict]:
    """Quartiles of a holder call on every worker with a ``mb`` MB argument (a deep forest level's
    plan travels so), from a client that talks to the workers directly (as dasktree's own) and
    from one with distributed's default, through the scheduler."""
    import numpy as np
    from distributed import Client

    plan = np.ones(int(mb * 2**20) // 8)
    out = {}
    for name, direct in (("direct", True), ("through the scheduler", None)):
        with Client(cluster, direct_to_workers=direct) as client:
            workers = sorted(client.scheduler_info()["workers"])
            futures = [client.submit(_EmptyHolder, workers=[w], actor=True, pure=False) for w in workers]
            holders = [f.result() for f in futures]
            times = []
            for _ in range(rounds + 2):
                t = time.perf_counter()
                for call in [holder.take(plan) for holder in holders]:
                    call.result()
                times.append(time.perf_counter() - t)
            client.cancel(futures)
            del holders
            out[name] = _quartiles(times[2:])
    return out


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
        holder_latency(client, 5)
        one = _quartiles(stage_latency(client, 1, args.rounds))
        two = _quartiles(stage_latency(client, 2, args.rounds))
        held = _quartiles(holder_latency(client, args.rounds))
        big = {mb: argument_latency(cluster, mb, 15) for mb in (1, 32)}
        sizes = {rows: {"scan_floor": floors[rows], "levels": level_passes(client, path, args.fits)}
                 for rows, path in paths.items()}
    finally:
        client.close()
        cluster.close()

    ms = lambda s: f"{1000 * s:.1f}"  # noqa: E731
    lines = [
        "# Dask task latency beside the scan floor",
        "",
        f"Empty tasks and empty holders (actors) on the benchmarks' 2-process LocalCluster, {args.rounds} round "
        "trips each (the machines are shared: quartiles, not one figure). A cached fit's level passes are "
        "holder calls; without the cache they are the two stages of tasks.",
        "",
        "| shape | median ms | p25 ms | p75 ms | min ms |",
        "|---|---|---|---|---|",
        f"| one stage (a task per worker, gathered) | {ms(one['median'])} | {ms(one['p25'])} | {ms(one['p75'])} | "
        f"{ms(one['min'])} |",
        f"| two stages (a level pass's shape as tasks) | {ms(two['median'])} | {ms(two['p25'])} | "
        f"{ms(two['p75'])} | {ms(two['min'])} |",
        f"| holders: a call per worker, peers' cells holder to holder (a cached level pass's shape) | "
        f"{ms(held['median'])} | {ms(held['p25'])} | {ms(held['p75'])} | {ms(held['min'])} |",
        "",
        "A holder call with a large argument (a deep forest level's plan), on both workers, 15 calls each:",
        "",
        "| argument | direct to the workers (dasktree's client) median ms | through the scheduler (distributed's "
        "default) median ms | ratio |",
        "|---|---|---|---|",
        *(f"| {mb} MB | {ms(b['direct']['median'])} | {ms(b['through the scheduler']['median'])} | "
          f"{b['through the scheduler']['median'] / b['direct']['median']:.1f} |" for mb, b in big.items()),
        "",
        "| rows | scan floor ms | 2x floor ms | left for the work after empty holders (median) ms | "
        "level passes 1-9 ms (median of fits; ratio to the floor) |",
        "|---|---|---|---|---|",
    ]
    for rows, s in sizes.items():
        budget = 2 * s["scan_floor"]
        lines.append(f"| {rows:,} | {ms(s['scan_floor'])} | {ms(budget)} | {ms(budget - held['median'])} | "
                     + ", ".join(f"{ms(x)} ({x / s['scan_floor']:.1f}x)" for x in s["levels"][1:]) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    write_results(args.name, text, {"one_stage": one, "two_stages": two, "holders": held, "large_arguments": {str(k): v for k, v in big.items()}, "rounds": args.rounds,
                                    "sizes": {str(k): v for k, v in sizes.items()}})


if __name__ == "__main__":
    main()
