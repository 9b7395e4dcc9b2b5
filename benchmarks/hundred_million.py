"""100M rows out of core in one process under a 1 GB memory limit: time per row flat from 10M rows.

Agrawal F2 rows (5% perturbation, 62,500-row files as in :mod:`benchmarks.outofcore`), written
for the run to a temporary directory at 10M and 100M rows (3.6 GB of Parquet at 100M) and
removed afterwards. ``dasktree fit --max-depth 12 --memory-limit 1GB``, with and without
``--cv 10``, as whole processes: a dataset whose codes do not fit in a quarter of the limit
streams its pieces every pass in the command's process (:mod:`dasktree.engine.stream_runner`),
the first level pass spilling their codes to ``$TMPDIR`` (:mod:`dasktree.engine.spill`).
Reported per size: wall seconds, the peak resident memory of the process tree, the passes,
the bytes read from Parquet (the files' column chunks of the columns used, once per pass that
read them) and from the spill, and the seconds per million rows. LightGBM's one-tree script
(import, load, one tree of the same depth) runs beside them where its peak, extrapolated from
the smaller size, fits in half of the memory available; otherwise the results say it does not.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import psutil

from benchmarks import harness

NAME = "hundred_million"
CLAIM = "100M rows out of core in one process under a 1 GB memory limit: time per row flat from 10M"
DEPTH = 12
FILE_ROWS = 62_500
LIMIT = "1GB"
COLUMNS = ["salary", "commission", "age", "elevel", "car", "zipcode", "hvalue", "hyears", "loan", "class"]


def _write(rows: int, where: str) -> str:
    from dasktree.datasets import agrawal as generator

    path = os.path.join(where, f"agrawal-{rows}")
    generator.write_parquet(path, rows, n_files=rows // FILE_ROWS, function=2, perturbation=0.05, seed=0,
                            overwrite=True)
    return path


def parquet_bytes(path: str, columns: list[str]) -> int:
    """The compressed bytes of ``columns``' chunks in every file of ``path``: what one pass reads."""
    import pyarrow.parquet as pq

    total = 0
    for name in sorted(os.listdir(path)):
        meta = pq.ParquetFile(os.path.join(path, name)).metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            total += sum(group.column(c).total_compressed_size for c in range(group.num_columns)
                         if group.column(c).path_in_schema in columns)
    return total


def _measure(rows: int, out: str, lightgbm_peak: float | None) -> dict:
    where = tempfile.mkdtemp(prefix=f"dasktree-bench-{rows // 10**6}m-")
    try:
        path = _write(rows, where)
        per_pass = parquet_bytes(path, COLUMNS)
        fit = harness.dasktree_command("fit", path, "--target", "class", "--out", out, "--overwrite",
                                       "--max-depth", str(DEPTH), "--memory-limit", LIMIT, "--json")
        commands = {"dasktree fit": fit, "dasktree fit --cv 10": [*fit, "--cv", "10"]}
        available = psutil.virtual_memory().available
        fits_lightgbm = lightgbm_peak is None or lightgbm_peak * 10 < available / 2
        if fits_lightgbm:
            commands["LightGBM one-tree script"] = harness.job("lightgbm", path, DEPTH)
        runs = harness.alternate(commands, 1)
        figures: dict = {"parquet_gb": per_pass / 1e9, "lightgbm_fits": fits_lightgbm,
                         "available_gb": available / 1e9}
        for name, [r] in runs.items():
            figure = {"seconds": r["seconds"], "peak_bytes": r["peak_bytes"],
                      "seconds_per_million_rows": r["seconds"] / (rows / 1e6)}
            if name.startswith("dasktree"):
                model = harness.last_json(r)
                run = model["run"]
                figure.update(passes=model["report"]["passes"], parquet_reads=run["parquet_reads"],
                              parquet_bytes=run["parquet_reads"] * per_pass,
                              spill_bytes=run.get("spill_bytes_read", 0))
            figures[name] = figure
        return figures
    finally:
        shutil.rmtree(where, ignore_errors=True)


def run(quick: bool) -> harness.Result:
    small, large = (1_000_000, 10_000_000) if quick else (10_000_000, 100_000_000)
    out = f"{tempfile.mkdtemp(prefix='dasktree-bench-')}/model.json"
    figures = {small: _measure(small, out, None)}
    lgb = figures[small].get("LightGBM one-tree script")
    figures[large] = _measure(large, out, lgb["peak_bytes"] if lgb else None)
    md = [f"Agrawal F2 (5% perturbation), {FILE_ROWS:,}-row files written for the run and removed; depth "
          f"{DEPTH}, `--memory-limit {LIMIT}`, whole processes, one run each (2 cores, the machine shared "
          "with other work). Peak: resident memory of the process tree. Parquet read: the column chunks of "
          "the columns used, once per pass that read them; spill read: the codes read back.", "",
          "| rows | command | seconds | s per 1M rows | peak MB | passes | Parquet read GB | spill read GB |",
          "|---|---|---|---|---|---|---|---|"]
    for rows in (small, large):
        f = figures[rows]
        for name, figure in f.items():
            if not isinstance(figure, dict):
                continue
            md.append(f"| {rows:,} | `{name}` | {figure['seconds']:.1f} | {figure['seconds_per_million_rows']:.2f} | "
                      f"{figure['peak_bytes'] / 2**20:.0f} | {figure.get('passes', '')} | "
                      + (f"{figure['parquet_bytes'] / 1e9:.2f} | {figure['spill_bytes'] / 1e9:.2f} |"
                         if "passes" in figure else " | |"))
        if not f["lightgbm_fits"]:
            md.append(f"| {rows:,} | LightGBM one-tree script | not run: its peak, 10x the {small:,}-row run's, "
                      f"would exceed half of the {f['available_gb']:.1f} GB available | | | | | |")
    md.append("")
    summary = []
    for name in ("dasktree fit", "dasktree fit --cv 10"):
        a, b = figures[small][name], figures[large][name]
        summary += [(f"`{name}` {large:,} rows under --memory-limit {LIMIT}: peak (MB), seconds",
                     f"{b['peak_bytes'] / 2**20:.0f} MB ({'under' if b['peak_bytes'] <= 10**9 else 'OVER'} the "
                     f"limit), {b['seconds']:.0f} s"),
                    (f"`{name}` time per row, {large:,} / {small:,} rows",
                     harness.ratio(b["seconds_per_million_rows"], a["seconds_per_million_rows"]))]
    lgb_small = figures[small].get("LightGBM one-tree script")
    if lgb_small:
        summary.append((f"`dasktree fit` / LightGBM one-tree script, {small:,} rows (time, peak)",
                        f"{harness.ratio(figures[small]['dasktree fit']['seconds'], lgb_small['seconds'])}, "
                        f"{harness.ratio(figures[small]['dasktree fit']['peak_bytes'], lgb_small['peak_bytes'])}"))
    return harness.Result(summary, "\n".join(md), {str(r): f for r, f in figures.items()})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
