"""``refit=TowardsFirst(...)`` (:class:`dasktree.model.grid.TowardsFirst`): the 1-SE rule towards a grid's
first setting, the choice measured for ``cv=k`` on the accuracy suite (the criteria grown in the same
passes, each pruned pessimistically). Against a plain-Python twin, and on a fitted grid's own table."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dasktree import DaskTreeClassifier
from dasktree.model.grid import TowardsFirst


def _frame(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b, c = rng.integers(0, 9, n), rng.integers(0, 6, n), rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    score = a - b + (colour == "red") * 3 + c + rng.normal(scale=2.0, size=n)
    y = np.where(score > 5, "high", np.where(score > 1, "mid", "low"))
    return pd.DataFrame({"a": a, "b": b, "c": c, "colour": colour}), y


def _margin(scores: list[list[float | None]]) -> tuple[int, float]:
    """The 1-SE rule towards setting 0, in plain Python: the best setting (first of equal means) and by
    how much its mean beats setting 0's mean plus the best's standard error."""
    kept = [[v for v in row if v is not None] for row in scores]
    means = [sum(v) / len(v) if v else -math.inf for v in kept]
    best = means.index(max(means))
    se = statistics.stdev(kept[best]) / math.sqrt(len(kept[best])) if len(kept[best]) > 1 else 0.0
    return best, means[best] - (means[0] + se)


def _naive(scores: list[list[float | None]]) -> int:
    """The rule's choice: the best if its margin is positive, else setting 0."""
    best, margin = _margin(scores)
    return best if margin > 0 else 0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n_settings: st.integers(2, 10).flatmap(
    lambda k: st.lists(st.lists(st.one_of(st.none(), st.sampled_from([0.5, 0.6, 0.75, 0.8, 0.9, 1.0]),
                                          st.floats(0, 1)), min_size=k, max_size=k),
                       min_size=n_settings, max_size=n_settings))))
def test_towards_first_is_the_plain_rule(scores):
    # a margin of a rounding either way is a tie in exact arithmetic (0.8 and 0.0 against 0.0: mean 0.4,
    # standard error 0.4), which numpy's deviation and the exactly rounded statistics.stdev may round apart
    margin = _margin(scores)[1]
    assume(not abs(margin) < 1e-9)
    results = {f"split{j}_test_score": np.array([np.nan if row[j] is None else row[j] for row in scores])
               for j in range(len(scores[0]))}
    assert TowardsFirst("x")(results) == _naive(scores)


def test_a_grid_of_the_criteria_keeps_the_rules_choice():
    X, y = _frame()
    grid = {"criterion": ["gain_ratio", "gini", "entropy"], "prune": ["pessimistic"]}
    fitted = DaskTreeClassifier(cv=5, param_grid=grid, refit=TowardsFirst("criterion='gain_ratio'")).fit(
        X, y, nominal=["colour"])
    report = fitted.model_.report["grid"]
    assert report["refit"] == "1-SE towards criterion='gain_ratio'" and report["growths"] == 3
    table = report["cv_results"]
    scores = [[table[f"split{j}_test_score"][i] for j in range(5)] for i in range(3)]
    chosen = _naive(scores)
    assert report["best_index"] == chosen
    assert fitted.best_params_ == {"criterion": table["params"][chosen]["criterion"], "prune": "pessimistic"}
    # the model is the chosen setting's: its parameters, its pruning and its CV estimate
    assert fitted.model_.params["criterion"] == fitted.best_params_["criterion"]
    assert fitted.model_.report["prune"]["mode"] == "pessimistic"
    assert fitted.model_.report["cv"]["accuracy_mean"] == report["best_score"]
    # cv alone still chooses nothing: the parameters' own tree, pruned by the folds
    plain = DaskTreeClassifier(cv=5).fit(X, y, nominal=["colour"]).model_
    assert "grid" not in plain.report and plain.report["prune"]["mode"] == "cv-min"
