"""The one small harness every benchmark claim shares.

A *claim* is one module of this folder that backs one line of docs/performance.md's
Performance table. It defines ``CLAIM`` (that line's words), ``NAME`` (the stem
of its results files) and ``run(quick: bool) -> Result``; run alone it is
``python -m benchmarks.NAME [--quick]``, and ``python -m benchmarks`` runs them
all (:mod:`benchmarks.__main__`). Results are regenerated, never accumulated:
``results/NAME.md`` and ``results/NAME.json`` are overwritten, each stamped with
the machine, the versions and the commit, and ``results/RESULTS.md`` gathers every
claim's summary rows.

Figures are ratios measured in the same run (a peer, a floor, a baseline),
never absolute times alone: the machines are shared and their speed drifts.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
DATA = os.path.join(HERE, "data")

PACKAGES = ("dasktree", "numpy", "pandas", "pyarrow", "dask", "distributed", "numba", "scikit-learn",
            "lightgbm", "psutil")


@dataclass
class Result:
    """What a claim measured: summary rows for RESULTS.md, its own table, and the raw figures."""

    summary: list[tuple[str, str]]  # (what, measured): one row each in RESULTS.md
    markdown: str  # the claim's own tables and notes (results/NAME.md, below the stamp)
    figures: dict = field(default_factory=dict)  # everything measured, for results/NAME.json


#: The load average (1, 5 and 15 minutes) when the claim's run began (:func:`main`); None outside one.
LOAD_AT_START: tuple[float, float, float] | None = None


def load_average() -> tuple[float, float, float] | None:
    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except OSError:
        return None


def stamp() -> dict:
    """The machine, its load average when the run began and when it was written (the machine is
    shared: the load is what the times were measured beside), the package versions and the commit a
    result was measured on."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        memory = None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "cores": os.cpu_count(),
                    "memory_gib": round(memory / 2**30, 1) if memory else None},
        "python": platform.python_version(),
        "versions": versions,
        "commit": commit,
        "load": {"start": LOAD_AT_START, "end": load_average()},
    }


def stamp_text(s: dict) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in s["versions"].items() if v)
    m = s["machine"]
    load = s.get("load") or {}
    said = "; ".join(f"{when} {' / '.join(f'{x:.1f}' for x in load[when])}" for when in ("start", "end")
                     if load.get(when))
    load_text = f" Load average (1 / 5 / 15 min): {said}." if said else ""
    return (f"Measured {s['date']} on {m['cores']} cores, {m['memory_gib']} GiB ({m['platform']}), "
            f"Python {s['python']}; {versions}; commit {s['commit']}.{load_text}\n")


def write(name: str, claim: str, result: Result, quick: bool = False, measured: dict | None = None) -> dict:
    """Overwrite ``results/NAME.md`` and ``results/NAME.json`` with ``result``, stamped (``measured``: the
    stamp of a measurement written again, else now's) and marked when measured at ``--quick`` sizes."""
    os.makedirs(RESULTS, exist_ok=True)
    s = measured or stamp()
    note = "Quick sizes (a smoke run, not the claim's sizes).\n\n" if quick else ""
    with open(os.path.join(RESULTS, f"{name}.md"), "w") as f:
        f.write(f"# {claim}\n\n{stamp_text(s)}\n{note}{result.markdown.rstrip()}\n")
    record = {"claim": claim, "stamp": s, "quick": quick, "summary": result.summary, "figures": result.figures}
    with open(os.path.join(RESULTS, f"{name}.json"), "w") as f:
        json.dump(record, f, indent=1, default=str)
    return record


def saved(name: str, path: str | None = None) -> dict:
    """The record ``results/NAME.json`` (or ``path``) keeps: claim, stamp, quick, summary, figures."""
    with open(path or os.path.join(RESULTS, f"{name}.json")) as f:
        return json.load(f)


def rewrite(name: str, record: dict, result: Result) -> None:
    """Write ``results/NAME.md`` and ``.json`` again with ``result``, a claim's analysis of the figures of
    ``record`` (:func:`saved`) as its module makes it now, keeping their measurement's stamp; RESULTS.md too."""
    write(name, record["claim"], result, quick=record["quick"], measured=record["stamp"])
    gather()


def gather() -> None:
    """Write results/RESULTS.md from the claims' JSON files, in the order of ``CLAIMS``."""
    lines = ["# dasktree benchmark results", "",
             "Each claim's figures are ratios measured in one run of it (the peers and floors alternated with "
             "dasktree); the date, machine, versions and commit of each are in its own file.", "",
             "| claim | what | measured | when |", "| --- | --- | --- | --- |"]
    from benchmarks import CLAIMS

    for name in CLAIMS:
        path = os.path.join(RESULTS, f"{name}.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            record = json.load(f)
        quick = " (quick sizes)" if record.get("quick") else ""
        lines += [f"| [{name}]({name}.md) | {what} | {measured} | {record['stamp']['date']}{quick} |"
                  for what, measured in record["summary"]]
    with open(os.path.join(RESULTS, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main(module) -> None:
    """``python -m benchmarks.NAME [--quick]``: run one claim and write its results. A claim with
    ``add_arguments(parser)`` takes options of its own (``run(quick, options)``); a run it calls
    partial (``partial(options)`` true: a subset of its learners or sets) prints and writes only
    where its options say (``results/NAME.md`` and ``.json`` are the whole claim's)."""
    global LOAD_AT_START
    LOAD_AT_START = load_average()
    parser = argparse.ArgumentParser(description=module.CLAIM)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run (not for the README)")
    if hasattr(module, "add_arguments"):
        module.add_arguments(parser)
    args = parser.parse_args()
    if not hasattr(module, "add_arguments"):
        result = module.run(quick=args.quick)
    else:
        result = module.run(quick=args.quick, options=args)
        if module.partial(args):
            for what, measured in result.summary:
                print(f"{what}: {measured}")
            return
    write(module.NAME, module.CLAIM, result, quick=args.quick)
    gather()
    for what, measured in result.summary:
        print(f"{what}: {measured}")


# ---------------------------------------------------------------- whole-process timing

class PeakRSS:
    """Peak resident memory of a process and all its descendants, sampled every 20 ms."""

    def __init__(self, pid: int | None = None):
        import psutil

        self.root = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        import psutil

        total = 0
        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            time.sleep(0.02)

    def __enter__(self) -> "PeakRSS":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def run_process(argv: list[str], env: dict | None = None, timeout: float = 1800) -> dict:
    """Run ``argv`` as a whole process: its wall seconds, the peak RSS of its process tree, and its
    exit code (stdout and stderr kept for the caller)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    with PeakRSS(proc.pid) as peak:
        out, err = proc.communicate(timeout=timeout)
    return {"seconds": time.perf_counter() - started, "peak_bytes": peak.peak, "returncode": proc.returncode,
            "stdout": out, "stderr": err}


def alternate(commands: dict[str, list[str]], repeat: int, env: dict | None = None,
              warmup: int = 0) -> dict[str, list[dict]]:
    """Run each named command ``repeat`` times, alternating (A B C A B C ...), so that a drift of the
    machine's speed falls on all of them alike; a failed run raises with its stderr. ``warmup`` rounds
    run first and are not kept (page cache, numba's on-disk cache of compiled kernels)."""
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for round_ in range(warmup + repeat):
        for name, argv in commands.items():
            r = run_process(argv, env=env)
            if r["returncode"] != 0:
                raise RuntimeError(f"{name}: exit {r['returncode']}: {r['stderr'][-2000:]}")
            print(f"  {name}: {r['seconds']:.2f} s{'' if round_ >= warmup else ' (warm-up)'}", flush=True)
            if round_ >= warmup:
                runs[name].append(r)
    return runs


def last_json(run: dict) -> dict:
    """The JSON object a measured process printed: its whole stdout, or else its last line."""
    try:
        return json.loads(run["stdout"])
    except json.JSONDecodeError:
        return json.loads(run["stdout"].strip().splitlines()[-1])


def median(values) -> float:
    values = sorted(values)
    n = len(values)
    return float(values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2)


def dasktree_command(*args: str) -> list[str]:
    """``dasktree ARGS`` as a user runs it: the console script beside the interpreter when installed."""
    script = os.path.join(os.path.dirname(sys.executable), "dasktree")
    return [script, *args] if os.path.exists(script) else [sys.executable, "-m", "dasktree.cli", *args]


def job(kind: str, *args: str) -> list[str]:
    """The argv of one whole-process job of :mod:`benchmarks.jobs` (a peer's script, a scan floor, ...)."""
    return [sys.executable, os.path.join(HERE, "jobs.py"), kind, *map(str, args)]


# ---------------------------------------------------------------- data

def agrawal(rows: int, function: int = 2, perturbation: float = 0.05, files: int = 16) -> str:
    """The Agrawal et al. (1993) dataset as ``files`` Parquet files under ``benchmarks/data/``
    (written once, seed 0; :func:`dasktree.datasets.agrawal.write_parquet`); returns its directory."""
    from dasktree.datasets import agrawal as generator

    path = os.path.join(DATA, f"agrawal-f{function}-p{round(perturbation * 100):02d}-{rows}-{files}")
    if not os.path.isdir(path) or len([f for f in os.listdir(path) if f.endswith(".parquet")]) != files:
        generator.write_parquet(path, rows, n_files=files, function=function, perturbation=perturbation, seed=0,
                                overwrite=True)
    return path


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x"
