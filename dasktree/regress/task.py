"""The regression task (:class:`dasktree.model.task.Task`): a node holds two exact sums, ``counts[:, 0]``
the training rows (weighted) and ``counts[:, 1]`` the sum of their targets in fixed point
(:mod:`dasktree.binning.target`), and a leaf predicts its training mean ``lo + step * S / N``. The model
file says ``"task": "regression"`` and keeps the fixed point (``"target_scale"``)."""

from __future__ import annotations

import numpy as np

from ..model.task import Task, decrease_shares, register

__all__ = ["Regression", "REGRESSION", "node_means"]


def node_means(tree) -> np.ndarray:
    """Each node's training mean in fixed point; a node without training rows takes its parent's; under
    ``monotonic_cst`` (``tree.monotonic``) clipped to its bounds (:mod:`dasktree.split.monotonic`): what
    the tree predicts, and so what its training and CV errors are of. Here, on the model's side, not in
    :mod:`dasktree.regress.prune` (which loads the compiled kernels): showing or predicting with a
    loaded model reads it."""
    n, s = tree.counts[:, 0].astype(np.float64), tree.counts[:, 1].astype(np.float64)
    mean = np.divide(s, n, out=np.zeros(n.size), where=n > 0)
    empty = np.flatnonzero(n == 0)
    if empty.size:
        parent = tree.parents()
        for c in empty.tolist():  # parents first (breadth-first order)
            if parent[c] >= 0:
                mean[c] = mean[parent[c]]
    if getattr(tree, "monotonic", None) is not None:
        mean = tree.clipped(mean)  # the rule of a classification node's probability (TreeModel.clipped)
    return mean


def _fmt(x: float) -> str:
    return f"{x:.6g}"


class Regression(Task):
    """Exact fixed-point sums at the nodes; a leaf predicts its training mean."""

    name = "regression"
    predicts_classes = False
    importance_of = "squared error's"

    @property
    def params(self) -> tuple:
        """:data:`~dasktree.params.regression.REGRESSION_PARAMS`, imported when read: the parameters'
        package pulls in the grow loop and its compiled kernels, which ``dasktree show`` never loads."""
        from ..params.regression import REGRESSION_PARAMS

        return REGRESSION_PARAMS

    def file_fields(self, model):
        return {"task": self.name, "target_scale": model.spec.target.to_json()}

    def report_of_file(self, report):
        """A report as this dasktree writes it, from a model file's: the CV report's folds as the
        classification one's (``"folds"`` the number, ``"repeats"``, ``"per_fold"`` the list); files
        written before said ``"k"`` and a list ``"folds"``."""
        cv = report.get("cv") if isinstance(report, dict) else None
        if not isinstance(cv, dict) or "k" not in cv:
            return report
        per_fold = [{"repeat": 0, **f} if isinstance(f, dict) else f for f in cv.get("folds") or []]
        cv = {**{k: v for k, v in cv.items() if k not in ("k", "folds")}, "folds": cv["k"], "repeats": 1,
              "per_fold": per_fold}
        return {**report, "cv": cv}

    def node_rows(self, tree):
        return tree.counts[:, 0]

    def node_values(self, model, tree):
        """Every node's prediction (its training mean; an empty node its parent's; under ``monotonic_cst``
        clipped to its bounds), in the target's units."""
        return model.spec.target.value(node_means(tree))

    def check_proba(self):
        raise TypeError("a regression model predicts numbers: predict_values, not class probabilities")

    def predict_table(self, model, table, columns):
        import pyarrow as pa  # here: reading and showing a model imports no pyarrow

        columns["prediction"] = pa.array(model.predict_values(table), type=pa.float64())
        return columns

    def predicted_counts(self, model, out):
        return [out.num_rows]

    def leaf_texts(self, model, tree):
        values = self.node_values(model, tree).tolist()
        rows = tree.counts[:, 0].tolist()
        return lambda i: f"value: [{_fmt(values[i])}] (n={int(rows[i])})"

    def leaf_texts_of(self, model, tree, nodes):
        values, rows = self.node_values(model, tree)[nodes].tolist(), tree.counts[nodes, 0].tolist()
        return [f"value: [{v:.6g}] (n={int(r)})" for v, r in zip(values, rows)]  # leaf_texts' text, in one go

    def box_texts(self, model):
        shown = [f"{v:.4g}" for v in self.node_values(model, model.tree).tolist()]
        rows = model.tree.counts[:, 0].tolist()
        return lambda i: f"{shown[i]}\nn={int(rows[i])}"

    def leaf_colours(self, model, plt):
        values = self.node_values(model, model.tree)
        lo, hi = float(values.min()), float(values.max())
        ramp = plt.get_cmap("viridis")
        return lambda i: ramp((values[i] - lo) / (hi - lo) if hi > lo else 0.5)

    def plot_cv(self, model, out, ext):
        from ..model.plot_regression import plot_cv_regression

        plot_cv_regression(model, out, ext)

    def feature_importances(self, model):
        """Total decrease of the sum of squared errors per feature, normalised to sum 1 (as scikit-learn)."""
        from .prune import risk

        return decrease_shares(model.tree, risk(model.tree, 1.0), model.spec.n_features)

    def pruning_path(self, model):
        """Of the tree the cp table is of (the grown tree, or with ``max_leaf_nodes`` its best-first
        subtree): ``ccp_alphas`` (0, then each collapse's effective alpha) and ``impurities`` (the training
        MSE of the leaves, ``sum N_t / N * MSE_t``, before the first collapse and after each), from the node
        sums and the training sum of squares. A tree grown only until pruning at cp must cut
        (``report["prune"]["grown_to_alpha"]``): the path from that alpha, its first entry."""
        from ..model.prune import weakest_link_of
        from ..model.pruning import path_impurities
        from .prune import best_first, risk
        from .reprune import _squares

        tree, step = model.grown_tree, model.spec.target.step
        if model.params.get("max_leaf_nodes") is not None:
            tree = best_first(tree, int(model.params["max_leaf_nodes"]), model.params.get("criterion", "squared_error"),
                              model.spec.target.lo, step)
        r = risk(tree, step)  # -(S - c N)**2 / N per node, scaled: centred on the root's mean c (an integer)
        path = weakest_link_of(tree.children, r)
        n, s = int(tree.counts[0, 0]), int(tree.counts[0, 1])
        c = s // max(n, 1)
        # the leaves' sum of squared errors is Q - sum S**2 / N = (Q - 2 c S + c**2 N) + sum -(S - c N)**2 / N
        constant = (_squares(model)[0] - 2 * c * s + c * c * n) * step * step / max(n, 1)
        alphas = np.concatenate([[0.0], path.step_alphas])
        impurities = constant + path_impurities(tree.children, r, path)
        floor = (model.report.get("prune") or {}).get("grown_to_alpha")
        if floor is not None:  # grown only until pruning at cp must cut: the path from there (its cp table's)
            first = int(np.flatnonzero(np.append(alphas > floor, True))[0])
            alphas = np.concatenate([[floor], alphas[first:]])
            impurities = np.concatenate([impurities[first - 1:first], impurities[first:]])
        return alphas, impurities

    def format_report(self, model, name, defaults):
        from .show import format_report

        return format_report(model, name, defaults)

    def format_cp(self, model):
        from .show import format_cp

        return format_cp(model)

    def reprune(self, model, alpha, *, mode, confidence):
        from .reprune import reprune

        return reprune(model, alpha, mode=mode)

    def pruned_summary(self, model):
        r = model.report
        cv = r.get("cv")
        said = ""
        if cv:
            source = " (the cp table's)" if cv.get("estimated_from") == "cp table" else ""
            said = f", cross-validated MSE {cv['mse']:.6g}, R^2 {cv['r2']:.4f}{source}"
        line = (f"{r['prune']['mode']} pruning at alpha {r['prune']['alpha']:.6g}, "
                f"{r['prune']['leaves_grown']} -> {r['prune']['leaves']} leaves{said}")
        return line, None if not cv else cv["mse"]

    def evaluate_part(self, model, table, target, where, weight):
        from .metrics import table_stats

        return table_stats(model, table, target, where, weight)

    def evaluate_merge(self, model, results, weighted):
        from .metrics import merged_metrics

        return merged_metrics(results)


REGRESSION = register(Regression())
