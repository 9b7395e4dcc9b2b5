"""What a model predicts, as an object: classification (class counts at the nodes) or regression (exact
fixed-point sums), as scikit-learn's histogram boosting differs by its ``loss``.

A :class:`~dasktree.model.model.Model` holds its task (``model.task``); everything that differs between
the two tasks on the model's side asks it and never compares its name: a node's rows and values, a
row's prediction, the leaf's text, picture and colour, the feature importances, the pruning path, the
readable report and cp table, re-pruning a saved model, the metrics of an evaluation (per part, then
merged), the counts a prediction pass returns, and the model file's fields. A model file names its
task (``"task"``; none: classification) and :func:`task_named` gives the object. :class:`Classification`
is here; :class:`dasktree.regress.task.Regression` registers itself when ``dasktree.regress`` loads.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Task", "Classification", "CLASSIFICATION", "TASKS", "register", "task_named", "decrease_shares"]

TASKS: dict[str, "Task"] = {}
"""Every task by the name a model file gives."""


class Task:
    """The model-side differences of a task; one instance per task (:data:`TASKS`). Each task gives:

    - ``file_fields(model)``: the model file's fields that name it (none for classification: old files have none);
    - ``node_rows(tree)``: each node's training rows (weighted); ``node_values(model, tree)``: each node's
      prediction, class probabilities (n_nodes, n_classes) or a number (n_nodes,);
    - ``predict_table(model, table, columns)``: ``columns`` (the kept input columns) with the prediction's
      added; ``predicted_counts(model, out)``: what a prediction pass returns of a part's output;
    - ``leaf_texts(model, tree)``, ``box_texts(model)``, ``leaf_colours(model, plt)``: functions of a node
      giving its leaf text (``export_text`` / ``export_dot``), its plotted box's first lines and face colour,
      every node's value computed once (read per node it would be quadratic in the nodes);
      ``leaf_texts_of(model, tree, nodes)``: the leaf texts of ``nodes`` (an int array) as a list, in one go;
      ``plot_cv(model, out, ext)``: the cross-validation as a picture;
    - ``feature_importances(model)``, ``pruning_path(model)``: scikit-learn's, from the node statistics;
    - ``format_report(model, name, defaults)``, ``format_cp(model)``: ``dasktree show``'s texts;
      ``reprune(model, alpha, mode=, confidence=)``: the model pruned anew from its grown tree, no pass;
      ``pruned_summary(model)``: what ``dasktree prune`` says of it (after ``wrote PATH:``) and its CV figure;
    - ``evaluate_part(model, table, target, where, weight)``: one part's mergeable statistic and its rows
      without a target (no Dask); ``evaluate_merge(model, results, weighted)``: the metrics of the parts'
      statistics merged in the parts' order.
    """

    name: str = ""
    predicts_classes: bool = True
    """Class labels and their probabilities (else one number): what an export's outputs are shaped as."""
    importance_of: str = ""
    """What a feature importance is a share of (the report's words)."""
    params: tuple = ()
    """The task's own declared parameters (regression's, :data:`dasktree.params.regression.REGRESSION_PARAMS`;
    none: :data:`dasktree.params.declared.PARAMS`): what its report marks changed parameters against."""

    def __eq__(self, other):
        if isinstance(other, str):  # an old habit would be silently False: say what to do instead
            raise TypeError(f"a task is an object: compare model.task.name with {other!r}, or ask the task")
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<task {self.name}>"

    def check_proba(self) -> None:
        """Raise unless the task predicts class probabilities."""

    def report_of_file(self, report):
        """The report as this dasktree writes it, from a model file's (older files' shapes upgraded)."""
        return report


def decrease_shares(tree, risk: np.ndarray, n_features: int) -> np.ndarray:
    """Each feature's share of the decrease of ``risk`` (a node's weighted impurity, or squared error) over
    the tree's tests, ``risk[t] - sum of risk[c]`` over its children ``c`` summed by the feature ``t`` tests:
    read from the tests' columns, no ``Test`` made; sums in the nodes' order, as a loop over them adds."""
    from .node_table import node_tests_of

    table = node_tests_of(tree.tests)
    risk = np.asarray(risk, dtype=np.float64)
    below = np.bincount(tree.parents()[1:], weights=risk[1:], minlength=tree.n_nodes)
    inner = np.flatnonzero(table.inner)
    out = np.bincount(table.attribute[inner], weights=risk[inner] - below[inner], minlength=n_features)
    total = out.sum()
    return out / total if total > 0 else out


def register(task: Task) -> Task:
    TASKS[task.name] = task
    return task


def task_named(name: str) -> Task:
    """The task a model file names; ValueError naming the tasks this dasktree reads."""
    if not isinstance(name, str) or name not in TASKS:
        raise ValueError(f"unknown task {name!r}; this dasktree reads {sorted(TASKS)}")
    return TASKS[name]


class Classification(Task):
    """Class counts at the nodes; a leaf predicts its majority class and the class frequencies."""

    name = "classification"
    importance_of = "impurity"

    def file_fields(self, model):
        return {}

    def node_rows(self, tree):
        return tree.counts.sum(axis=1)

    def node_values(self, model, tree):
        return tree.value

    def predict_table(self, model, table, columns):
        import pyarrow as pa  # here: reading and showing a model imports no pyarrow

        proba = model.predict_proba_table(table)
        labels = np.asarray(model.classes, dtype=object)[np.argmax(proba, axis=1)] if len(proba) else []
        columns["prediction"] = pa.array(list(labels), type=pa.array(list(model.classes)).type)
        for i, c in enumerate(model.classes):
            columns[f"proba_{c}"] = pa.array(proba[:, i] if len(proba) else np.zeros(0), type=pa.float64())
        return columns

    def predicted_counts(self, model, out):
        n = len(model.classes)
        proba = out.select([f"proba_{c}" for c in model.classes]).to_pandas().to_numpy()
        counts = np.bincount(np.argmax(proba, axis=1), minlength=n) if len(proba) else np.zeros(n, dtype=np.int64)
        return counts.tolist()

    def leaf_texts(self, model, tree):
        value = tree.value
        best, p = value.argmax(axis=1).tolist(), value.max(axis=1).tolist()
        rows = self.node_rows(tree).tolist()
        classes = model.classes
        return lambda i: f"class: {classes[best[i]]!r} (n={int(rows[i])}, p={p[i]:.3f})"

    def leaf_texts_of(self, model, tree, nodes):
        value = tree.value[nodes]
        best = value.argmax(axis=1)
        p, rows = value[np.arange(len(best)), best].tolist(), self.node_rows(tree)[nodes].tolist()
        names = [repr(c) for c in model.classes]
        return [f"class: {names[b]} (n={int(r)}, p={q:.3f})" for b, r, q in zip(best.tolist(), rows, p)]

    def box_texts(self, model):
        value = model.tree.value
        best, p = value.argmax(axis=1).tolist(), value.max(axis=1).tolist()
        rows = self.node_rows(model.tree).tolist()
        return lambda i: f"{model.classes[best[i]]}\nn={int(rows[i])}, p={p[i]:.2f}"

    def leaf_colours(self, model, plt):
        colours = plt.get_cmap("tab10")
        best = model.tree.value.argmax(axis=1).tolist()
        return lambda i: colours(best[i] % 10)

    def plot_cv(self, model, out, ext):
        from .plot import plot_cv_classification

        plot_cv_classification(model, out, ext)

    def feature_importances(self, model):
        """Total weighted impurity decrease per feature, normalised to sum 1 (as scikit-learn)."""
        from ..split.api import entropy, gini

        impurity = gini if model.params.get("criterion", "gini") == "gini" else entropy
        tree = model.tree
        n = tree.counts.sum(axis=1).astype(np.float64)
        return decrease_shares(tree, n * impurity(tree.counts), model.spec.n_features)

    def pruning_path(self, model):
        """From the weakest-link sequence the cp table is made of: ``ccp_alphas`` (0, then the effective
        alpha of each collapse) and ``impurities`` (the leaves' total ``N_t / N * impurity(t)`` before it
        and after each)."""
        from .prune import node_risk, weakest_link_of
        from .pruning import path_impurities

        tree = model.grown_tree
        risk = node_risk(tree.counts, model.params.get("criterion", "gini"))
        path = weakest_link_of(tree.children, risk)
        return np.concatenate([[0.0], path.step_alphas]), path_impurities(tree.children, risk, path)

    def format_report(self, model, name, defaults):
        from .show_report import format_classification_report

        return format_classification_report(model, name, defaults)

    def format_cp(self, model):
        from .show_report import format_classification_cp

        return format_classification_cp(model)

    def reprune(self, model, alpha, *, mode, confidence):
        from .pruning import prune_model

        return prune_model(model, alpha, mode=mode, confidence=confidence)

    def pruned_summary(self, model):
        r = model.report
        said = f"; {r['prune']['cv_note']}" if "cv_note" in r["prune"] else ""
        if "cv" in r:
            source = " (the cp table's)" if r["cv"].get("estimated_from") == "cp table" else ""
            said = f", cross-validated accuracy {r['cv']['accuracy_pooled']:.4f}{source}"
        line = f"{r['prune']['mode']} pruning, {r['prune']['leaves_grown']} -> {r['leaves']} leaves{said}"
        return line, r.get("cv", {}).get("accuracy_pooled")

    def evaluate_part(self, model, table, target, where, weight):
        from .metrics import leaf_class_counts

        return leaf_class_counts(model, table, target, where=where, weight=weight)

    def evaluate_merge(self, model, results, weighted):
        from .metrics import class_report

        counts = np.zeros((model.tree.n_nodes, len(model.classes)), dtype=np.float64 if weighted else np.int64)
        skipped = 0
        for part_counts, part_skipped in results:
            counts += part_counts
            skipped += part_skipped
        leaves = [i for i, test in enumerate(model.tree.tests) if test is None]
        value = model.tree.value[leaves]
        return class_report(counts[leaves], value, np.argmax(value, axis=1), model.classes, skipped)


CLASSIFICATION = register(Classification())
