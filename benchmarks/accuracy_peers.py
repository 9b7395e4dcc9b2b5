"""The accuracy claim's learners, each scored on the same folds (:mod:`benchmarks.accuracy`).

A learner is scored on one dataset and one fold assignment (``fold[i]`` in ``0..k-1``) and returns
``{"correct": [...], "rows": [...], "seconds": [...], "leaves": [...]}``, one entry per fold; the
seconds are the fit alone (the learner's own clock where it runs in another process). Regression
learners (scikit-learn's ``DecisionTreeRegressor()``, rpart's ``method="anova"``) give ``"sse"``, the
sum of squared errors of each fold, instead of ``"correct"``.

- scikit-learn's ``DecisionTreeClassifier(random_state=0)``, its defaults, in this process; nominal
  columns one-hot encoded (``OneHotEncoder``, a missing value its own category), numeric columns as
  they are (the tree's own missing-value support); the encoder's fit is timed with the tree's.
- scikit-learn's tree pruned the way a careful user prunes it, CART's way (``sklearn_tree`` with
  ``tuned=True``): ``ccp_alpha`` chosen as ``GridSearchCV`` chooses it (10-fold on the training fold
  alone: shuffled ``StratifiedKFold`` for a class, ``KFold`` for a number, seed 0; the best mean
  accuracy or R^2 over the folds, the first on a tie) among the candidates of :func:`alpha_grid`, the
  geometric means of consecutive alphas of the training fold's own ``cost_complexity_pruning_path``
  (Breiman et al. 1984, 11.3), then refitted on the whole training fold. :func:`search_alpha` gets
  GridSearchCV's choice at the cost of one fit per inner fold: each inner tree is grown once at
  ``ccp_alpha=0`` (with ``random_state`` fixed the grown tree is the one ``fit`` prunes) and its
  predictions at every candidate are read off one run of scikit-learn's weakest-link loop
  (:func:`weakest_links`, :func:`predict_at`), not a pruned tree built per candidate by
  ``_prune_tree`` (the Python around each of those calls made the search minutes per set); tests
  check that the predictions are ``_prune_tree``'s and the choice ``GridSearchCV``'s.
- dasktree's ``DaskTreeClassifier(**setting)`` (``DaskTreeRegressor`` for regression) in this process,
  nominal columns named.
- Weka's J48 (C4.5, ``-C 0.25 -M 2``), all folds in one JVM (``peers/J48Folds.java``, run by Java's
  source-file launcher) from an ARFF file that keeps nominal attributes nominal and missing values as ``?``.
- R's rpart (``method="class"``, its defaults; pruned by the 1-SE rule from its cp table, or with
  ``rule="min"`` at the least ``xerror``), all folds in one ``Rscript`` (``peers/rpart_folds.R``)
  from a CSV file with nominal columns as factors.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import time
import warnings

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
WEKA_JAR = "/usr/share/java/weka.jar"
#: At most this many ``ccp_alpha`` candidates per search (:func:`alpha_grid`).
MAX_ALPHAS = 50


def folds(y: np.ndarray, k: int = 10, seed: int = 0) -> np.ndarray:
    """Stratified ``k``-fold assignment of the rows (scikit-learn's ``StratifiedKFold``, shuffled, ``seed``)."""
    from sklearn.model_selection import StratifiedKFold

    fold = np.empty(len(y), dtype=np.int64)
    with warnings.catch_warnings():  # a class with fewer than k rows: some folds go without it
        warnings.simplefilter("ignore", UserWarning)
        for f, (_, test) in enumerate(StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y)):
            fold[test] = f
    return fold


def regression_folds(n: int, k: int = 10, seed: int = 0) -> np.ndarray:
    """``k``-fold assignment of ``n`` rows (scikit-learn's ``KFold``, shuffled, ``seed``)."""
    from sklearn.model_selection import KFold

    fold = np.empty(n, dtype=np.int64)
    for f, (_, test) in enumerate(KFold(k, shuffle=True, random_state=seed).split(np.zeros(n))):
        fold[test] = f
    return fold


def _correct(predicted, truth) -> int:
    return int(np.sum(predicted == truth))


def _sse(predicted, truth) -> float:
    return float(np.sum((np.asarray(predicted, dtype=float) - truth) ** 2))


def _empty(score: str = "correct") -> dict:
    return {score: [], "rows": [], "seconds": [], "leaves": []}


def _each_fold(X, y, fold, fit, leaves, score=_correct) -> dict:
    key = "correct" if score is _correct else "sse"
    out = _empty(key)
    for f in range(int(fold.max()) + 1):
        train, test = fold != f, fold == f
        Xtr, Xte = X[train].reset_index(drop=True), X[test].reset_index(drop=True)
        started = time.perf_counter()
        model = fit(Xtr, y[train])
        out["seconds"].append(time.perf_counter() - started)
        out[key].append(score(model.predict(Xte), y[test]))
        out["rows"].append(int(test.sum()))
        out["leaves"].append(int(leaves(model)))
    return out


def alpha_grid(path_alphas: np.ndarray, most: int = MAX_ALPHAS) -> np.ndarray:
    """``ccp_alpha`` candidates from a pruning path's alphas: 0 and the geometric means of consecutive
    alphas (CART's representative of each interval of the sequence; the last alpha, the root alone,
    as it is), at most ``most`` of them: when the path is longer, evenly spaced along it (by rank), so
    the largest trees' many tiny alphas do not crowd out the small trees a CV usually prefers."""
    alphas = np.unique(np.maximum(np.asarray(path_alphas, dtype=np.float64), 0.0))
    if alphas.size <= 1:
        return np.zeros(1)
    candidates = np.concatenate([[0.0], np.sqrt(alphas[1:-1] * alphas[2:]) if alphas.size > 2 else [],
                                 [alphas[-1]]])
    candidates = np.unique(candidates)
    if candidates.size > most:
        candidates = candidates[np.unique(np.round(np.linspace(0, candidates.size - 1, most)).astype(int))]
    return candidates


def weakest_links(tree) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's weakest-link loop (``sklearn/tree/_tree.pyx``, ``_cost_complexity_prune``) run once
    over a fitted ``Tree``: the effective alpha of each step, in order, and per node the step at which
    it became a leaf (-1: a leaf of the grown tree; ``steps``: never). The same arithmetic in the same
    order (each node's ``r_branch`` summed over its leaves in index order, the first least alpha
    pruned), so ``predict_at`` prunes exactly as ``_prune_tree`` does."""
    n = tree.node_count
    left, right = tree.children_left, tree.children_right
    weights = tree.weighted_n_node_samples
    r_node = weights * tree.impurity / weights[0]
    parent = np.full(n, -1, dtype=np.int64)
    internal = left != -1
    parent[left[internal]] = np.flatnonzero(internal)
    parent[right[internal]] = np.flatnonzero(internal)
    ancestors = []
    for i in range(n):
        up, j = [], parent[i]
        while j != -1:
            up.append(j)
            j = parent[j]
        ancestors.append(np.asarray(up, dtype=np.int64))
    r_branch = np.zeros(n)
    n_leaves = np.zeros(n, dtype=np.int64)
    for leaf in np.flatnonzero(~internal):  # leaf index order, each leaf bubbled up as the loop does
        r_branch[leaf] = r_node[leaf]
        for j in ancestors[leaf]:
            r_branch[j] += r_node[leaf]
            n_leaves[j] += 1
    candidate = internal.copy()
    in_subtree = np.ones(n, dtype=bool)
    leaf_step = np.where(internal, np.iinfo(np.int64).max, -1)
    alphas = []
    with np.errstate(divide="ignore", invalid="ignore"):
        while candidate[0]:
            effective = np.where(candidate, (r_node - r_branch) / (n_leaves - 1).astype(np.float64), np.inf)
            pruned = int(np.argmin(effective))  # the first least, as the loop's strict "<"
            alphas.append(float(effective[pruned]))
            stack = [pruned]
            while stack:
                i = stack.pop()
                if not in_subtree[i]:
                    continue
                candidate[i] = in_subtree[i] = False
                if left[i] != -1:
                    stack += [left[i], right[i]]
            in_subtree[pruned] = True
            leaf_step[pruned] = len(alphas) - 1
            removed = n_leaves[pruned] - 1
            n_leaves[pruned] = 0
            r_diff = r_node[pruned] - r_branch[pruned]
            r_branch[pruned] = r_node[pruned]
            up = ancestors[pruned]
            n_leaves[up] -= removed
            r_branch[up] += r_diff
    return np.asarray(alphas), leaf_step


def predict_at(tree, leaf_step: np.ndarray, step_alphas: np.ndarray, X: np.ndarray, alphas: np.ndarray,
               regression: bool) -> np.ndarray:
    """Per alpha of ``alphas`` (rows) the predictions on ``X`` of ``tree`` pruned at it, as
    ``_prune_tree`` then ``predict`` would give them (``weakest_links``: the steps; alpha 0 prunes
    nothing, as ``_prune_tree`` returns at once): a row ends at the topmost node of its path that is a
    leaf after the steps taken, the steps taken at alpha being those before the first effective alpha
    above it. Classification gives the class index (``classes_`` order), regression the value."""
    n = tree.node_count
    left, right = tree.children_left, tree.children_right
    depth = np.zeros(n, dtype=np.int64)
    paths = np.full((n, tree.max_depth + 1), -1, dtype=np.int64)
    paths[0, 0] = 0
    for i in range(n):  # parents come before children in scikit-learn's node order
        if left[i] != -1:
            for c in (left[i], right[i]):
                depth[c] = depth[i] + 1
                paths[c] = paths[i]
                paths[c, depth[c]] = c
    steps = np.where(paths >= 0, leaf_step[np.maximum(paths, 0)], np.iinfo(np.int64).max)
    value = tree.value[:, 0, 0] if regression else np.argmax(tree.value[:, 0, :], axis=1)
    leaves = tree.apply(np.ascontiguousarray(X, dtype=np.float32))
    out = []
    for alpha in alphas:
        taken = 0 if alpha == 0.0 else int(np.argmax(step_alphas > alpha)) if np.any(step_alphas > alpha) \
            else len(step_alphas)
        ends = steps < taken
        node = paths[np.arange(n), np.argmax(ends, axis=1)]  # each leaf's end: its topmost pruned-to node
        out.append(value[node[leaves]])
    return np.asarray(out)


def search_alpha(make_tree, X: np.ndarray, y: np.ndarray, alphas: np.ndarray, inner, regression: bool) -> float:
    """The ``ccp_alpha`` of ``alphas`` that ``GridSearchCV(make_tree(), {"ccp_alpha": alphas}, cv=inner,
    scoring="r2" or "accuracy")`` chooses (the best mean score over the splits, the first on a tie),
    each inner tree grown once and its predictions at every alpha read off one weakest-link sequence
    (:func:`weakest_links`, :func:`predict_at`: what ``_prune_tree`` and ``predict`` give, without a
    pruned tree built per alpha)."""
    from sklearn.metrics import accuracy_score, r2_score

    score = r2_score if regression else accuracy_score
    scores = np.empty((len(alphas), inner.get_n_splits()))
    for j, (train, test) in enumerate(inner.split(X, y)):
        tree = make_tree().fit(X[train], y[train])
        step_alphas, leaf_step = weakest_links(tree.tree_)
        predicted = predict_at(tree.tree_, leaf_step, step_alphas, X[test], alphas, regression)
        for i in range(len(alphas)):
            scores[i, j] = score(y[test], predicted[i] if regression else tree.classes_.take(predicted[i]))
    means = np.average(scores, axis=1)
    best = int(np.flatnonzero(means == means.max())[0])
    return float(alphas[best])


def sklearn_tree(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray,
                 regression: bool = False, tuned: bool = False) -> dict:
    """scikit-learn's tree at its defaults, or with ``tuned`` its ``ccp_alpha`` chosen by
    ``GridSearchCV`` (10-fold on the training fold) over :func:`alpha_grid` of its pruning path."""
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    def tree():
        return DecisionTreeRegressor(random_state=0) if regression else DecisionTreeClassifier(random_state=0)

    def fit(Xtr, ytr):
        encode = ColumnTransformer([("nominal", OneHotEncoder(handle_unknown="ignore", sparse_output=False), nominal)],
                                   remainder="passthrough")
        if not tuned:
            return make_pipeline(encode, tree()).fit(Xtr, ytr)
        encoded = encode.fit_transform(Xtr)
        ytr = np.asarray(ytr)
        path = tree().cost_complexity_pruning_path(encoded, ytr)
        inner = KFold(10, shuffle=True, random_state=0) if regression else StratifiedKFold(10, shuffle=True,
                                                                                           random_state=0)
        with warnings.catch_warnings():  # a class with fewer than 10 rows in the training fold
            warnings.simplefilter("ignore", UserWarning)
            alpha = search_alpha(tree, encoded, ytr, alpha_grid(path.ccp_alphas), inner, regression)
        final = tree().set_params(ccp_alpha=alpha).fit(encoded, ytr)
        return make_pipeline(encode, final)  # both fitted on the training fold

    return _each_fold(X, y, fold, fit, lambda m: m[-1].get_n_leaves(), _sse if regression else _correct)


def dasktree(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray, setting: dict) -> dict:
    from dasktree import DaskTreeClassifier

    return _each_fold(X, y, fold, lambda Xtr, ytr: DaskTreeClassifier(**setting).fit(Xtr, ytr, nominal=nominal),
                      lambda m: m.model_.tree.n_leaves)


#: The pruning a criterion's one ``cv`` fit is read at by :func:`dasktree_choices` (its ``param_grid``).
CHOICE_PRUNES = ("pessimistic", "cv-min", "cv")


def dasktree_choices(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray, criteria, k: int = 10
                     ) -> dict:
    """What a choice by ``cv=k`` can see and what it would get, per outer fold: for each criterion one
    ``DaskTreeClassifier(criterion=c, cv=k, param_grid={"prune": CHOICE_PRUNES})`` on the training
    fold (its ``k`` inner folds split that fold alone), its grid table's split scores for each
    pruning (the held-out accuracies a grid chooses by), and the outer fold's correct count of the
    main tree pruned each way (``prune_model``: no pass). Rows by learner name,
    ``"dasktree {criterion} {prune}"``, each with ``split_scores`` (per outer fold, the ``k`` inner
    scores) besides the usual columns; ``seconds`` is the criterion's fit, the same for its prunings
    (they share its trees)."""
    from dasktree import DaskTreeClassifier

    out = {f"dasktree {c} {p}": {**_empty(), "split_scores": []} for c in criteria for p in CHOICE_PRUNES}
    for f in range(int(fold.max()) + 1):
        train, test = fold != f, fold == f
        Xtr, Xte = X[train].reset_index(drop=True), X[test].reset_index(drop=True)
        for c in criteria:
            table = {}

            def refit(results, table=table):
                table.update({key: np.asarray(v, dtype=np.float64) for key, v in results.items()
                              if key.startswith("split") and key.endswith("_test_score")})
                return 0  # the first prune; the others are read by prune_model below

            started = time.perf_counter()
            model = DaskTreeClassifier(criterion=c, cv=k, param_grid={"prune": list(CHOICE_PRUNES)},
                                       refit=refit).fit(Xtr, y[train], nominal=nominal)
            seconds = time.perf_counter() - started
            for i, p in enumerate(CHOICE_PRUNES):
                if i:
                    model.prune_model(mode=p)
                row = out[f"dasktree {c} {p}"]
                row["correct"].append(_correct(model.predict(Xte), y[test]))
                row["rows"].append(int(test.sum()))
                row["seconds"].append(seconds)
                row["leaves"].append(int(model.model_.tree.n_leaves))
                row["split_scores"].append([None if np.isnan(table[f"split{j}_test_score"][i]) else
                                            float(table[f"split{j}_test_score"][i]) for j in range(k)])
    return out


def dasktree_regression(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray, setting: dict) -> dict:
    """``DaskTreeRegressor(**setting)`` on each training fold (with ``cv``, its inner folds split that
    training fold alone), scored by the sum of squared errors of its held-out fold."""
    from dasktree import DaskTreeRegressor

    return _each_fold(X, y, fold, lambda Xtr, ytr: DaskTreeRegressor(**setting).fit(Xtr, ytr, nominal=nominal),
                      lambda m: m.model_.tree.n_leaves, _sse)


#: The complexities ``dasktree_regression_candidates`` prunes each grown tree at (rpart's ``cp``: alpha = cp x the
#: training fold's root mean squared error).
CANDIDATE_CPS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05)
#: cp as a rule of the training rows ``n`` (regression's default at scale): rpart's 0.01 asks each split for
#: 1% of the root's squared error whatever ``n``; these ask less as ``n`` grows (``c/n``: a constant cost per
#: leaf of ``c`` times the root's mean squared error, AIC's shape; ``c log(n)/n``: BIC's).
CP_RULES = {
    **{f"cp {c}/n": (lambda n, c=c: c / n) for c in (2, 5, 10, 20)},
    **{f"cp 0.01 min(1, {m}/n)": (lambda n, m=m: 0.01 * min(1.0, m / n)) for m in (1000, 5000)},
    **{f"cp {c} log(n)/n": (lambda n, c=c: c * np.log(n) / n) for c in (1, 2)},
}


def dasktree_regression_candidates(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray,
                                   min_samples_leaf, k: int = 10) -> dict:
    """Regression pruning candidates on the same outer folds, each growth fitted once: per
    ``min_samples_leaf`` one ``DaskTreeRegressor(cv=k, min_samples_leaf=m)`` on the training fold, its
    main tree read (``prune_model``, no pass) at cv-min (the fit's own), cv (1-SE) and each cp of
    :data:`CANDIDATE_CPS` and each rule of :data:`CP_RULES` (alpha = cp x the root's training MSE, the cp
    table's one-leaf row: what ``prune="cp"`` does with its cp). Rows by name, ``"dasktree msl{m} {pruning}"``; ``seconds`` is the
    growth's fit, shared by its prunings. (The grown tree is not read: ``prune_model(mode="none")`` of a
    regressor stops with a StopIteration when a split of no gain makes the grown tree one leaf larger
    than the cp table's first row, as on servo with ``min_samples_leaf=5``.)"""
    from dasktree import DaskTreeRegressor

    prunings = ["cv-min", "cv"] + [f"cp={c}" for c in CANDIDATE_CPS] + list(CP_RULES)
    out = {f"dasktree msl{m} {p}": _empty("sse") for m in min_samples_leaf for p in prunings}
    for f in range(int(fold.max()) + 1):
        train, test = fold != f, fold == f
        Xtr, Xte = X[train].reset_index(drop=True), X[test].reset_index(drop=True)
        for m in min_samples_leaf:
            started = time.perf_counter()
            model = DaskTreeRegressor(cv=k, min_samples_leaf=m).fit(Xtr, y[train], nominal=nominal)
            seconds = time.perf_counter() - started
            table = model.model_.report["prune"]["cp_table"]
            root_mse = min(r["train_mse"] for r in table if r["leaves"] == 1)
            for p in prunings:
                if p.startswith("cp="):
                    model.prune_model(float(p[3:]) * root_mse)
                elif p in CP_RULES:
                    model.prune_model(CP_RULES[p](int(train.sum())) * root_mse)
                elif p != "cv-min":
                    model.prune_model(mode=p)
                row = out[f"dasktree msl{m} {p}"]
                row["sse"].append(_sse(model.predict(Xte), y[test]))
                row["rows"].append(int(test.sum()))
                row["seconds"].append(seconds)
                row["leaves"].append(int(model.model_.tree.n_leaves))
    return out


def regression_peers(skipped: list[str] | None = None) -> dict:
    """The regression peers that can run here, by name: ``func(X, y, nominal, fold) -> {"sse": ...}``;
    a line in ``skipped`` for each that cannot."""
    out = {"scikit-learn": lambda X, y, nominal, fold: sklearn_tree(X, y, nominal, fold, regression=True),
           "scikit-learn ccp_alpha by CV": lambda X, y, nominal, fold: sklearn_tree(X, y, nominal, fold,
                                                                                   regression=True, tuned=True)}
    if rpart_missing():
        if skipped is not None:
            skipped.append(rpart_missing())
        return out
    out["rpart anova"] = lambda X, y, nominal, fold: rpart(X, y, nominal, fold, regression=True)
    out["rpart anova min-xerror"] = lambda X, y, nominal, fold: rpart(X, y, nominal, fold, regression=True,
                                                                      rule="min")
    return out


# ---------------------------------------------------------------- peers in other processes

@functools.lru_cache(maxsize=None)
def j48_missing() -> str | None:
    """Why Weka's J48 cannot run here (one line), or None."""
    if not os.path.exists(WEKA_JAR) or shutil.which("java") is None:
        return "J48 skipped: Weka is missing (apt-get install weka)"
    if shutil.which("javac") is None:  # the source-file launcher compiles with the JDK's compiler
        return "J48 skipped: Java's compiler is missing (apt-get install default-jdk-headless)"
    return None


@functools.lru_cache(maxsize=None)
def rpart_missing() -> str | None:
    """Why R's rpart cannot run here (one line), or None."""
    if shutil.which("Rscript") is None:
        return "rpart skipped: R is missing (apt-get install r-cran-rpart)"
    done = subprocess.run(["Rscript", "-e", "q(status = !requireNamespace('rpart', quietly = TRUE))"],
                          capture_output=True, timeout=120)
    return None if done.returncode == 0 else "rpart skipped: R's rpart is missing (apt-get install r-cran-rpart)"


def _renamed(X: pd.DataFrame, y: np.ndarray, fold: np.ndarray) -> pd.DataFrame:
    """``fold, x1..xd, target``: plain names, so that no attribute name needs quoting for R or Weka."""
    frame = X.copy()
    frame.columns = [f"x{j + 1}" for j in range(X.shape[1])]
    frame.insert(0, "fold", fold)
    frame["target"] = y
    return frame


def _arff_value(value) -> str:
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def write_arff(path: str, X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray) -> None:
    """ARFF of ``fold, attributes, target``: nominal attributes (and the class) nominal over every row's
    values, numeric ones numeric, a missing value ``?``."""
    frame = _renamed(X, y, fold)
    kinds = {"fold": "NUMERIC"}
    for j, column in enumerate(X.columns):
        if column in nominal:
            values = sorted(set(X[column].dropna()))
            kinds[f"x{j + 1}"] = "{" + ",".join(_arff_value(v) for v in values) + "}"
        else:
            kinds[f"x{j + 1}"] = "NUMERIC"
    kinds["target"] = "{" + ",".join(_arff_value(v) for v in sorted(set(y))) + "}"  # the class, last
    with open(path, "w") as f:
        f.write("@RELATION accuracy\n\n")
        f.writelines(f"@ATTRIBUTE {name} {kind}\n" for name, kind in kinds.items())
        f.write("\n@DATA\n")
        cells = []
        for name, kind in kinds.items():
            column = frame[name]
            if kind == "NUMERIC":
                text = column.map(lambda v: "?" if pd.isna(v) else repr(float(v)) if name != "fold" else str(int(v)))
            else:
                text = column.map(lambda v: "?" if pd.isna(v) else _arff_value(v))
            cells.append(text.to_numpy())
        for row in zip(*cells):
            f.write(",".join(row) + "\n")


def _parse(stdout: str, who: str, key: str = "correct") -> dict:
    out = _empty(key)
    lines = [line.split() for line in stdout.strip().splitlines() if line.strip()]
    if not lines:
        raise RuntimeError(f"{who}: printed no folds")
    for _fold, score, rows, seconds, leaves in lines:
        out[key].append(int(score) if key == "correct" else float(score))
        out["rows"].append(int(rows))
        out["seconds"].append(float(seconds))
        out["leaves"].append(int(leaves))
    return out


def j48(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray) -> dict:
    with tempfile.TemporaryDirectory(prefix="dasktree-j48-") as tmp:
        path = os.path.join(tmp, "data.arff")
        write_arff(path, X, y, nominal, fold)
        done = subprocess.run(["java", "-Xmx2g", "-cp", WEKA_JAR, os.path.join(HERE, "peers", "J48Folds.java"), path],
                              capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"J48Folds: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    return _parse(done.stdout, "J48Folds")


def rpart(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray, regression: bool = False,
          rule: str = "1se") -> dict:
    """rpart's ``method="class"``, or ``method="anova"`` with ``regression``; pruned from its cp table
    by ``rule``: ``"1se"`` (the simplest tree within one xstd of the least xerror) or ``"min"`` (the
    least xerror)."""
    if rule not in ("1se", "min"):
        raise ValueError(f"rule is '1se' or 'min', not {rule!r}")
    frame = _renamed(X, y, fold)
    kinds = "i" + "".join("f" if c in nominal else "n" for c in X.columns) + ("n" if regression else "f")
    method = "anova" if regression else "class"
    with tempfile.TemporaryDirectory(prefix="dasktree-rpart-") as tmp:
        path = os.path.join(tmp, "data.csv")
        frame.to_csv(path, index=False, na_rep="")
        done = subprocess.run(["Rscript", os.path.join(HERE, "peers", "rpart_folds.R"), path, kinds, method,
                               rule],
                              capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"rpart_folds.R: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    return _parse(done.stdout, "rpart_folds.R", "sse" if regression else "correct")
