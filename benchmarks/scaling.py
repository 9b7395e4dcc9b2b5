"""What a cluster pass costs as workers and parts grow, what crosses between holders per level, and a model.

On a real ``dask scheduler`` with 1, 2, 4, 8 and 16 single-threaded ``dask worker``
processes (no nannies) on 127.0.0.1, reached as ``--scheduler ADDRESS`` reaches it
(:func:`dasktree.engine.cluster.connect`):

- **An empty pass.** The runner's own pass entry point (``DaskRunner.level_pass``,
  called by the grow loop with ``max_depth=1``: one pass whose frontier is the
  root of a new tree), on 100,000 Agrawal rows cut into 100, 1,000 and 10,000
  parts (row groups of 1,000, 100 and 10 rows in 100 files). Its counting and
  search are the root's over 100,000 rows: the same pass in this process
  (:class:`~dasktree.engine.local_runner.LocalRunner`) is the work floor, the rest is the
  pass machinery. Per strategy a cluster fit uses: the holders (a cached fit's
  level passes) and task graphs (a fit without the cache, which reads and encodes
  every part anew each pass: its time grows with the parts by design, so its
  client's and scheduler's CPU are the fixed cost there). Wall time, and the CPU
  of this process (the client), of the scheduler and of the workers, per pass.
- **A real fit's levels.** ``fit(cv=10, max_depth=12)`` of Agrawal F2 rows on
  each cluster (the second of two: the first loads the kernels), its level
  passes probed on the workers (:mod:`benchmarks.scaling_probes`): the bytes of each group's histogram, the
  bytes the holders hand each other (the reduce-scatter's exchange), counting,
  fetching and the search's share of the pass.
- **A model** (:mod:`benchmarks.scaling_model`) fitted on the 1-4 worker points,
  its predictions of the 8 and 16 worker points beside the measured ones, and its
  prediction of a 1B-row, 50-attribute, depth-12, 10-fold fit on 100 workers.

This machine has 2 cores: 16 worker processes there measure the overhead of a
pass, not its throughput (the workers take turns on the cores).

``python -m benchmarks.scaling --render`` writes the results again from their JSON
figures (the analysis and model as this module has them), measuring nothing.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

from benchmarks import harness, scaling_model, scaling_probes

NAME = "scaling"
CLAIM = ("A cluster pass's fixed cost grows at most linearly in workers, under 50 ms at 16 workers and "
         "10,000 parts; bytes exchanged per level; a model of a 1B-row fit on 100 workers")

EMPTY_ROWS = 100_000
FILES = 100


def _empty_data(tmp: str, parts: int) -> str:
    from dasktree.datasets.agrawal_parquet import write_parquet

    path = os.path.join(tmp, f"empty-{parts}")
    write_parquet(path, EMPTY_ROWS, n_files=min(parts, FILES), function=2, perturbation=0.05, seed=0,
                  row_group_size=EMPTY_ROWS // parts)
    return path


def _opened(path: str, parts: int, cv: int | None = None):
    from dasktree.fit import open_input
    from dasktree.params import validate

    settings = validate({"max_depth": 1, **({"cv": cv} if cv else {})})
    given = open_input(path, None, settings, target="class", features=None, exclude=(), nominal=(), key=None,
                       folds=None, part_rows=EMPTY_ROWS // parts, storage_options=None, sample_weight=None)
    assert len(given.source.parts) == parts, (len(given.source.parts), parts)
    return settings, given


def empty_passes(path: str, parts: int, reps: int, *, client=None, cache=True, cpu=None) -> dict:
    """``reps`` empty passes (after one that encodes or reads first) on ``client``'s cluster, or in this
    process without one: median wall seconds of ``DaskRunner.level_pass``, and CPU per pass."""
    from dasktree.binning.spec import bin_spec
    from dasktree.engine.place import open_runner
    from dasktree.levels.grow import grow

    settings, given = _opened(path, parts)
    where = dict(client=client, cache=cache) if client is not None else dict(scheduler="inprocess")
    with open_runner(given.source, given.roles, **where) as runner:
        summary = runner.summary(settings["max_bins"])
        spec = bin_spec(summary, given.roles, max_bins=settings["max_bins"],
                        max_categories=settings["max_categories"], where=given.source.description)
        runner.prepare(spec, 1)
        times: list[float] = []
        inner = runner.level_pass

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                times.append(time.perf_counter() - started)

        runner.level_pass = timed
        grow(runner, spec, settings.grow)  # the first: the holders encode, the kernels load
        times.clear()
        before = cpu.now() if cpu else (time.process_time(), 0.0, 0.0)
        for _ in range(reps):
            forest, _report = grow(runner, spec, settings.grow)
        after = cpu.now() if cpu else (time.process_time(), 0.0, 0.0)
        assert len(times) == reps and forest.nodes[0].counts is not None
    client_s, scheduler_s, workers_s = ((b - a) / reps for a, b in zip(before, after))
    return {"seconds": statistics.median(times), "least": min(times), "all": times, "client_cpu": client_s,
            "scheduler_cpu": scheduler_s, "workers_cpu": workers_s}


def fit_levels(client, path: str, depth: int, warm: str | None = None) -> dict:
    """A ``cv=10`` fit of ``path`` on ``client``'s cluster, its level passes probed on the workers
    (after a fit of ``warm``: the workers load the kernels of every layout the levels use)."""
    import dasktree
    from dasktree.engine.progress import Progress
    from dasktree.engine.dask_runner import DaskRunner

    class Rows(Progress):  # the rows each level pass counts: a row once per distinct node it reaches
        def __init__(self):
            super().__init__(enabled=False)
            self.levels: list[int] = []

        def describe(self, **fields) -> None:
            super().describe(**fields)
            if "level" in fields:
                self.levels.append(int(fields["rows"]))

    if warm is not None:
        dasktree.fit(warm, target="class", client=client, cv=10, max_depth=depth)
    client.run(scaling_probes.install)
    entered: list[float] = []  # this thread's CPU seconds as each level pass starts, and as it ends
    left: list[float] = []
    inner = DaskRunner.level_pass

    def timed(self, *args, **kwargs):
        entered.append(time.thread_time())
        try:
            return inner(self, *args, **kwargs)
        finally:
            left.append(time.thread_time())

    DaskRunner.level_pass = timed
    started, rows = time.perf_counter(), Rows()
    try:
        model = dasktree.fit(path, target="class", client=client, cv=10, max_depth=depth, progress=rows)
    finally:
        DaskRunner.level_pass = inner
    seconds = time.perf_counter() - started
    entered.append(left[-1])  # the last level's client CPU ends with its pass (pruning and the model after it)
    probed = scaling_probes.collected(client)
    levels = model.run["levels"]
    passes = sorted(n for n in probed if n >= 0)
    assert len(passes) == sum(level["groups"] for level in levels), (passes, levels)
    out, i = [], 0
    for level in levels:
        found = [scaling_probes.per_pass(probed[n]) for n in passes[i:i + level["groups"]]]
        client_cpu = entered[i + level["groups"]] - entered[i]  # the runner's (its waits too) and the grow loop's
        counted = sum(rows.levels[i:i + level["groups"]])
        i += level["groups"]
        out.append({**level, **{k: (sum if k in scaling_probes.ADDED else max)(f[k] for f in found) for k in found[0]},
                    "client_cpu_s": client_cpu, "rows": counted})
    features = model.report["features"]
    return {"seconds": seconds, "levels": out, "model": model, "pass0": model.run["seconds"]["pass0"],
            "total_bins": sum(f["bins"] for f in features), "attributes": len(features),
            "rows": model.report["rows"], "forest_nodes": model.report["forest_nodes"], "nodes": model.report["nodes"]}


def run(quick: bool) -> harness.Result:
    from distributed import Client

    from dasktree.datasets.agrawal_parquet import write_parquet
    from dasktree.engine.cluster import connect
    from dasktree.testing.cluster import cluster_processes

    workers = (1, 2, 4) if quick else (1, 2, 4, 8, 16)
    part_counts = (100, 1_000) if quick else (100, 1_000, 10_000)
    reps, reads = (5, 2) if quick else (20, 3)
    fit_rows, depth = (50_000, 8) if quick else (200_000, 12)
    empty: dict = {}
    fits: dict = {}
    idle: dict = {}
    with tempfile.TemporaryDirectory(prefix="dasktree-scaling-") as tmp:
        paths = {p: _empty_data(tmp, p) for p in part_counts}
        fit_path = os.path.join(tmp, "fit")
        write_parquet(fit_path, fit_rows, n_files=16, function=2, perturbation=0.05, seed=0)
        floor = empty_passes(paths[part_counts[0]], part_counts[0], reps)  # in this process: the work
        for w in workers:
            print(f"  {w} workers", flush=True)
            with cluster_processes(w, nanny=False) as procs, connect(scheduler=procs.address) as client:
                cpu = scaling_probes.ProcessCpu(procs.scheduler.pid, [p.pid for p in procs.workers])
                idle[w] = cpu.idle()
                for p in part_counts:
                    for cache, n in ((True, reps), (False, reads if p < 10_000 else 1)):
                        r = empty_passes(paths[p], p, n, client=client, cache=cache, cpu=cpu)
                        empty[(w, p, "holders" if cache else "tasks")] = r
                        print(f"    {p} parts, {'holders' if cache else 'tasks'}: {1000 * r['seconds']:.1f} ms",
                              flush=True)
                fits[w] = fit_levels(client, fit_path, depth, fit_path)  # the first loads every layout's kernels
                fits[w].pop("model")
                print(f"    fit: {fits[w]['seconds']:.1f} s", flush=True)
                with Client(procs.address, direct_to_workers=True) as direct:  # as scheduler="processes" makes it
                    p = part_counts[0]
                    empty[(w, p, "holders, direct")] = r = empty_passes(paths[p], p, reps, client=direct, cpu=cpu)
                print(f"    {p} parts, holders, a client direct to the workers: {1000 * r['seconds']:.1f} ms",
                      flush=True)
    return scaling_model.report(empty, floor, fits, idle, workers, part_counts, fit_rows, depth)


if __name__ == "__main__":
    if sys.argv[1:] == ["--render"]:  # the tables and the model again from results/scaling.json, not measured
        scaling_model.rerender()
    else:
        harness.main(sys.modules[__name__])
