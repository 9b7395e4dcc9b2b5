"""Core learner benchmark (issue: one pass per level over partitioned Parquet).

For Agrawal data (F2, 5% perturbation) at 1M and 4M rows in 16 Parquet files,
fits a depth-10 tree on a 2-process LocalCluster (started as dasktree starts
its own, :func:`dasktree.engine.cluster.local_cluster`; ``--dask-malloc`` keeps Dask's
``MALLOC_TRIM_THRESHOLD_`` on the workers instead) and reports, per level, the
pass time beside the pyarrow scan floor (reading the same columns once, warm
cache); scikit-learn's DecisionTreeClassifier(max_depth=10) fit time on the
same data in memory, with its load time counted separately; and the peak
memory (RSS of the process and all its children: client, scheduler, workers)
of both. Each measurement runs in a fresh subprocess so peaks do not mix.
Before the measured fit the workers are warmed by small fits (imports and
compiled kernels loaded once, as on a long-running cluster: :func:`warm_workers`);
the cluster start-up and that warm-up are reported apart.

Targets, as ratios measured in the same run:
  level pass (depth <= 10) / scan floor        <= 2
  peak memory 4M / peak memory 1M              <= 1.3
  dasktree fit 4M / scikit-learn fit 4M        <= 3

Usage: python benchmarks/bench_core.py [--sizes 1000000 4000000] [--files 16] [--repeat 3] [--dask-malloc]
       [--name core]
Writes benchmarks/results/NAME.json and NAME.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from results_io import write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

FEATURES = ["salary", "commission", "age", "elevel", "car", "zipcode", "hvalue", "hyears", "loan"]


class PeakRSS:
    """Peak resident memory of this process and all its descendants, sampled every 20 ms."""

    def __init__(self):
        import psutil

        self.root = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        import psutil

        total = 0
        for p in [self.root, *self.root.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            time.sleep(0.02)

    def __enter__(self):
        self.baseline = self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


DASK_MALLOC = "DASKTREE_BENCH_DASK_MALLOC"  # set: the workers keep Dask's MALLOC_TRIM_THRESHOLD_
REPEAT = "DASKTREE_BENCH_REPEAT"  # fits per size on the one cluster (their median is reported)


def start_cluster():
    """The benchmarks' 2-process cluster (one thread each), as dasktree starts one; with
    ``$DASKTREE_BENCH_DASK_MALLOC`` set, with Dask's default worker environment instead."""
    import logging

    from distributed import Client, LocalCluster

    from dasktree.engine.cluster import local_cluster

    if os.environ.get(DASK_MALLOC):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)
    else:
        cluster = local_cluster(n_workers=2)
    return cluster, Client(cluster, direct_to_workers=True)  # as dasktree's own client of its LocalCluster


def worker_setup() -> str:
    return ("Dask's default worker environment (MALLOC_TRIM_THRESHOLD_=65536)" if os.environ.get(DASK_MALLOC)
            else "workers as dasktree starts them (MALLOC_TRIM_THRESHOLD_ unset)")


def add_malloc_flag(parser) -> None:
    parser.add_argument("--dask-malloc", action="store_true",
                        help="keep Dask's MALLOC_TRIM_THRESHOLD_=65536 on the workers (dasktree's own cluster unsets it)")


def apply_malloc_flag(args) -> None:
    if args.dask_malloc:
        os.environ[DASK_MALLOC] = "1"  # inherited by the measuring subprocesses


def warm_workers(client) -> float:
    """Small fits on the cluster before measuring: the workers import dasktree and load its
    compiled kernels once, as on a long-running cluster. Returns seconds.

    Two 2,000-row fits (plain and 2-fold CV) import everything, but left kernels unloaded on
    one worker or both: the split scan on the worker that searched nothing, and the
    counting order of rows grouped by node, which only a histogram over 8 MB uses. A
    measured first fit then loaded them from numba's cache (15-45 ms at 1M rows). So a
    50,000-row unstable (F7, 5% perturbation) 10-fold forest and plain tree of depth 10 follow:
    after them a 1M-row F7 forest or plain fit, or a 4M-row F2 forest, loads no kernel
    signature on any worker (checked by listing every dispatcher's signatures before and
    after). The workers keep about 30-45 MB more after them."""
    from dasktree import fit

    t = time.perf_counter()
    path = ensure_data(2000, 2)
    fit(path, target="class", max_depth=4, client=client)
    fit(path, target="class", max_depth=4, cv=2, client=client)
    unstable = ensure_data(50_000, 2, function=7)
    fit(unstable, target="class", max_depth=10, cv=10, client=client)
    fit(unstable, target="class", max_depth=10, client=client)
    return time.perf_counter() - t


def ensure_data(rows: int, files: int, function: int = 2, perturbation: float = 0.05) -> str:
    from dasktree.datasets import agrawal

    path = os.path.join(HERE, "data", f"agrawal-f{function}-p{round(perturbation * 100):02d}-{rows}-{files}")
    if not os.path.isdir(path) or len(os.listdir(path)) != files:
        agrawal.write_parquet(path, rows, n_files=files, function=function, perturbation=perturbation, seed=0,
                              overwrite=True)
    return path


def scan_floor(path: str, repeat: int = 3) -> float:
    import pyarrow.parquet as pq

    pq.read_table(path, columns=FEATURES + ["class"])  # warm the page cache
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        pq.read_table(path, columns=FEATURES + ["class"])
        best = min(best, time.perf_counter() - t)
    return best


def measure_dasktree(path: str) -> dict:
    from dasktree import DaskTreeClassifier

    t = time.perf_counter()
    cluster, client = start_cluster()
    startup = time.perf_counter() - t
    warm = warm_workers(client)
    fits, runs = [], []
    with PeakRSS() as memory:  # the peak over all the fits
        for _ in range(int(os.environ.get(REPEAT, "1"))):
            t = time.perf_counter()
            clf = DaskTreeClassifier(max_depth=10, client=client).fit(path, target="class")
            fits.append(time.perf_counter() - t)
            runs.append(clf.run_)
    client.close()
    cluster.close()
    levels = [[run["levels"][i] for run in runs] for i in range(len(runs[0]["levels"]))]
    return {
        "cluster_startup": startup,
        "warm_up": warm,
        "fit": _median(fits),
        "fits": [round(x, 3) for x in fits],
        "pass0": _median([run["seconds"]["pass0"] for run in runs]),
        "levels": [{"level": lv[0]["level"], "nodes": lv[0]["frontier"], "seconds": _median([x["seconds"] for x in lv]),
                    "runs": [round(x["seconds"], 4) for x in lv]} for lv in levels],
        "passes": clf.report_["passes"],
        "depth": clf.report_["depth"],
        "training_accuracy": clf.report_["training_accuracy"],
        "peak_rss": memory.peak,
    }


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def measure_sklearn(path: str) -> dict:
    import numpy as np
    import pyarrow.parquet as pq
    from sklearn.tree import DecisionTreeClassifier

    with PeakRSS() as memory:
        t = time.perf_counter()
        frame = pq.read_table(path, columns=FEATURES + ["class"]).to_pandas()
        X = frame[FEATURES].to_numpy(dtype=np.float32)
        y = frame["class"].to_numpy()
        load = time.perf_counter() - t
        t = time.perf_counter()
        sk = DecisionTreeClassifier(max_depth=10, random_state=0).fit(X, y)
        fit = time.perf_counter() - t
    return {"load": load, "fit": fit, "training_accuracy": float(sk.score(X, y)), "peak_rss": memory.peak}


def run_child(script: str, kind: str, path: str) -> dict:
    """Run ``script --measure kind --data path`` in a fresh process; its last stdout line is JSON."""
    out = subprocess.run([sys.executable, script, "--measure", kind, "--data", path],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _child(kind: str, path: str) -> dict:
    return run_child(__file__, kind, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 4_000_000])
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--measure", choices=["dasktree", "sklearn", "scan"], help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--name", default="core", help="results file stem in benchmarks/results/")
    parser.add_argument("--repeat", type=int, default=3,
                        help="fits per size on one cluster; the median of each level and of the fit is reported "
                             "(the machines are shared and one run can be slow)")
    add_malloc_flag(parser)
    args = parser.parse_args()
    apply_malloc_flag(args)
    os.environ[REPEAT] = str(max(1, args.repeat))  # inherited by the measuring subprocess
    if args.measure:
        measure = {"dasktree": measure_dasktree, "sklearn": measure_sklearn,
                   "scan": lambda path: {"scan_floor": scan_floor(path)}}[args.measure]
        result = measure(args.data)
        print(json.dumps(result))
        return

    results = {}
    for rows in args.sizes:
        path = ensure_data(rows, args.files)
        # the scan floor in a process of its own: pyarrow's memory pool keeps what it read,
        # which must not count in the fit's peak memory
        results[rows] = {"dasktree": {**_child("dasktree", path), **_child("scan", path)},
                         "sklearn": _child("sklearn", path)}
    report(results, args.name)


def report(results: dict, name: str = "core") -> None:
    lines = ["# Core learner benchmark", "",
             "Agrawal F2 with 5% perturbation, 16 Parquet files, depth 10, 2-process LocalCluster "
             f"(2 cores), {worker_setup()}. Ratios are measured in the same run; times are the median of "
             f"{os.environ.get(REPEAT, '1')} fits on one cluster (every run in the JSON), peak memory the "
             "largest over them.", ""]
    lines += ["## Level pass time / pyarrow scan floor", "",
              "| rows | scan floor s | " + " | ".join(f"L{i}" for i in range(10)) + " | max ratio |",
              "|---|---|" + "---|" * 10 + "---|"]
    summary = {}
    for rows, r in results.items():
        d = r["dasktree"]
        ratios = [lv["seconds"] / d["scan_floor"] for lv in d["levels"]]
        summary[rows] = {"max_level_ratio": max(ratios), "median_level_ratio": sorted(ratios)[len(ratios) // 2]}
        cells = [f"{lv['seconds']:.2f}s ({x:.1f}x, {lv['nodes']}n)" for lv, x in zip(d["levels"], ratios)]
        lines.append(f"| {rows:,} | {d['scan_floor']:.3f} | " + " | ".join(cells) + f" | {max(ratios):.1f} |")
    lines += ["", "## Fit time and memory", "",
              "| rows | dasktree fit s (pass 0) | cluster start s (warm-up fit) | sklearn load s | sklearn fit s | "
              "fit / sklearn fit | fit / (load + fit) | dasktree peak MB | sklearn peak MB | accuracy ours / sklearn |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for rows, r in results.items():
        d, s = r["dasktree"], r["sklearn"]
        summary[rows].update(fit_ratio=d["fit"] / s["fit"], fit_ratio_with_load=d["fit"] / (s["load"] + s["fit"]))
        lines.append(
            f"| {rows:,} | {d['fit']:.2f} ({d['pass0']:.2f}) | {d['cluster_startup']:.2f} ({d['warm_up']:.2f}) | "
            f"{s['load']:.2f} | "
            f"{s['fit']:.2f} | {d['fit'] / s['fit']:.2f} | {d['fit'] / (s['load'] + s['fit']):.2f} | "
            f"{d['peak_rss'] / 2**20:.0f} | {s['peak_rss'] / 2**20:.0f} | "
            f"{d['training_accuracy']:.4f} / {s['training_accuracy']:.4f} |")
    sizes = sorted(results)
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        memory_ratio = results[large]["dasktree"]["peak_rss"] / results[small]["dasktree"]["peak_rss"]
        summary["memory_ratio"] = memory_ratio
        lines += ["", f"Peak memory {large:,} / {small:,} rows: **{memory_ratio:.2f}x** (target <= 1.3)."]
    big = sizes[-1]
    lines += [f"Max level pass / scan floor at {big:,} rows: **{summary[big]['max_level_ratio']:.1f}x** (target <= 2).",
              f"Fit / scikit-learn fit at {big:,} rows: **{summary[big]['fit_ratio']:.2f}x** (target <= 3); "
              f"with scikit-learn's load time: {summary[big]['fit_ratio_with_load']:.2f}x."]
    text = "\n".join(lines) + "\n"
    print(text)
    write_results(name, text, {"results": {str(k): v for k, v in results.items()},
                               "summary": {str(k): v for k, v in summary.items()}})


if __name__ == "__main__":
    main()
