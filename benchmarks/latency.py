"""A level pass as one actor call per worker, against the two stages of Dask tasks it replaces.

A level pass as Dask tasks is two dependent stages: a histogram task per worker
thread, then a search task per chunk that sums its cells of every worker's
histogram; the client gathers the chosen tests. A cached fit makes the same pass
as one call on a holder per worker (a Dask actor): count, fetch the peers' cells
holder to holder, search. This claim times both shapes with empty work on a
2-process cluster as dasktree starts one, and a one-stage round trip beside
them; holder calls carrying a 1 and a 32 MB argument (a deep forest level's
plan) from a client that talks to the workers directly (as dasktree's own) and
from one through the scheduler (distributed's default). Whatever the kernels
cost, a pass takes at least the empty round trip: the last table sets it beside
the pyarrow scan floor of Agrawal data.
"""

from __future__ import annotations

import statistics
import sys
import time

from benchmarks import harness

NAME = "latency"
CLAIM = "A cached fit's level pass as one actor call per worker, against two stages of Dask tasks"


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


def _quartiles(times: list[float]) -> dict:
    q = statistics.quantiles(times, n=4)
    return {"median": statistics.median(times), "p25": q[0], "p75": q[2], "min": min(times)}


def run(quick: bool) -> harness.Result:
    from benchmarks.jobs import warm_cluster

    rows, rounds = (200_000, 20) if quick else (1_000_000, 60)
    path = harness.agrawal(rows)
    floor = harness.last_json(harness.run_process(harness.job("scan", path)))["scan_floor"]
    cluster, client = warm_cluster()
    try:
        stage_latency(client, 2, 5)  # the first round trips open connections
        holder_latency(client, 5)
        one = _quartiles(stage_latency(client, 1, rounds))
        two = _quartiles(stage_latency(client, 2, rounds))
        held = _quartiles(holder_latency(client, rounds))
        big = {mb: argument_latency(cluster, mb, 15) for mb in (1, 32)}
    finally:
        client.close()
        cluster.close()

    def ms(s: float) -> str:
        return f"{1000 * s:.1f}"

    def row(name: str, q: dict) -> str:
        return f"| {name} | {ms(q['median'])} | {ms(q['p25'])} | {ms(q['p75'])} | {ms(q['min'])} |"

    md = [f"Empty tasks and empty holders (actors) on a 2-process cluster as dasktree starts one, {rounds} round "
          "trips each; the machine is shared with other work, hence quartiles.", "",
          "| shape | median ms | p25 ms | p75 ms | min ms |", "|---|---|---|---|---|",
          row("one stage (a task per worker, gathered)", one),
          row("two stages (a level pass as tasks)", two),
          row("holders: a call per worker, peers' cells holder to holder (a cached level pass)", held),
          "", "A holder call with a large argument (a deep forest level's plan) on both workers, 15 calls each:", "",
          "| argument | direct to the workers (dasktree's client) ms | through the scheduler ms | ratio |",
          "|---|---|---|---|",
          *(f"| {mb} MB | {ms(b['direct']['median'])} | {ms(b['through the scheduler']['median'])} | "
            f"{harness.ratio(b['through the scheduler']['median'], b['direct']['median'])} |"
            for mb, b in big.items()),
          "", f"Pyarrow scan floor of {rows:,} Agrawal rows (the feature columns and the class): {ms(floor)} ms; "
          f"the empty holder round trip is {held['median'] / floor:.0%} of it, the two stages of tasks "
          f"{two['median'] / floor:.0%}."]
    summary = [("empty level pass: one holder call per worker / two stages of tasks (median ms)",
                f"{harness.ratio(held['median'], two['median'])} ({ms(held['median'])} vs {ms(two['median'])} ms)"),
               ("a 32 MB plan through the scheduler / direct to the workers",
                harness.ratio(big[32]['through the scheduler']['median'], big[32]['direct']['median']))]
    return harness.Result(summary, "\n".join(md), {"rows": rows, "rounds": rounds, "scan_floor": floor,
                                                   "one_stage": one, "two_stages": two, "holders": held,
                                                   "large_arguments": {str(k): v for k, v in big.items()}})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
