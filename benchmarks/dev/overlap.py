"""How much of a fold tree's node is one node of the main tree, depth by depth.

A cross-validation forest shares a node while its trees choose the same test;
once they differ, every fold tree's nodes are counted on their own, although
a fold tree trained on 90% of the rows mostly holds the same rows as the main
tree in other nodes (a cut a bin away, the same tests in another order). This
script measures that, to say what counting a fold tree's node as a main-tree
node plus the rows where they differ could save (a developer's question
about the forest). For every fold tree and depth, over the fold tree's nodes at that
depth (rows that ended higher up left out):

- *positional*: the share of rows not in the main-tree node at the same
  position (the same child indices from the root);
- *best node*: the share of rows not in the main-tree node of that depth that
  holds most of the node's rows, ``|F \\ R| / |F|``;
- *to count*: rows to count by difference with the best reference ``R`` by
  ``|F \\ R| + |R \\ F|``, or ``|F|`` when counting ``F`` itself is cheaper, as
  a share of ``|F|``: the increments such a scheme would make against a plain
  count (histogram subtraction aside).

The fit runs in-process on the whole dataset in memory (folds from row
positions), then routes every row through every tree.

    python benchmarks/dev/overlap.py [DATA ...] [--cv 10] [--depth 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import dasktree  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _parents(tree) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Each node's parent (-1 at the root) and its path of child indices (nodes in breadth-first order)."""
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    path: list[tuple[int, ...]] = [()] * tree.n_nodes
    for i, children in enumerate(tree.children):
        for j, c in enumerate(children):
            parent[c] = i
            path[c] = path[i] + (j,)
    return parent, path


def _at_depth(tree, parent: np.ndarray, leaves: np.ndarray, depth: int) -> np.ndarray:
    """Each row's node at ``depth``, or the leaf it ended at above it."""
    node = leaves.copy()
    while True:
        up = tree.depth[node] > depth
        if not up.any():
            return node
        node[up] = parent[node[up]]


def _shares(f: np.ndarray, m: np.ndarray, m_all: np.ndarray) -> tuple[float, float]:
    """(best node, to count) over the fold tree's live rows ``f`` with their main nodes ``m``;
    ``m_all`` is every row's main node at the depth (for |R|). -1 in ``m`` / ``m_all``: the row's
    main tree ended above the depth, so no node of that depth can be its reference."""
    pairs, shared = np.unique(np.stack([f, m]), axis=1, return_counts=True)
    f_ids, f_counts = np.unique(f, return_counts=True)
    f_rows = dict(zip(f_ids.tolist(), f_counts.tolist()))
    m_ids, m_counts = np.unique(m_all, return_counts=True)
    r_rows = dict(zip(m_ids.tolist(), m_counts.tolist()))
    best = dict.fromkeys(f_rows, 0)
    cost = dict(f_rows)  # counting the node itself
    for (node, main), n in zip(pairs.T.tolist(), shared.tolist()):
        if main < 0:
            continue
        best[node] = max(best[node], n)
        cost[node] = min(cost[node], f_rows[node] + r_rows[main] - 2 * n)
    total = f.size
    return 1 - sum(best.values()) / total, sum(cost.values()) / total


def measure(path: str, cv: int, depth: int) -> dict:
    table = pq.read_table(path)
    started = time.perf_counter()
    model = dasktree.fit(table.to_pandas(), target="class", max_depth=depth, cv=cv, keep_fold_trees=True)
    fit_seconds = time.perf_counter() - started
    main = model.tree
    main_parent, main_path = _parents(main)
    at_path = {p: i for i, p in enumerate(main_path)}
    main_leaves = model.leaves(table, main)
    folds = []
    for fold in model.fold_trees:
        parent, fold_path = _parents(fold)
        paired = np.array([at_path.get(p, -1) for p in fold_path], dtype=np.int64)
        folds.append((fold, parent, paired, model.leaves(table, fold)))
    rows = []
    for d in range(1, depth):
        main_node = _at_depth(main, main_parent, main_leaves, d)
        main_node = np.where(main.depth[main_node] == d, main_node, -1)  # candidates: nodes of the depth
        positional, best, count = [], [], []
        for fold, parent, paired, leaves in folds:
            node = _at_depth(fold, parent, leaves, d)
            live = fold.depth[node] == d
            if not live.any():
                continue
            positional.append(float(np.mean(paired[node[live]] != main_node[live])))
            b, c = _shares(node[live], main_node[live], main_node)
            best.append(b)
            count.append(c)
        if best:
            rows.append({"depth": d, "positional": positional, "best": best, "count": count})
    return {"data": os.path.basename(path), "cv": cv, "fit_seconds": round(fit_seconds, 2), "depths": rows}


def _range(values: list[float]) -> str:
    return f"{min(values):.3f}-{max(values):.3f} (median {np.median(values):.3f})"


def report(results: list[dict]) -> str:
    lines = ["# Fold-tree nodes against main-tree nodes ", ""]
    for r in results:
        lines += [f"## {r['data']}, cv={r['cv']} (in-process fit {r['fit_seconds']} s)", "",
                  "Per depth, over the fold trees: share of a fold tree's rows not in the main-tree node at the "
                  "same position; not in the main-tree node holding most of them; rows to count by difference "
                  "with the best reference (or the node itself) as a share of the node's rows.", "",
                  "| depth | positional | best node | to count |", "| --- | --- | --- | --- |"]
        for row in r["depths"]:
            lines.append(f"| {row['depth']} | {_range(row['positional'])} | {_range(row['best'])} | "
                         f"{_range(row['count'])} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="*", default=[os.path.join(DATA, "agrawal-f7-p05-1000000-16"),
                                                    os.path.join(DATA, "agrawal-f2-p00-1000000-16")])
    parser.add_argument("--cv", type=int, default=10)
    parser.add_argument("--depth", type=int, default=10)
    args = parser.parse_args()
    results = [measure(path, args.cv, args.depth) for path in args.data]
    text = report(results)
    print(text)


if __name__ == "__main__":
    main()
