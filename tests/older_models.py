"""A model's file as an older format wrote it, for tests that damage a file by hand or load an old one."""

from __future__ import annotations

import json

from dasktree.model.grown_json import grown_to_json


def in_version5(model) -> dict:
    """``model``'s file as format version 5 wrote it: every tree in the columns layout (a list per node, so a
    test can damage one node), the grown tree and each fold tree a JSON text. This dasktree reads it."""
    d = json.loads(model.dumps())
    text = lambda tree: json.dumps(grown_to_json(tree), sort_keys=True, separators=(",", ":"))  # noqa: E731
    d["version"], d["tree"] = 5, grown_to_json(model.tree)
    if model.full_tree is not None:
        d["full_tree"] = text(model.full_tree)
    if model.fold_trees:
        d["fold_trees"] = [text(t) for t in model.fold_trees]
    return d
