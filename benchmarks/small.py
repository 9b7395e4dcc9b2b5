"""In-memory fits of small data beside scikit-learn's fit of the same rows.

Each fit is ``DaskTreeClassifier().fit(X, y)`` against ``DecisionTreeClassifier().fit(X, y)``
(defaults: gini, grown to purity), alternated in this one process after one untimed fit of each
(compiled kernels loaded); the figure is the median of the rounds. Datasets: scikit-learn's bundled
iris, wine, breast cancer and digits; ``make_classification`` with 100,000 rows and 20 features;
and a frame of 3,190 rows with 60 nominal attributes of 4 to 8 categories and 3 classes (the shape
of the UCI splice-junction data), which dasktree splits by category subsets and scikit-learn
learns from ordinal codes.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from benchmarks import harness

NAME = "small"
CLAIM = "In-memory fits of up to 100,000 rows, nominal-heavy data included, within 2x scikit-learn's fit time"


def nominal_frame(n: int = 3190, d: int = 60, seed: int = 0):
    """``n`` rows of ``d`` nominal attributes (4-8 categories, letters) and 3 classes from three of them."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"a{j}": rng.choice(list("ACGTDNSR")[:4 + j % 5], n) for j in range(d)})
    score = ((frame["a29"] == "G").astype(int) + frame["a30"].isin(["A", "T"]).astype(int)
             + (frame["a31"] == "C").astype(int) + rng.random(n) * 0.8)
    return frame, np.where(score > 2.0, "EI", np.where(score > 1.2, "IE", "N"))


def _datasets(quick: bool) -> dict:
    from sklearn import datasets
    from sklearn.preprocessing import OrdinalEncoder

    out = {name: getattr(datasets, f"load_{name}")(return_X_y=True) * 2
           for name in ("iris", "wine", "breast_cancer", "digits")}  # (X, y, X for scikit-learn, y)
    X, y = datasets.make_classification(20_000 if quick else 100_000, 20, n_informative=10, random_state=0)
    out["make_classification"] = (X, y, X, y)
    frame, labels = nominal_frame()
    out["60 nominal attributes"] = (frame, labels, OrdinalEncoder().fit_transform(frame), labels)
    return out


def _seconds(func) -> float:
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


def run(quick: bool) -> harness.Result:
    from sklearn.tree import DecisionTreeClassifier

    from dasktree import DaskTreeClassifier

    rounds = 3 if quick else 7
    rows, figures = [], {}
    for name, (X, y, X_sk, y_sk) in _datasets(quick).items():
        ours = lambda: DaskTreeClassifier().fit(X, y)  # noqa: E731
        theirs = lambda: DecisionTreeClassifier(random_state=0).fit(X_sk, y_sk)  # noqa: E731
        ours(), theirs()
        a, b = [], []
        for _ in range(rounds):
            a.append(_seconds(ours))
            b.append(_seconds(theirs))
        a_med, b_med = harness.median(a), harness.median(b)
        figures[name] = {"rows": len(y), "columns": int(np.shape(X)[1]), "dasktree": a, "sklearn": b,
                         "ratio": a_med / b_med}
        rows.append((name, len(y), np.shape(X)[1], a_med, b_med, a_med / b_med))
    lines = [f"Median of {rounds} alternated fits in one process (a shared machine: ratios, not seconds).", "",
             "| data | rows | columns | dasktree fit | scikit-learn fit | ratio (target <= 2x) |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {n} | {r:,} | {c} | {a * 1000:.1f} ms | {b * 1000:.1f} ms | {q:.2f}x |" for n, r, c, a, b, q in rows]
    summary = [(f"in-memory fit / scikit-learn's, {n}", f"{q:.2f}x") for n, _, _, _, _, q in rows]
    return harness.Result(summary, "\n".join(lines) + "\n", figures)


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
