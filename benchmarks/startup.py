"""Whole-process `dasktree fit` (cold and warm) beside LightGBM's and scikit-learn's scripts.

Each command is a fresh process timed from its start to its exit (imports, reading the Parquet
files, training, writing), alternated with the others round after round, on Agrawal F7 (5%
perturbation) in 16 Parquet files, depth 10, entropy, 255 bins:

* ``dasktree fit`` as a user types it (the in-process default), with ``--cv 10``, and with
  ``--scheduler processes`` (the 2-process LocalCluster, for contrast);
* the same fit *cold*: an empty numba cache (``NUMBA_CACHE_DIR`` a new empty folder each
  run), as the first fit after ``pip install`` without ``dasktree warm``;
* LightGBM: a script importing it, loading the Parquet files with pyarrow and training one tree
  of the same depth (``num_leaves`` 1024, ``max_bin`` 255, ``min_data_in_leaf`` 1), and one with
  ``lgb.cv(nfold=10)`` and the final tree;
* scikit-learn: loading the files and ``DecisionTreeClassifier(max_depth=10).fit``.

Medians of the rounds; ratios are of medians measured in the same run. Peak memory is the
resident memory of the process and its children, sampled every 20 ms.
"""

from __future__ import annotations

import os
import sys
import tempfile

from benchmarks import harness

NAME = "startup"
CLAIM = ("A whole `dasktree fit` process on 1M rows is at most as long as LightGBM's one-tree script, "
         "and with `--cv 10` at most half its `cv(nfold=10)` script")

LIGHTGBM = """
import glob, sys
import lightgbm as lgb
import pyarrow.parquet as pq
table = pq.read_table(sorted(glob.glob(sys.argv[1] + "/*.parquet")))
y = table.column("class").to_numpy()
X = table.drop(["class"]).to_pandas()
params = dict(objective="binary", max_depth=10, num_leaves=1024, max_bin=255, min_data_in_leaf=1,
              min_sum_hessian_in_leaf=0.0, learning_rate=1.0, verbose=-1, num_threads=int(sys.argv[3]))
data = lgb.Dataset(X, y)
if sys.argv[2] == "cv":
    lgb.cv(params, data, num_boost_round=1, nfold=10, stratified=False, seed=0)
lgb.train(params, data, num_boost_round=1)
"""

SKLEARN = """
import glob, sys
import pyarrow.parquet as pq
from sklearn.tree import DecisionTreeClassifier
table = pq.read_table(sorted(glob.glob(sys.argv[1] + "/*.parquet")))
y = table.column("class").to_numpy()
X = table.drop(["class"]).to_pandas().to_numpy()
DecisionTreeClassifier(max_depth=10, criterion="entropy", random_state=0).fit(X, y)
"""


def dataset(rows: int, files: int = 16) -> str:
    """Agrawal F7 with 5% perturbation as Parquet under benchmarks/data (made once)."""
    from dasktree.datasets.agrawal import write_parquet

    path = os.path.join(harness.DATA, f"agrawal-f7-p05-{rows}-{files}")
    if not os.path.isdir(path):
        write_parquet(path, rows, n_files=files, function=7, perturbation=0.05, seed=0)
    return path


def run(quick: bool) -> harness.Result:
    rows, repeat = (100_000, 1) if quick else (1_000_000, 3)
    data = dataset(rows)
    cores = str(len(os.sched_getaffinity(0)))
    with tempfile.TemporaryDirectory(prefix="dasktree-startup-") as tmp:
        scripts = {}
        for name, text in (("lightgbm", LIGHTGBM), ("sklearn", SKLEARN)):
            scripts[name] = os.path.join(tmp, f"peer_{name}.py")  # not lightgbm.py: it would shadow the package
            with open(scripts[name], "w") as f:
                f.write(text)
        fit = [sys.executable, "-m", "dasktree.cli", "fit", data, "--target", "class", "--max-depth", "10",
               "--criterion", "entropy", "--quiet", "--overwrite"]
        cold = os.path.join(tmp, "cold.py")  # a new empty numba cache for every run of the cold fit
        with open(cold, "w") as f:
            f.write("import os, subprocess, sys, tempfile\n"
                    "with tempfile.TemporaryDirectory() as cache:\n"
                    "    sys.exit(subprocess.call(sys.argv[1:], env={**os.environ, 'NUMBA_CACHE_DIR': cache}))\n")
        out = os.path.join(tmp, "m{}.json")
        commands = {
            "dasktree fit": fit + ["--out", out.format(1)],
            "dasktree fit --cv 10": fit + ["--cv", "10", "--out", out.format(2)],
            "dasktree fit --scheduler processes": fit + ["--scheduler", "processes", "--out", out.format(3)],
            "dasktree fit, empty numba cache": [sys.executable, cold, *fit, "--out", out.format(4)],
            "LightGBM one tree": [sys.executable, scripts["lightgbm"], data, "one", cores],
            "LightGBM cv(nfold=10) + final tree": [sys.executable, scripts["lightgbm"], data, "cv", cores],
            "scikit-learn fit": [sys.executable, scripts["sklearn"], data],
        }
        runs = {}
        for _ in range(repeat):  # each round writes its models anew
            for name, argv in commands.items():
                for i in range(1, 5):
                    if os.path.exists(out.format(i)):
                        os.remove(out.format(i))
                runs.setdefault(name, []).extend(harness.alternate({name: argv}, 1)[name])
    seconds = {name: harness.median(r["seconds"] for r in rs) for name, rs in runs.items()}
    peaks = {name: max(r["peak_bytes"] for r in rs) for name, rs in runs.items()}
    lgb_one, lgb_cv = seconds["LightGBM one tree"], seconds["LightGBM cv(nfold=10) + final tree"]
    ratios = {
        "fit / LightGBM one tree": seconds["dasktree fit"] / lgb_one,
        "fit --cv 10 / LightGBM cv": seconds["dasktree fit --cv 10"] / lgb_cv,
        "fit on a 2-process LocalCluster / fit": seconds["dasktree fit --scheduler processes"] / seconds["dasktree fit"],
        "cold fit (empty numba cache) / warm fit": seconds["dasktree fit, empty numba cache"] / seconds["dasktree fit"],
        "scikit-learn fit / fit": seconds["scikit-learn fit"] / seconds["dasktree fit"],
    }
    lines = [f"{rows:,} Agrawal F7 rows in 16 Parquet files, depth 10, entropy, 255 bins; median of {repeat} "
             "alternated rounds, each command a fresh process (on a shared machine: ratios, not seconds).", "",
             "| command | seconds (median) | peak memory, process tree |", "| --- | --- | --- |"]
    lines += [f"| {name} | {seconds[name]:.2f} | {peaks[name] / 2**20:.0f} MiB |" for name in commands]
    lines += ["", "| ratio | value | target |", "| --- | --- | --- |"]
    targets = {"fit / LightGBM one tree": "<= 1.0", "fit --cv 10 / LightGBM cv": "<= 0.5",
               "cold fit (empty numba cache) / warm fit": "<= 2.0"}
    lines += [f"| {k} | {v:.2f}x | {targets.get(k, '')} |" for k, v in ratios.items()]
    summary = [(f"whole-process fit, {rows:,} rows / LightGBM one-tree script", f"{ratios['fit / LightGBM one tree']:.2f}x"),
               ("whole-process fit --cv 10 / LightGBM cv(nfold=10) script", f"{ratios['fit --cv 10 / LightGBM cv']:.2f}x"),
               ("first fit with an empty numba cache / warm fit",
                f"{ratios['cold fit (empty numba cache) / warm fit']:.2f}x")]
    figures = {"rows": rows, "repeat": repeat, "seconds": seconds, "peak_bytes": peaks, "ratios": ratios,
               "runs": {name: [r["seconds"] for r in rs] for name, rs in runs.items()}}
    return harness.Result(summary, "\n".join(lines) + "\n", figures)


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
