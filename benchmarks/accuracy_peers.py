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
  ``ccp_alpha=0`` and pruned at every candidate by scikit-learn's own ``_prune_tree`` (what ``fit``
  does after growing: with ``random_state`` fixed the grown tree is the same); a test checks that it
  chooses as ``GridSearchCV`` does.
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


def search_alpha(make_tree, X: np.ndarray, y: np.ndarray, alphas: np.ndarray, inner, regression: bool) -> float:
    """The ``ccp_alpha`` of ``alphas`` that ``GridSearchCV(make_tree(), {"ccp_alpha": alphas}, cv=inner,
    scoring="r2" or "accuracy")`` chooses (the best mean score over the splits, the first on a tie),
    each inner tree grown once and pruned at every alpha (scikit-learn's ``_prune_tree``)."""
    from sklearn.metrics import accuracy_score, r2_score

    score = r2_score if regression else accuracy_score
    scores = np.empty((len(alphas), inner.get_n_splits()))
    for j, (train, test) in enumerate(inner.split(X, y)):
        tree = make_tree().fit(X[train], y[train])
        grown = tree.tree_
        for i, alpha in enumerate(alphas):
            tree.tree_, tree.ccp_alpha = grown, float(alpha)
            tree._prune_tree()
            scores[i, j] = score(y[test], tree.predict(X[test]))
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


def dasktree_regression(X: pd.DataFrame, y: np.ndarray, nominal: list[str], fold: np.ndarray, setting: dict) -> dict:
    """``DaskTreeRegressor(**setting)`` on each training fold (with ``cv``, its inner folds split that
    training fold alone), scored by the sum of squared errors of its held-out fold."""
    from dasktree import DaskTreeRegressor

    return _each_fold(X, y, fold, lambda Xtr, ytr: DaskTreeRegressor(**setting).fit(Xtr, ytr, nominal=nominal),
                      lambda m: m.model_.tree.n_leaves, _sse)


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
