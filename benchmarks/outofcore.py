"""Out of core in one process: the peak memory of a streamed fit is set by threads, row groups and histograms, not rows.

``dasktree fit --no-cache`` (every pass streams the Parquet row groups through a
pool of threads in the command's own process, :mod:`dasktree.engine.stream_runner`)
at N and 10N rows: the peak resident memory of the whole process tree (sampled
every 20 ms, :class:`benchmarks.harness.PeakRSS`) and the wall time, on Agrawal F2
(62,500-row files: a row group per file, the same size at every N) and on continuous
columns (50 float64 columns of normal noise, every value distinct, 50,000-row
files), beside the cached in-process fit (``dasktree fit``, Parquet read once) and
LightGBM's one-tree script on the larger size. At 10N Agrawal rows the streamed fit
also runs on the same rows in 16 files (one row group of 625,000 rows each): the
peak follows the row group, as the formula says. At full size, 20M continuous rows
(8 GB of values) are fitted streamed under ``--memory-limit 1GB`` once (written,
fitted, removed): the rows-vs-peak curve's last point.
Each streamed peak is set beside what the README's formula predicts from the
fit's own shape (:func:`predicted`). Runs alternate; the peak is the largest
over the runs, the time the median.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

from benchmarks import harness

NAME = "outofcore"
CLAIM = "Out of core in one process: peak memory flat in rows, set by threads x row groups + histograms"
DEPTH = {"agrawal": 10, "continuous": 8}
FILE_ROWS = 50_000
COLUMNS = 50
AGRAWAL_FILE_ROWS = 62_500  # 16 files at 1M rows: the row group (a file's) the same at every size
LARGE_CONTINUOUS = 20_000_000  # fitted streamed under LIMIT at full size
LIMIT = "1GB"

LIGHTGBM = """
import sys, numpy as np, pyarrow.parquet as pq, lightgbm as lgb
table = pq.read_table(sys.argv[1])
y = table.column("y").to_numpy()
X = np.column_stack([table.column(c).to_numpy() for c in table.column_names if c != "y"])
del table
params = {"objective": "binary", "max_depth": int(sys.argv[2]), "num_leaves": 2 ** int(sys.argv[2]),
          "max_bin": 255, "learning_rate": 1.0, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0,
          "num_threads": 0, "seed": 0, "verbose": -1}
lgb.train(params, lgb.Dataset(X, y), num_boost_round=1)
"""


def continuous(rows: int, where: str | None = None) -> str:
    """50 float64 columns of normal noise and a class, in 50,000-row files under ``benchmarks/data/``
    (or ``where``)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.path.join(where or harness.DATA, f"continuous-{COLUMNS}-{rows}")
    n_files = rows // FILE_ROWS
    if os.path.isdir(path) and len(os.listdir(path)) == n_files:
        return path
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(n_files):
        x = rng.standard_normal((FILE_ROWS, COLUMNS))
        y = (x[:, 0] + x[:, 1] * x[:, 2] + 0.5 * rng.standard_normal(FILE_ROWS) > 0).astype(np.int64)
        pq.write_table(pa.table({**{f"x{j}": x[:, j] for j in range(COLUMNS)}, "y": y}),
                       os.path.join(path, f"part-{i:05d}.parquet"))
    return path


def predicted(path: str, target: str, model: dict) -> float:
    """The README's formula: BASE + threads x piece rows x row bytes + (threads + 2) x the largest
    level's histogram (int64 cells: frontier x bins x classes x 8, within the memory plan's budget)."""
    from dasktree.engine.local_runner import cores
    from dasktree.engine.memory_plan import BASE_BYTES, HELD_HISTOGRAMS, MemoryPlan, _row_bytes
    from dasktree.engine.stream_runner import pieces_of
    from dasktree.io.schema import resolve_roles
    from dasktree.io.sources import open_source

    source, target = open_source(path, target=target)
    roles = resolve_roles(source.schema, target)
    threads = cores()
    piece = max(p.n_rows for p in pieces_of(source))
    plan = MemoryPlan.of(None, threads, piece, _row_bytes(source, roles))
    bins = sum(f["bins"] + 1 for f in model["report"]["features"])
    frontier = max(level["frontier"] for level in model["run"]["levels"]) if model["run"]["levels"] else 1
    histogram = min(frontier * bins * len(model["report"]["class_counts"]) * 8, plan.histogram_bytes)
    return BASE_BYTES + threads * plan.piece_bytes + (threads + HELD_HISTOGRAMS) * histogram


def _measure(kind: str, sizes: tuple[int, int], repeat: int, out: str) -> dict:
    figures: dict = {}
    for rows in sizes:
        path, target = ((harness.agrawal(rows, files=rows // AGRAWAL_FILE_ROWS), "class") if kind == "agrawal"
                        else (continuous(rows), "y"))
        fit = harness.dasktree_command("fit", path, "--target", target, "--out", out, "--overwrite",
                                       "--max-depth", str(DEPTH[kind]), "--quiet")
        commands = {"dasktree fit --no-cache": [*fit, "--no-cache"]}
        if rows == sizes[1]:
            if kind == "agrawal":  # the same rows in 16 files: a row group 10x larger
                commands["dasktree fit --no-cache, 16 files"] = harness.dasktree_command(
                    "fit", harness.agrawal(rows), "--target", target, "--out", out, "--overwrite",
                    "--max-depth", str(DEPTH[kind]), "--quiet", "--no-cache")
            commands["dasktree fit"] = fit
            commands["LightGBM one-tree script"] = (  # the peers' script for Agrawal's columns, else every column
                harness.job("lightgbm", path, DEPTH[kind]) if kind == "agrawal"
                else [sys.executable, "-c", LIGHTGBM, path, str(DEPTH[kind])])
        harness.run_process([*fit, "--no-cache", "--max-depth", "1"])  # not kept: numba's cache, page cache
        runs = harness.alternate(commands, repeat)
        figures[rows] = {name: {"peak_bytes": max(r["peak_bytes"] for r in rs),
                                "seconds": statistics.median(r["seconds"] for r in rs)} for name, rs in runs.items()}
        model = harness.last_json(harness.run_process([*fit, "--no-cache", "--json"]))  # its report and run
        figures[rows]["predicted_peak_bytes"] = predicted(path, target, model)
    return figures


def _largest(out: str) -> dict:
    """20M continuous rows (8 GB of values, written to a temporary directory and removed), fitted
    streamed once under ``--memory-limit LIMIT``: the peak of the process tree and the time."""
    import shutil

    where = tempfile.mkdtemp(prefix="dasktree-bench-20m-")
    try:
        path = continuous(LARGE_CONTINUOUS, where)
        fit = harness.dasktree_command("fit", path, "--target", "y", "--out", out, "--overwrite", "--max-depth",
                                       str(DEPTH["continuous"]), "--quiet", "--no-cache", "--memory-limit", LIMIT)
        [run] = harness.alternate({"dasktree fit --no-cache --memory-limit 1GB": fit}, 1).values()
        return {"peak_bytes": run[0]["peak_bytes"], "seconds": run[0]["seconds"]}
    finally:
        shutil.rmtree(where, ignore_errors=True)


def run(quick: bool) -> harness.Result:
    plans = {"agrawal": ((100_000, 1_000_000) if quick else (1_000_000, 10_000_000)),
             "continuous": ((100_000, 1_000_000) if quick else (400_000, 4_000_000))}
    repeat = 1 if quick else 2
    out = f"{tempfile.mkdtemp(prefix='dasktree-bench-')}/model.json"
    md = [f"Whole-process peak resident memory (MB, the largest of {repeat} runs) and seconds (median), 2 cores, "
          "the machine shared with other work. `--no-cache` streams the row groups every pass in the command's "
          "process; `dasktree fit` keeps the codes (Parquet read once).", ""]
    summary, figures = [], {}
    for kind, sizes in plans.items():
        f = figures[kind] = _measure(kind, sizes, repeat, out)
        small, large = sizes
        stream = "dasktree fit --no-cache"
        md += [f"**{kind}** (depth {DEPTH[kind]})", "",
               "| command | " + " | ".join(f"{r:,} rows MB (s)" for r in sizes) + " |", "|---|---|---|"]
        for name in f[large]:
            if name == "predicted_peak_bytes":
                continue
            cells = [f"{f[r][name]['peak_bytes'] / 2**20:.0f} ({f[r][name]['seconds']:.1f})" if name in f[r] else ""
                     for r in sizes]
            md.append(f"| `{name}` | " + " | ".join(cells) + " |")
        md.append("| formula's peak (streamed) | " + " | ".join(
            f"{f[r]['predicted_peak_bytes'] / 2**20:.0f}" for r in sizes) + " |")
        md.append("")
        summary += [
            (f"{kind}: streamed peak, {large:,} / {small:,} rows (MB at {large:,})",
             f"{harness.ratio(f[large][stream]['peak_bytes'], f[small][stream]['peak_bytes'])} "
             f"({f[large][stream]['peak_bytes'] / 2**20:.0f} MB)"),
            (f"{kind}: streamed time / cached in-process fit, {large:,} rows",
             harness.ratio(f[large][stream]["seconds"], f[large]["dasktree fit"]["seconds"])),
            (f"{kind}: streamed peak / LightGBM one-tree script's, {large:,} rows",
             harness.ratio(f[large][stream]["peak_bytes"], f[large]["LightGBM one-tree script"]["peak_bytes"])),
            (f"{kind}: streamed peak / the formula's, {large:,} rows",
             harness.ratio(f[large][stream]["peak_bytes"], f[large]["predicted_peak_bytes"])),
        ]
    if not quick:
        curve = figures["continuous"]
        big = curve[LARGE_CONTINUOUS] = _largest(out)
        small = plans["continuous"][0]
        points = "; ".join(f"{r:,} rows {(curve[r].get(stream) or curve[r])['peak_bytes'] / 2**20:.0f} MB"
                           for r in sorted(curve))
        md += [f"**continuous, {LARGE_CONTINUOUS:,} rows** (8 GB of values, written for the run and removed): "
               f"`dasktree fit --no-cache --memory-limit {LIMIT}` peaks at {big['peak_bytes'] / 2**20:.0f} MB "
               f"({big['peak_bytes'] / 1e9:.2f} GB) in {big['seconds']:.0f} s. Streamed peak against rows: {points}.", ""]
        summary.append((f"continuous: streamed peak, {LARGE_CONTINUOUS:,} rows under --memory-limit {LIMIT}",
                        f"{big['peak_bytes'] / 1e9:.2f} GB ({harness.ratio(big['peak_bytes'], curve[small][stream]['peak_bytes'])} "
                        f"the {small:,}-row peak)"))
    return harness.Result(summary, "\n".join(md), {k: {str(r): v for r, v in f.items()} for k, f in figures.items()})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
