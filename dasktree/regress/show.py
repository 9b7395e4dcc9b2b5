"""``dasktree show`` of a regression model: the cp table (``--format cp``, rpart's ``printcp`` for
``anova``) and the readable report (``--format report``).

The cp table is the fit's (``report["prune"]["cp_table"]``, :func:`dasktree.regress.prune.cp_table`):
per subtree of the grown tree's weakest-link sequence its ``alpha`` (scikit-learn's units: the
increase of the training MSE per leaf removed), ``leaves``, ``train_mse`` and, with fold trees,
the cross-validated MSE (key ``cv_error``) and its standard error over the folds. ``*`` marks the
subtree the model predicts with. A tree pruned at cp grew only until that pruning must cut
(``grown_to_alpha``): its table starts at that alpha, and both views say so.
"""

from __future__ import annotations

from ..model.model import Model
from ..model.show_report import cp_section, features_and_parameters, importance_lines

__all__ = ["format_cp", "format_report"]


def _cell(x, width: int = 12) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:>{width}.6g}"


def _chosen(model: Model, table: list[dict]) -> int | None:
    """The cp table's row of the model's tree: the row of as many leaves (leaves fall strictly along
    the sequence); None for a tree that is no row (``max_leaf_nodes``' best-first choice)."""
    leaves = model.tree.n_leaves
    return next((i for i, row in enumerate(table) if row["leaves"] == leaves), None)


def _grown_to(info: dict) -> str:
    """What a tree grown only until cp pruning must cut says (:mod:`dasktree.regress.grow`)."""
    return (f"grown only until pruning at alpha {info['grown_to_alpha']:.6g} must cut: the table starts there, "
            "and the model re-prunes to that alpha or a larger one")


def _cp_line(row: dict, mark: str) -> str:
    return (f"{mark} {row['alpha']:>12.6g} {row['leaves']:>7d} {_cell(row['train_mse'])} {_cell(row.get('cv_error'))} "
            f"{_cell(row.get('cv_se'))}")


CP_HEAD = f"  {'alpha':>12} {'leaves':>7} {'train_mse':>12} {'cv_mse':>12} {'cv_se':>12}"


def format_cp(model: Model) -> str:
    """The cost-complexity table as rpart's ``printcp`` prints it (MSE, not relative error)."""
    info = model.report.get("prune") or {}
    table = info.get("cp_table") or []
    cv = model.report.get("cv")
    head = f"{info.get('mode', 'none')} pruning"
    if info.get("alpha") is not None:
        head += f" at alpha {info['alpha']:.6g}"
    head += f": {model.tree.n_leaves} of {model.grown_tree.n_leaves} leaves"
    if cv:
        head += f"; {cv['folds']}-fold cross-validation"
    if info.get("grown_to_alpha") is not None:
        head += f"\n{_grown_to(info)}"
    chosen = _chosen(model, table)
    lines = [head, CP_HEAD]
    lines += [_cp_line(row, "*" if i == chosen else " ") for i, row in enumerate(table)]
    return "\n".join(lines) + "\n"


def format_report(model: Model, name: str = "model", defaults: dict | None = None) -> str:
    """The fit report as text: data and target, parameters (``*``: changed from ``defaults``), the tree,
    the cross-validation per fold and pooled, and the cp table's first, last and chosen rows.
    ``defaults``: the regression parameters' (:func:`dasktree.params.regression.regression_defaults`)
    unless given."""
    if defaults is None:
        from ..params.regression import regression_defaults

        defaults = regression_defaults()
    r = model.report
    t = r.get("target") or {}
    out = [f"{name}: a dasktree regression tree of {model.target!r}", "", "data"]
    out.append(f"  rows {r.get('rows', '?')}, used {r.get('rows_used', '?')}, "
               f"skipped (no target) {r.get('rows_skipped_null_target', 0)}")
    if t:
        out.append(f"  target mean {t['mean']:.6g}, std {t['std']:.6g}, range [{t['min']:.6g}, {t['max']:.6g}], "
                   f"kept to {t['resolution']:.3g} (30-bit fixed point)")
    out += features_and_parameters(model, defaults)
    table = (r.get("prune") or {}).get("cp_table") or []
    chosen = _chosen(model, table)
    training = r.get("training")
    train = "" if training is None else f", training MSE {training['mse']:.6g}, R^2 {training['r2']:.4f}"
    out += ["", "tree", f"  depth {model.tree.max_depth}, {model.tree.n_nodes} nodes, {model.tree.n_leaves} leaves"
                        f"{train}, {r.get('passes', '?')} passes over the data"]
    out += importance_lines(model)
    cv = r.get("cv")
    if cv:
        out += ["", f"cross-validation ({cv['folds']}-fold, grown in the same passes)"]
        if cv.get("per_fold"):
            out.append(f"  {'fold':>5} {'rows':>9} {'mse':>12} {'rmse':>12} {'r2':>9} {'leaves':>7}")
            for f in cv["per_fold"]:
                out.append(f"  {f['fold']:>5} {f['rows']:>9} {f['mse']:>12.6g} {f['rmse']:>12.6g} {f['r2']:>9.4f} "
                           f"{f['leaves']:>7}")
        if cv.get("estimated_from") == "cp table":
            out.append(f"  MSE {cv['mse']:.6g}, RMSE {cv['rmse']:.6g} (the cp table's CV MSE of this tree: "
                       "re-pruned without fold trees)")
        else:
            out.append(f"  pooled: MSE {cv['mse']:.6g}, RMSE {cv['rmse']:.6g}, R^2 {cv['r2']:.4f}; R^2 per fold "
                       f"{cv['r2_mean']:.4f} +/- {cv['r2_std']:.4f}")
    prune = r.get("prune")
    if prune and table:
        out += ["", f"pruning ({prune.get('mode')}, chosen alpha {prune.get('alpha')})"]
        if prune.get("grown_to_alpha") is not None:
            out.append(f"  {_grown_to(prune)}")
        out.append(CP_HEAD)
        out += cp_section(table, chosen, _cp_line)
    return "\n".join(out) + "\n"
