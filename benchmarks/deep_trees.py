"""Deep default trees (no ``max_depth``) beside scikit-learn's default tree: small nodes finish in memory.

Data (generated in the measured process, not timed): ``3 sin(x0) + step(x1 > 0.3) + 0.7 x2 + noise``
over 4 or 50 normal columns (the others noise), at 50,000 and 500,000 rows; the classification
target is the same thresholded at its median. Agrawal's generator (F2, 5% perturbation) too: its
class, and for regression its house value from the other eight attributes. Each learner runs in its own process, alternated:
``DaskTreeRegressor()`` / ``DaskTreeClassifier()`` with their defaults (the tree grown to purity,
in memory), beside scikit-learn's ``DecisionTreeRegressor()`` / ``DecisionTreeClassifier()``; with
``cv=10``, ``DaskTree*(cv=10)`` beside ``cross_val_score(cv=10)`` plus a fit. The process times its
fit alone (after one untimed fit of 2,000 rows: compiled kernels loaded) and prints it with the
fit's passes; the harness takes the peak memory of the whole process. ``dasktree level-wise`` is the
same fit with small nodes kept in the level passes (``small_node_rows(0)``), for the first table
without ``cv`` (level-wise, ``cv=10`` took 16 minutes at 20,000 rows on a loaded machine).
``dasktree out-of-core`` is the largest regression fit of 4 columns again, its rows written as one
Parquet file first (untimed) and fitted with ``memory_limit="1GB", cache=False``: every pass streams
the row groups; its model's hash (bins and grown trees) must equal the in-memory fit's.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time

import numpy as np

from benchmarks import harness

NAME = "deep_trees"
CLAIM = ("Deep default trees (no max_depth): fits and cv=10 beside scikit-learn's default tree, "
         "small nodes grown in memory")
FOLDS = 10
OUT_OF_CORE = "dasktree out-of-core"
LIMIT = "1GB"


def data(rows: int, columns: int, task: str, seed: int = 0, kind: str = "continuous"):
    """``kind`` "continuous": the formula over ``columns`` normal columns; "agrawal": Agrawal's nine
    attributes (F2, 5% perturbation) and its class, or for regression the house value ``hvalue``
    (a function of ``zipcode``, plus noise) from the other eight."""
    if kind == "agrawal":
        from dasktree.datasets import agrawal

        frame = agrawal.generate(rows, function=2, perturbation=0.05, seed=seed)
        if task == "classification":
            return frame.drop(columns="class").to_numpy(np.float64), frame["class"].to_numpy(np.int64)
        return frame.drop(columns=["class", "hvalue"]).to_numpy(np.float64), frame["hvalue"].to_numpy(np.float64)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, columns))
    y = 3 * np.sin(X[:, 0]) + (X[:, 1] > 0.3) + 0.7 * X[:, 2] + rng.normal(size=rows)
    if task == "classification":
        y = (y > np.median(y)).astype(np.int64)
    return X, y


def one(learner: str, task: str, rows: int, columns: int, cv: bool, kind: str = "continuous") -> dict:
    """The measured process: one fit, its seconds and passes as JSON."""
    X, y = data(rows, columns, task, kind=kind)
    if learner == "sklearn":
        from sklearn.model_selection import cross_val_score
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        make = DecisionTreeRegressor if task == "regression" else DecisionTreeClassifier
        make().fit(X[:2000], y[:2000])
        started = time.perf_counter()
        if cv:
            cross_val_score(make(), X, y, cv=FOLDS)
        model = make().fit(X, y)
        return {"seconds": time.perf_counter() - started, "leaves": int(model.get_n_leaves())}
    import contextlib

    from dasktree import DaskTreeClassifier, DaskTreeRegressor
    from dasktree.levels.small import small_node_rows

    make = DaskTreeRegressor if task == "regression" else DaskTreeClassifier
    switch = small_node_rows(0) if learner == "dasktree level-wise" else contextlib.nullcontext()
    kwargs = {"cv": FOLDS} if cv else {}
    with switch, tempfile.TemporaryDirectory(prefix="dasktree-deep-") as scratch:
        make(**kwargs).fit(X[:2000], y[:2000])
        if learner == OUT_OF_CORE:  # the same rows as Parquet (written untimed), every pass streaming them
            path = _parquet(X, y, scratch)
            kwargs.update(memory_limit=LIMIT, cache=False)
            started = time.perf_counter()
            model = make(**kwargs).fit(path, target="y")
        else:
            started = time.perf_counter()
            model = make(**kwargs).fit(X, y)
        seconds = time.perf_counter() - started
    small = model.report_["small_nodes"]
    return {"seconds": seconds, "passes": int(model.report_["passes"]), "leaves": int(model.report_["leaves"]),
            "small_nodes": small["small_nodes"], "rows_gathered": small["rows_gathered"],
            "passes_stopped_at_depth": small["passes_stopped_at_depth"], "depth": int(model.report_["depth"]),
            "model": model_hash(model.model_)}


def _parquet(X, y, directory: str) -> str:
    """``X`` (columns ``x0, x1, ...``) and ``y`` as one Parquet file in ``directory`` (row groups of
    100,000 rows); its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = f"{directory}/data.parquet"
    table = pa.table({**{f"x{i}": X[:, i] for i in range(X.shape[1])}, "y": y})
    pq.write_table(table, path, row_group_size=100_000)
    return path


def model_hash(model) -> str:
    """The sha256 (its first 16 digits) of a model's bins and grown trees (main and fold kept), as the model
    file keeps them (typed arrays, not a text per node: the hash of a grown tree of a million nodes must
    not weigh on the process's peak): equal models, equal hashes (the in-memory fit's columns ``x0, x1,
    ...`` are the Parquet file's)."""
    from dasktree.model.grown_json import arrays_to_json

    trees = [arrays_to_json(t, binary=True) for t in [model.grown_tree, *model.fold_trees]]
    text = json.dumps({"bins": model.spec.to_json(), "trees": trees}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def add_arguments(parser) -> None:
    parser.add_argument("--cells", default=None, metavar="TASK:ROWS:COLUMNS:CV,...",
                        help="a partial run: only these cells of the continuous data (e.g. regression:500000:4:0), "
                             "one alternated run each, their rows written to --out, not to results/")
    parser.add_argument("--out", default=None, help="with --cells: the JSON file of their rows")


def partial(options) -> bool:
    return options is not None and options.cells is not None


def _cells(text: str) -> list[tuple[str, int, int, bool]]:
    cells = []
    for item in text.split(","):
        task, rows, columns, cv = item.split(":")
        cells.append((task, int(rows), int(columns), bool(int(cv))))
    return cells


def run(quick: bool, options=None) -> harness.Result:
    if partial(options):
        return _run_cells(_cells(options.cells), options.out)
    sizes = [20_000] if quick else [50_000, 500_000]  # quick: a smoke run at 20,000 rows
    repeat = 1 if quick else 3
    tables = (("continuous", 4), ("continuous", 50), ("agrawal", 8))
    rows_out, figures, streamed = [], {}, []
    for task in ("regression", "classification"):
        for kind, columns in tables:
            columns += kind == "agrawal" and task == "classification"  # its nine attributes; hvalue is regression's target
            for rows in sizes:
                for cv in (False, True):
                    learners = ["dasktree", "sklearn"]
                    if rows == sizes[0] and kind == "continuous" and columns == 4 and not cv:
                        learners.append("dasktree level-wise")
                    if rows == sizes[-1] and kind == "continuous" and columns == 4 and not cv and task == "regression":
                        learners.append(OUT_OF_CORE)
                    commands = {name: [sys.executable, "-m", "benchmarks.deep_trees", "--one", name, task, str(rows),
                                       str(columns), str(int(cv)), kind] for name in learners}
                    name = "Agrawal F2" if kind == "agrawal" else f"{columns} columns"
                    label = f"{task}, {name}, {rows:,} rows{', cv=10' if cv else ''}"
                    print(label, flush=True)
                    runs = harness.alternate(commands, repeat)
                    measured = {}
                    for learner, done in runs.items():
                        outs = [harness.last_json(r) for r in done]
                        measured[learner] = {"seconds": harness.median([o["seconds"] for o in outs]),
                                             "peak_mb": harness.median([r["peak_bytes"] for r in done]) / 2**20,
                                             **{k: v for k, v in outs[-1].items() if k != "seconds"}}
                    figures[label] = measured
                    ours, theirs = measured["dasktree"], measured["sklearn"]
                    level_wise = measured.get("dasktree level-wise")
                    rows_out.append((label, ours, theirs, level_wise))
                    if OUT_OF_CORE in measured:
                        streamed.append((label, ours, measured[OUT_OF_CORE]))
    lines = [f"Median of {repeat} alternated runs, each learner in its own process (a shared machine: ratios "
             "in one run, not seconds). Fit seconds are the process's own clock of its fit; peak is the "
             "whole process's.", "",
             "| data | dasktree fit | passes (stopped at depth / tree depth) | peak | scikit-learn | peak | "
             "ratio (target <= 1.0x) | level-wise |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, ours, theirs, level_wise in rows_out:
        lw = (f"{level_wise['seconds']:.2f} s, {level_wise['passes']} passes, {level_wise['peak_mb']:.0f} MB"
              if level_wise else "-")
        lines.append(f"| {label} | {ours['seconds']:.2f} s | {ours['passes']} ({ours['passes_stopped_at_depth']} / "
                     f"{ours['depth']}) | {ours['peak_mb']:.0f} MB | "
                     f"{theirs['seconds']:.2f} s | {theirs['peak_mb']:.0f} MB | "
                     f"{ours['seconds'] / theirs['seconds']:.2f}x | {lw} |")
    summary = [(f"deep default tree / scikit-learn's, {label}", f"{ours['seconds'] / theirs['seconds']:.2f}x, "
                f"{ours['passes']} passes, {ours['peak_mb']:.0f} MB") for label, ours, theirs, _ in rows_out]
    if streamed:
        lines += ["", f"Out of core: the same fit from a Parquet file of the same rows, `memory_limit=\"{LIMIT}\", "
                  "cache=False` (every pass streams the row groups), beside the in-memory fit above.", "",
                  "| data | in memory | out of core | passes | peak | ratio (target <= 1.5x) | same model |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for label, ours, out in streamed:
            lines.append(f"| {label} | {ours['seconds']:.2f} s | {out['seconds']:.2f} s | {out['passes']} | "
                         f"{out['peak_mb']:.0f} MB | {out['seconds'] / ours['seconds']:.2f}x | "
                         f"{'yes' if out['model'] == ours['model'] else 'NO'} |")
            summary.append((f"out of core under memory_limit={LIMIT} / in memory, {label}",
                            f"{out['seconds'] / ours['seconds']:.2f}x, same model: {out['model'] == ours['model']}"))
    return harness.Result(summary, "\n".join(lines) + "\n", figures)


def _run_cells(cells: list, out: str | None) -> harness.Result:
    """Chosen cells of the continuous data, one alternated run each (the largest regression fit of 4
    columns with its out-of-core twin); each cell's row appended to ``out`` as a JSON line once measured."""
    summary = []
    for task, rows, columns, cv in cells:
        learners = ["dasktree", "sklearn"]
        if task == "regression" and rows == 500_000 and columns == 4 and not cv:
            learners.append(OUT_OF_CORE)
        commands = {name: [sys.executable, "-m", "benchmarks.deep_trees", "--one", name, task, str(rows), str(columns),
                           str(int(cv)), "continuous"] for name in learners}
        load = harness.load_average()
        runs = harness.alternate(commands, 1)
        row = {"cell": [task, rows, columns, int(cv)], "load_start": load, "load_end": harness.load_average(),
               **{name: {**harness.last_json(done[0]), "peak_mb": done[0]["peak_bytes"] / 2**20}
                  for name, done in runs.items()}}
        if out:
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
        ours, theirs = row["dasktree"], row["sklearn"]
        summary.append((f"{task}, {columns} columns, {rows:,} rows{', cv=10' if cv else ''}",
                        f"{ours['seconds']:.2f} s / {theirs['seconds']:.2f} s = {ours['seconds'] / theirs['seconds']:.2f}x, "
                        f"{ours['passes']} passes, peak {ours['peak_mb']:.0f} MB"))
    return harness.Result(summary, "", {})


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        learner, task, rows, columns, cv, kind = sys.argv[2:8]
        print(json.dumps(one(learner, task, int(rows), int(columns), bool(int(cv)), kind)))
    else:
        harness.main(sys.modules[__name__])
