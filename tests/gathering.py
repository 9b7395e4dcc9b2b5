"""What the small-node property tests compare: a fit gathered against the same fit level-wise."""

from __future__ import annotations

import hashlib
import json

import numpy as np

from dasktree.levels.small import small_node_rows


def model_bytes(model) -> str:
    """The hash of a model's bins and trees (main and fold): equal models, equal hashes."""
    trees = [model.grown_tree.to_json()] + [t.to_json() for t in model.fold_trees]
    text = json.dumps({"bins": model.spec.to_json(), "trees": trees}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def small_nodes_of(model) -> int:
    """Nodes whose subtrees grew in memory, from the fit's level report."""
    levels = model.run.get("levels", []) if isinstance(model.run, dict) else []
    return sum(level.get("small_nodes", 0) for level in levels)


def both_ways(fit, rows=None):
    """(model gathered, model level-wise) of ``fit()``; ``rows``: the gathering budget (None: the fit's own)."""
    with small_node_rows(rows):
        gathered = fit()
    with small_node_rows(0):
        level_wise = fit()
    return gathered, level_wise


def grid_of(model) -> str:
    """A grid fit's table, every setting's split scores: what its settings' fold trees predicted."""
    table = model.report["grid"]["cv_results"]
    return json.dumps({k: np.asarray(v).tolist() for k, v in table.items() if "score" in k}, sort_keys=True)
