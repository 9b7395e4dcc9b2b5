"""``dasktree show --format report``: a saved model's fit report as readable text.

Sections: the data (rows, classes, features), the parameters (those changed
from the defaults marked ``*``), the tree's size, the cross-validation table
and metrics, and the pruning table when the model was pruned.
"""

from __future__ import annotations

from .model import Model

__all__ = ["format_report", "format_cp", "format_classification_report", "format_classification_cp",
           "features_and_parameters", "cp_rows_shown", "cp_section", "importance_lines"]


def format_report(model: Model, name: str = "model", defaults: dict | None = None) -> str:
    """The report, as the model's task writes it; ``defaults`` (the learning parameters' defaults) marks
    the changed parameters."""
    return model.task.format_report(model, name, defaults)


def format_cp(model: Model) -> str:
    """The cost-complexity table as rpart's ``printcp`` prints it, as the model's task writes it."""
    return model.task.format_cp(model)


def format_classification_report(model: Model, name: str = "model", defaults: dict | None = None) -> str:
    """A classification model's report: the data and classes, the parameters, the tree, the CV per fold
    and its metrics, the cp table's first, last and chosen rows, the grid."""
    from .metrics import format_metrics

    defaults = defaults or {}

    r = model.report
    out = [f"{name}: a dasktree model of {model.target!r}", "", "data"]
    out.append(f"  rows {r.get('rows', '?')}, used {r.get('rows_used', '?')}, "
               f"skipped (no label) {r.get('rows_skipped_null_target', 0)}")
    counts = r.get("class_counts", {})
    out.append("  classes " + ", ".join(f"{c}: {n}" for c, n in counts.items()))
    weights = r.get("weights")
    if weights is not None:
        column = "every row 1" if weights["column"] is None else f"column {weights['column']!r}"
        rule = "integer" if weights["rule"] == "integer" else f"fixed point, x 2**{weights['shift']}"
        factors = ", ".join(f"{c}: {f:g}" for c, f in weights["class_factors"].items())
        out.append(f"  weights {column} ({rule}), class factors {factors}; counted as {weights['counted']} rows, "
                   f"skipped (weight 0) {r.get('rows_skipped_zero_weight', 0)}")
    out += features_and_parameters(model, defaults)
    out += ["", "tree"]
    out.append(f"  depth {r.get('depth', model.tree.max_depth)}, {r.get('nodes', model.tree.n_nodes)} nodes, "
               f"{r.get('leaves', model.tree.n_leaves)} leaves, training accuracy "
               f"{r.get('training_accuracy', float('nan')):.4f}, {r.get('passes', '?')} passes over the data")
    out += importance_lines(model)
    cv = r.get("cv")
    if cv:
        out += ["", f"cross-validation ({cv['repeats']} x {cv['folds']}-fold, grown in the same passes)"]
        out.append(f"  {'repeat':>6} {'fold':>5} {'rows':>9} {'accuracy':>9} {'leaves':>7} {'depth':>6}")
        for f in cv["per_fold"]:
            acc = "-" if f["accuracy"] is None else f"{f['accuracy']:.4f}"
            out.append(f"  {f['repeat']:>6} {f['fold']:>5} {f['rows']:>9} {acc:>9} {f['leaves']:>7} {f['depth']:>6}")
        if cv.get("estimated_from") == "cp table":
            out.append(f"  accuracy {cv['accuracy_pooled']:.4f} (1 - the cp table's CV error of this tree: re-pruned "
                       "without fold trees)")
        else:
            out.append(f"  accuracy {cv['accuracy_mean']:.4f} +/- {cv['accuracy_std']:.4f} (mean +/- std over "
                       f"folds), pooled {cv['accuracy_pooled']:.4f}")
        if cv.get("metrics"):
            out.append("")
            out += ["  " + line for line in format_metrics(cv["metrics"]).rstrip("\n").split("\n")]
    prune = r.get("prune")
    if prune:
        out += ["", f"pruning ({prune.get('mode')}, chosen alpha {prune.get('alpha')})"]
        out.append(f"  {'alpha':>12} {'leaves':>7} {'train err':>10} {'cv err':>9} {'cv se':>9}")
        table = prune.get("cp_table", [])
        chosen = next((i for i, row in enumerate(table) if row["leaves"] == r.get("leaves")), None)

        def line(row: dict, mark: str) -> str:
            cells = [_cell(row.get(k)) for k in ("train_error", "cv_error", "cv_se")]
            return f"{mark} {row['alpha']:>12.6g} {row['leaves']:>7} {cells[0]:>10} {cells[1]:>9} {cells[2]:>9}"

        out += cp_section(table, chosen, line)
    grid = r.get("grid")
    if grid:
        out += ["", f"grid ({grid['settings']} settings, {grid['growths']} grown apart in one forest)",
                f"  chosen {grid['best_params']}: CV accuracy {grid['best_score']:.4f} (show --format grid: the table)",
                f"  {grid['note']}"]
    return "\n".join(out) + "\n"


CP_ROWS_SHOWN = 5
"""The report shows this many first and last rows of the cp table, and the chosen one (``*``)."""


def cp_rows_shown(n_rows: int, chosen: int | None) -> set[int]:
    """The rows of an ``n_rows`` cp table the report prints: the first and last :data:`CP_ROWS_SHOWN`,
    and ``chosen`` with a row either side."""
    shown = set(range(min(n_rows, CP_ROWS_SHOWN))) | set(range(max(0, n_rows - CP_ROWS_SHOWN), n_rows))
    if chosen is not None:
        shown |= {i for i in (chosen - 1, chosen, chosen + 1) if 0 <= i < n_rows}
    return shown


def cp_section(table: list[dict], chosen: int | None, line) -> list[str]:
    """The report's rows of a cp table (:func:`cp_rows_shown`, ``line(row, mark)`` each, ``*`` the chosen),
    a gap said in one line with its length."""
    out, shown = [], cp_rows_shown(len(table), chosen)
    for i, row in enumerate(table):
        if i in shown:
            out.append(line(row, "*" if i == chosen else " "))
        elif i == 0 or i - 1 in shown:  # the first of a gap: say how long it is
            gap = next((j for j in range(i, len(table)) if j in shown), len(table)) - i
            out.append(f"  {'...':>12} {gap} rows ('dasktree show --format cp' prints all {len(table)})")
    return out


def importance_lines(model) -> list[str]:
    """The report's feature importances (``feature_importances_``: each feature's share of the tree's
    impurity decrease, or of its squared error's for a regression tree), largest first; the features
    no test uses are counted, not listed."""
    importances = model.feature_importances()
    used = sorted((i for i in range(importances.size) if importances[i] > 0), key=lambda i: (-importances[i], i))
    out = ["", f"feature importances (share of the {model.task.importance_of} decrease)"]
    out += [f"  {model.features[i]:<24} {importances[i]:.4f}" for i in used]
    unused = importances.size - len(used)
    if unused:
        out.append(f"  ({unused} of {importances.size} features in no test)")
    return out


def _cell(x) -> str:
    return "-" if x is None else f"{x:.4f}"


def features_and_parameters(model, defaults: dict) -> list[str]:
    """The report's lines on the features (kind, bins), its warnings and the parameters (``*`` where
    changed from ``defaults``): the same for a classification and a regression model."""
    r = model.report
    out = []
    features = r.get("features", [])
    out.append(f"  {len(features)} features")
    for f in features:
        exact = "" if f.get("kind") != "numeric" else (", exact" if f.get("exact") else ", quantile")
        out.append(f"    {f['name']:<24} {f['kind']:<8} {f['bins']} bins{exact}")
    for warning in r.get("warnings", []):
        out.append(f"  warning: {warning}")
    out += ["", "parameters (* changed from the default)"]
    for key, value in model.params.items():
        mark = "*" if key in defaults and defaults[key] != value else " "
        out.append(f"  {mark} {key:<22} {value!r}")
    return out


def format_classification_cp(model: Model) -> str:
    """A classification model's cp table; ``*`` marks the pruned tree."""
    from .pruning import cp_rows

    info = model.report.get("prune") or {}
    table = cp_rows(model)
    cv = model.report.get("cv")
    head = f"{info.get('mode', 'none')} pruning"
    if info.get("alpha") is not None:
        head += f" at alpha {info['alpha']:.6g}"
    grown = info["leaves_grown"] if "leaves_grown" in info else model.grown_tree.n_leaves  # read only when unsaid
    head += f": {model.report['leaves']} of {grown} leaves"
    if cv:
        head += f"; {cv['repeats']}x{cv['folds']}-fold cross-validation"
    lines = [head, f"  {'alpha':>12} {'leaves':>7} {'train_error':>12} {'cv_error':>9} {'cv_se':>8}"]
    for row in table:
        mark = "*" if info.get("alpha") is not None and row["alpha"] == info["alpha"] else " "
        cv_e = "-" if row["cv_error"] is None else f"{row['cv_error']:.4f}"
        cv_s = "-" if row["cv_se"] is None else f"{row['cv_se']:.4f}"
        lines.append(f"{mark} {row['alpha']:>12.6g} {row['leaves']:>7d} {row['train_error']:>12.4f} {cv_e:>9} {cv_s:>8}")
    return "\n".join(lines) + "\n"
