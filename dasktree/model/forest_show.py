"""``dasktree show`` of a forest file: a short summary (``--format text``) and the readable report
(``--format report``: the data, the parameters, the trees, the out-of-bag estimate and the feature
importances, impurity and, when the file holds them, permutation on the out-of-bag rows).

A forest has no single tree to print; ``dasktree show FOREST --member M`` prints member ``M`` as a
tree (:meth:`~dasktree.model.forest_model.ForestModel.member_model`).
"""

from __future__ import annotations

import numpy as np

from .forest_model import ForestModel
from .show_report import importance_lines

__all__ = ["format_forest_summary", "format_forest_report", "MEMBERS_SHOWN"]

MEMBERS_SHOWN = 10
"""The report lists this many first members and this many last ones, and counts the rest."""

TOP_FEATURES = 5
"""The summary names this many of the most important features."""


def _what(forest: ForestModel) -> str:
    if forest.task.predicts_classes:
        return f"classification of {len(forest.classes)} classes: " + ", ".join(repr(c) for c in forest.classes)
    return "regression"


def _oob_line(forest: ForestModel) -> str:
    r = forest.report
    measure = "accuracy" if forest.task.predicts_classes else "R^2"
    if "oob_score" not in r:
        return "out of bag: not scored (fit with --oob, or oob_score=True)"
    if r["oob_score"] is None:
        return f"out of bag: no row was out of a member's bag ({measure} undefined)"
    return f"out of bag: {measure} {r['oob_score']:.4f} over {r['oob_rows']} rows"


def _range(values: list[int]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo} to {hi}"


def format_forest_summary(forest: ForestModel, name: str = "model") -> str:
    """A few lines: what the forest predicts, its trees' sizes, the out-of-bag estimate, the most
    important features."""
    r = forest.report
    depths = [m.max_depth for m in forest.members]
    leaves = [m.n_leaves for m in forest.members]
    out = [f"{name}: a dasktree forest of {forest.n_members} trees predicting {forest.target!r} ({_what(forest)})",
           f"  trees: depth {_range(depths)}, leaves {_range(leaves)} ({sum(leaves)} in all), "
           f"{r.get('passes', '?')} passes over {r.get('rows_used', '?')} rows",
           f"  {_oob_line(forest)}"]
    importances = forest.feature_importances()
    top = [i for i in np.argsort(-importances, kind="stable")[:TOP_FEATURES] if importances[i] > 0]
    out.append(f"  {len(forest.features)} features; the most important ({forest.task.importance_of} decrease): "
               + (", ".join(f"{forest.features[i]} {importances[i]:.3f}" for i in top) or "none (no member splits)"))
    permutation = r.get("oob_permutation_importance")
    if permutation:
        mean = np.asarray(permutation["importances_mean"])
        top = np.argsort(-mean, kind="stable")[:TOP_FEATURES]
        out.append(f"  by permutation on the out-of-bag rows ({permutation['scoring']} lost): "
                   + ", ".join(f"{forest.features[i]} {mean[i]:.3f}" for i in top))
    out.append("  (--format report: the whole report; --member M: a member's tree)")
    return "\n".join(out) + "\n"


def format_forest_report(forest: ForestModel, name: str = "model", defaults: dict | None = None) -> str:
    """The report: the data, the parameters (``*`` changed from ``defaults``), the trees (each member's
    depth, leaves and nodes; the first and last :data:`MEMBERS_SHOWN`), the out-of-bag estimate, the
    feature importances."""
    defaults = defaults or {}
    r = forest.report
    out = [f"{name}: a dasktree forest of {forest.n_members} trees predicting {forest.target!r}", "", "data"]
    out.append(f"  rows {r.get('rows', '?')}, used {r.get('rows_used', '?')}")
    out.append(f"  task {_what(forest)}")
    out.append(f"  {len(forest.features)} features")
    for f, width in zip(forest.spec.features, forest.spec.widths.tolist()):
        out.append(f"    {f.name:<24} {f.kind:<8} {width} bins")
    out += ["", "parameters (* changed from the default)"]
    for key, value in forest.params.items():
        mark = "*" if key in defaults and defaults[key] != value else " "
        out.append(f"  {mark} {key:<22} {value!r}")
    depths = [m.max_depth for m in forest.members]
    leaves = [m.n_leaves for m in forest.members]
    out += ["", "trees (grown together in the same passes)",
            f"  {forest.n_members} members, {sum(m.n_nodes for m in forest.members)} nodes, {sum(leaves)} leaves; "
            f"depth {_range(depths)} (mean {np.mean(depths):.1f}), leaves {_range(leaves)} "
            f"(mean {np.mean(leaves):.1f}); {r.get('passes', '?')} passes over the data",
            f"  {'member':>6} {'depth':>6} {'leaves':>7} {'nodes':>7}"]
    for m, tree in enumerate(forest.members):
        if m < MEMBERS_SHOWN or m >= forest.n_members - MEMBERS_SHOWN:
            out.append(f"  {m:>6} {tree.max_depth:>6} {tree.n_leaves:>7} {tree.n_nodes:>7}")
        elif m == MEMBERS_SHOWN:
            out.append(f"  {'...':>6} {forest.n_members - 2 * MEMBERS_SHOWN} members")
    out += ["", _oob_line(forest)]
    importances = importance_lines(forest)
    importances[1] = importances[1].rstrip(")") + ": each member's, averaged)"
    out += importances
    out += permutation_lines(forest)
    return "\n".join(out) + "\n"


def permutation_lines(forest: ForestModel) -> list[str]:
    """The report's permutation importances on the out-of-bag rows (largest mean first), or a line
    saying how to get them."""
    p = forest.report.get("oob_permutation_importance")
    if not p:
        return ["", "permutation importances on the out-of-bag rows: not in the file (dasktree fit --trees N "
                    "--oob-permutation R, or the estimator's oob_permutation_importance(X, y), keeps them)"]
    mean, std = np.asarray(p["importances_mean"]), np.asarray(p["importances_std"])
    out = ["", f"permutation importances on the out-of-bag rows ({p['scoring']} lost when a feature's values are "
               f"shuffled: {p['n_repeats']} repeats, random_state {p['random_state']}, {p['rows']} rows, "
               f"baseline {p['baseline']:.4f})",
           f"  {'feature':<24} {'mean':>9} {'std':>9}"]
    for i in np.argsort(-mean, kind="stable"):
        out.append(f"  {forest.features[i]:<24} {mean[i]:>9.4f} {std[i]:>9.4f}")
    return out
