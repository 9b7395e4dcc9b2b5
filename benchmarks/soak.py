"""A shared cluster for a long time: mixed fits one after another, some of them with a fault.

On one real ``dask scheduler`` with two ``dask worker`` processes (each under its
nanny) on 127.0.0.1, ``dasktree fit`` runs a fixed number of times in a row
through three configurations (Agrawal F7 rows; Agrawal F2 rows with ``--cv 5``; a
wide table of continuous columns, every value distinct), each first fitted once
undisturbed for its reference model. A fixed, seeded set of the fits meets a fault:

- ``worker``: a worker SIGKILLs itself at a random stage of a random pass
  (:mod:`dasktree.testing.hooks`); the fit must finish with the reference's bytes;
- ``client``: the ``dasktree`` process is SIGKILLed after a random level pass; the
  scheduler must release everything it held (time measured), and the same command
  with ``--checkpoint`` must finish with the reference's bytes;
- ``scheduler``: the scheduler is SIGKILLed after a random level pass; the fit must
  end with exit 75 within its bound; the scheduler and workers are started again
  (as a deployment does) and the command with ``--checkpoint`` must finish with the
  reference's bytes.

Every run has a bound: 10x the time its configuration takes on the machine now (the
larger of its reference and its last undisturbed fit, so a machine slowed by other work
does not turn slow fits into hangs), at least 120 s; a run past it is a hang, and its
last log line is kept to say where it stood. ``SOAK_MINUTES`` in the environment bounds the whole soak: no fit starts after
it, and the results say how many of the planned fits and faults ran. Reported: fits done, models identical to their reference, exits by code,
the time each fault kind adds (the faulted fit and its rerun, less the reference
time), the scheduler's task count after each fit and the workers' memory drift. A worker's resident
memory after a fit depends on which configuration it just served (the wide table's columns, the CV
forest's counts), so a worker's memory is read after each fit with the configuration beside it
(:func:`drift`): its drift is the rise of a least-squares line through those readings, each
configuration's mean taken out first, from its first fit to its last, against its mean memory; a
growth of memory per fit shows there, where one reading against another mostly shows which
configurations they follow. The endpoints (the last reading against the first after the same
configuration) are reported beside it. A restarted worker is a new process with its own readings.
"""

from __future__ import annotations

import collections
import os
import random
import subprocess
import sys
import tempfile
import time

from benchmarks import harness

CLAIM = ("200 fits in a row on one cluster with 40 faults (worker, client and scheduler kills): "
         "every model identical to its reference, no hang, no task left, memory drift under 5%")
NAME = "soak"

STAGES = ("summary", "encode", "count", "cells", "search")
CONFIGS = {  # name: (dataset, fit arguments)
    "f7": ("f7", ["--max-depth", "8"]),
    "f2-cv": ("f2", ["--max-depth", "6", "--cv", "5"]),
    "wide": ("wide", ["--max-depth", "6"]),
}
KINDS = ("worker", "worker", "client", "worker", "client", "scheduler")  # the faults' mix, in turn
MINUTES = float(os.environ.get("SOAK_MINUTES", "inf"))  # no fit starts after this long


def run(quick: bool) -> harness.Result:
    fits, faults = (40, 8) if quick else (200, 40)
    rows = 20_000 if quick else 100_000
    with tempfile.TemporaryDirectory(prefix="dasktree-soak-") as tmp:
        return _soak(tmp, fits, faults, rows, random.Random(45))


def _write_data(tmp: str, rows: int) -> dict[str, str]:
    import numpy as np
    import pandas as pd

    from dasktree.datasets import agrawal

    paths = {name: os.path.join(tmp, name) for name in ("f7", "f2", "wide")}
    agrawal.write_parquet(paths["f7"], rows, n_files=4, function=7, perturbation=0.05, seed=1)
    agrawal.write_parquet(paths["f2"], rows, n_files=4, function=2, perturbation=0.05, seed=2)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(rows // 2, 40))
    frame = pd.DataFrame(x, columns=[f"x{i}" for i in range(40)])
    frame["class"] = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + 0.2 * rng.normal(size=len(x)) > 0).astype("int64")
    os.makedirs(paths["wide"])
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 4)):
        frame.iloc[part].to_parquet(os.path.join(paths["wide"], f"part-{i}.parquet"), index=False)
    return paths


class Fit:
    """One ``dasktree fit`` process on the cluster, its JSON log read as it runs."""

    def __init__(self, data: str, args: list[str], out: str, address: str, env: dict | None = None):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "dasktree.cli", "fit", data, "--target", "class",
                                      *args, "--out", out, "--overwrite", "--scheduler", address,
                                      "--log-format", "json"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self.errors: list[str] = []
        self.last = ""  # the last line of its log read, to say where a run past its bound stood

    def until_pass(self, number: int) -> bool:
        """Read the log until level pass ``number`` is done; False if the fit ended first."""
        for line in self.proc.stderr:
            self.last = line.strip()
            if line.startswith("{"):
                if f'"pass {number + 1}:' in line:
                    return True
            else:
                self.errors.append(line.strip())
        return False

    def finish(self, bound: float) -> tuple[int | None, float]:
        """(exit code or None for a hang, seconds)."""
        try:
            rest = self.proc.communicate(timeout=bound)[1]
            self.errors += [line for line in rest.splitlines() if line and not line.startswith("{")]
            code = self.proc.returncode
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rest = self.proc.communicate()[1] or ""
            lines = [line for line in rest.splitlines() if line.strip()]
            self.last = lines[-1].strip() if lines else self.last
            self.errors.append(f"past its bound of {bound:.0f} s; its last log line: {self.last[:300]}")
            code = None
        return code, time.perf_counter() - self.started


def _cluster_state(address: str) -> tuple[int, dict]:
    """The scheduler's task count once its releases are in (at most 30 s), and each worker's memory."""
    from distributed import Client

    with Client(address, timeout="30s") as client:
        deadline = time.monotonic() + 30
        while (tasks := client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))) and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        memory = client.run(lambda dask_worker: (os.getpid(), dask_worker.monitor.get_process_memory()))
    return tasks, memory


def _soak(tmp: str, n_fits: int, n_faults: int, rows: int, rng: random.Random) -> harness.Result:
    from dasktree.testing.hooks import arm
    from dasktree.testing.cluster import cluster_processes

    paths = _write_data(tmp, rows)
    names = list(CONFIGS)
    at_fault = dict(zip(sorted(rng.sample(range(len(names), n_fits), n_faults)),
                        (KINDS[i % len(KINDS)] for i in range(n_faults))))
    runs, references, ref_seconds = [], {}, {}
    recent: dict[str, float] = {}  # each configuration's last undisturbed fit: the machine's speed now
    memory_of: dict[int, list] = {}  # worker pid -> (fit, configuration, resident bytes) after each fit
    tasks_left = []
    started = time.perf_counter()
    with cluster_processes(2) as cluster:
        for name in names:  # references (the first fit of each also compiles the workers' kernels)
            dataset, args = CONFIGS[name]
            out = os.path.join(tmp, f"reference-{name}.json")
            for _ in range(2):
                code, seconds = Fit(paths[dataset], args, out, cluster.address).finish(600)
                assert code == 0, f"reference fit of {name} failed"
            references[name], ref_seconds[name] = open(out, "rb").read(), seconds
        for i in range(n_fits):
            if time.perf_counter() - started > 60 * MINUTES:
                print(f"SOAK_MINUTES={MINUTES:g} reached: {i} of {n_fits} fits done", flush=True)
                break
            name = names[i % len(names)]
            dataset, args = CONFIGS[name]
            kind = at_fault.get(i)
            out = os.path.join(tmp, f"fit-{i}.json")
            bound = max(120.0, 10 * max(ref_seconds[name], recent.get(name, 0.0)))
            run = _one(kind, paths[dataset], args, out, cluster, bound, rng, os.path.join(tmp, f"ckpt-{i}"), arm, tmp, i)
            run.update(fit=i, config=name, load=os.getloadavg()[0], identical=run["final"] == 0 and open(out, "rb").read() == references[name],
                       added=run["seconds"] - ref_seconds[name])
            tasks, memory = _cluster_state(cluster.address)
            tasks_left.append(tasks)
            for pid, rss in memory.values():
                memory_of.setdefault(pid, []).append((i, name, rss))
            if kind is None and run["final"] == 0:
                recent[name] = run["seconds"]
            runs.append(run)
            if run["exit"] is None or run["final"] is None:
                print(f"fit {i}: {run.get('errors')}", flush=True)
            print(f"fit {i} {name} {kind or '-'}: exit {run['exit']} final {run['final']} "
                  f"identical {run['identical']} {run['seconds']:.1f}s tasks {tasks}", flush=True)
    drift = {pid: d for pid, readings in memory_of.items() if (d := drift_of(readings)) is not None}
    return _report(runs, ref_seconds, tasks_left, drift, n_fits, n_faults, rows, time.perf_counter() - started,
                   memory_of)


MIN_READINGS = 6  # a worker with fewer readings (restarted late) says nothing of growth


def warmed(readings: list[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    """A worker's readings from the first taken once it has served every configuration it serves: a new
    worker's first fits import the libraries and load the kernels the next configurations need (its
    first reading, after an F7 fit of a fresh process, is less than half of what it holds from its
    third fit on), which is no growth per fit."""
    configs = {r[1] for r in readings}
    seen: set = set()
    for i, r in enumerate(readings):
        seen.add(r[1])
        if seen == configs:
            return readings[i:]
    return []


def drift_of(readings: list[tuple[int, str, int]]) -> dict | None:
    """A worker's memory drift from its readings (fit, configuration, resident bytes), in fit order,
    after its warm-up (:func:`warmed`): ``trend``, the rise of the least-squares line through the
    readings less their configuration's mean, from the first fit to the last, over the mean reading;
    ``endpoints``, per configuration read at least twice, the last reading over the first, the largest
    rise. None with fewer than :data:`MIN_READINGS` readings after the warm-up."""
    import numpy as np

    readings = warmed(readings)
    if len(readings) < MIN_READINGS:
        return None
    fit = np.array([r[0] for r in readings], dtype=np.float64)
    config = np.array([r[1] for r in readings])
    rss = np.array([r[2] for r in readings], dtype=np.float64)
    level = rss.copy()
    for c in np.unique(config):
        level[config == c] -= rss[config == c].mean()
    slope = np.polyfit(fit, level, 1)[0] if np.ptp(fit) > 0 else 0.0
    ends = [rss[config == c][-1] / rss[config == c][0] - 1 for c in np.unique(config) if (config == c).sum() >= 2]
    return {"trend": float(slope * np.ptp(fit) / rss.mean()), "endpoints": float(max(ends, default=0.0)),
            "readings": len(readings)}


def _one(kind, data, args, out, cluster, bound, rng, checkpoint, arm, tmp, i) -> dict:
    """One fit, with its fault and its rerun: exit is the first run's code, final the last's."""
    from distributed import Client

    if kind == "worker":
        stage = rng.choice(STAGES)
        at = 0 if stage == "summary" else 1 if stage == "encode" else rng.randint(1, 4)
        marker = os.path.join(tmp, f"killed-{i}")
        with Client(cluster.address, timeout="30s") as client:
            client.run(arm, f"{stage}:{at}:{marker}")
        fit = Fit(data, args, out, cluster.address)
        code, seconds = fit.finish(bound)
        with Client(cluster.address, timeout="30s") as client:
            client.run(arm, None)
            client.wait_for_workers(2, timeout=120)
        return dict(kind=f"worker ({stage}, pass {at})", fired=os.path.exists(marker), exit=code, final=code,
                    seconds=seconds, errors=fit.errors[-1:])
    if kind is None:
        fit = Fit(data, args, out, cluster.address)
        code, seconds = fit.finish(bound)
        return dict(kind=None, fired=False, exit=code, final=code, seconds=seconds, errors=fit.errors[-1:])
    after = rng.randint(1, 3)
    env = {"DASKTREE_LOST_SECONDS": "10"}
    fit = Fit(data, [*args, "--checkpoint", checkpoint], out, cluster.address, env)
    fired = fit.until_pass(after)
    released = None
    if fired and kind == "client":
        fit.proc.kill()
        killed = time.perf_counter()
        _cluster_state(cluster.address)  # waits for the scheduler to hold no task
        released = time.perf_counter() - killed
    elif fired:
        cluster.kill_scheduler()
    code, seconds = fit.finish(bound)
    if fired and kind == "scheduler":
        cluster.restart()  # the workers end with their scheduler: a deployment starts both again
    rerun = Fit(data, [*args, "--checkpoint", checkpoint], out, cluster.address)
    final, more = rerun.finish(bound)
    return dict(kind=f"{kind} (after pass {after})", fired=fired, exit=code, final=final, seconds=seconds + more,
                released=released, errors=fit.errors[-1:] + rerun.errors[-1:])


def _report(runs, ref_seconds, tasks_left, drift, n_fits, n_faults, rows, total, memory_of) -> harness.Result:
    faulted = [r for r in runs if r["kind"]]
    fired = [r for r in faulted if r["fired"]]
    identical = sum(r["identical"] for r in runs)
    hangs = sum(r["exit"] is None or r["final"] is None for r in runs)
    exits = collections.Counter(str(r["exit"]) for r in runs)
    added = {kind: harness.median(r["added"] for r in fired if r["kind"].startswith(kind))
             for kind in ("worker", "client", "scheduler") if any(r["kind"].startswith(kind) for r in fired)}
    released = [r["released"] for r in fired if r.get("released") is not None]
    worst = max((d["trend"] for d in drift.values()), default=float("nan"))
    worst_ends = max((d["endpoints"] for d in drift.values()), default=float("nan"))
    loads = [r["load"] for r in runs]
    hung = "\n".join(f"- fit {r['fit']} ({r['config']}, {r['kind'] or 'no fault'}): {'; '.join(r.get('errors') or [])}"
                     for r in runs if r["exit"] is None or r["final"] is None)
    rows_md = "\n".join(f"| {r['fit']} | {r['config']} | {r['kind']} | {'yes' if r['fired'] else 'no'} | {r['exit']} | "
                        f"{r['final']} | {'yes' if r['identical'] else 'NO'} | {r['added']:+.1f} |" for r in faulted)
    markdown = f"""{n_fits} fits in a row on one `dask scheduler` + 2 single-threaded `dask worker` processes
(nannies) on 127.0.0.1, a shared 2-core machine: configurations in turn, Agrawal F7 ({rows:,} rows,
`--max-depth 8`), Agrawal F2 ({rows:,} rows, `--cv 5 --max-depth 6`), 40 continuous columns
({rows // 2:,} rows, every value distinct, `--max-depth 6`). Reference fits (undisturbed):
{", ".join(f"{k} {v:.1f} s" for k, v in ref_seconds.items())}. Whole soak: {total / 60:.1f} min.

Fits: {len(runs)}{"" if len(runs) == n_fits else f" of the {n_fits} planned (SOAK_MINUTES={MINUTES:g} reached)"}; identical to their reference: **{identical}/{len(runs)}**; hangs: {hangs};
first exits by code: {dict(sorted(exits.items()))} (75: the scheduler killed, as it must be).
Faults: {len(faulted)} planned, {len(fired)} fired (a worker fault armed for a pass the fit did not reach
does not fire). Median time added per fault (the faulted fit and its rerun, less the reference):
{", ".join(f"{k} {v:+.1f} s" for k, v in added.items())}. A killed client's holders, data and tasks
were released in a median {harness.median(released) if released else float('nan'):.2f} s.
Tasks left on the scheduler after a fit: max {max(tasks_left)}. Workers' memory drift (the trend of their
readings after each fit once it has served every configuration, each configuration's mean taken out, first
fit to last, over their mean memory):
worst **{worst:+.1%}** ({len(drift)} worker processes with at least {MIN_READINGS} such readings, median
{harness.median([d["readings"] for d in drift.values()]) if drift else 0:.0f} readings); the last reading
against the first after the same configuration: worst {worst_ends:+.1%}.
The machine's 1-minute load average at the end of each fit: median {harness.median(loads):.1f}, max {max(loads):.1f}
(2 cores; the bound of a run follows the machine's speed, see the module's docstring).
{("Runs past their bound, with the last log line read:" + chr(10) + hung) if hung else ""}

| fit | config | fault | fired | exit | exit of the rerun / the fit | same bytes | added s |
|---|---|---|---|---|---|---|---|
{rows_md}

The issue's size: `python -m benchmarks.soak` (200 fits, 40 faults, 100,000 rows), on a quiet machine.
"""
    return harness.Result(
        summary=[("fits identical to their reference", f"{identical}/{len(runs)} ({hangs} hangs, {len(fired)} faults)"),
                 ("tasks left / memory drift (trend)", f"max {max(tasks_left)} / {worst:+.1%}"),
                 ("time added per fault", ", ".join(f"{k} {v:+.1f} s" for k, v in added.items()))],
        markdown=markdown,
        figures={"fits": n_fits, "fits_done": len(runs), "faults": n_faults, "rows": rows, "runs": runs, "reference_seconds": ref_seconds,
                 "tasks_left": tasks_left, "drift": {str(k): v for k, v in drift.items()}, "hangs": hangs,
                 "memory": {str(k): v for k, v in memory_of.items()},
                 "identical": identical, "exits": dict(exits), "added_seconds": added, "released_seconds": released,
                 "total_seconds": total},
    )


def rerender(path: str | None = None) -> None:
    """Write ``results/soak.md`` and ``soak.json`` again from the saved runs and memory readings (this
    module's analysis of them, as changed since), keeping the stamp of their measurement; RESULTS.md too."""
    record = harness.saved(NAME, path)
    r = record["figures"]
    memory_of = {pid: [tuple(x) for x in readings] for pid, readings in r["memory"].items()}
    drift = {pid: d for pid, readings in memory_of.items() if (d := drift_of(readings)) is not None}
    harness.rewrite(NAME, record, _report(r["runs"], r["reference_seconds"], r["tasks_left"], drift, r["fits"],
                                          r["faults"], r["rows"], r["total_seconds"], memory_of))


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
