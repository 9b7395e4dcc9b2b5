"""The parameters of a regression fit (:class:`dasktree.DaskTreeRegressor`, ``fit --task regression``).

Those a regression tree reads as a classification tree does are the same
declarations (:data:`dasktree.params.declared.PARAMS`, taken by name); the
three whose values differ are declared here: ``criterion`` (the regression
criteria of :mod:`dasktree.split.regression`), ``cv`` (fold trees; no repeats)
and ``prune`` (cost complexity, or M5's pessimistic estimate of the squared
error in place of C4.5's count of errors). :func:`validate_regression` checks them, once per fit.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, Mapping

from ..split.regression import REGRESSION_CRITERIA
from .constraints import Interval, Options
from .declared import CV, LEARNING, PARAMS, PRUNING
from .param import Param, check_values, saved_defaults

__all__ = ["REGRESSION_PARAMS", "validate_regression", "REGRESSION_PRUNE", "REGRESSION_FIT_PRUNE"]

REGRESSION_PRUNE = ("auto", "cv", "cv-min", "none")
"""The pruning a saved regression model can be given again from its cp table (:mod:`dasktree.regress.reprune`)."""
#: The fit's pruning: those, rpart's complexity and M5's pessimistic estimate (each node's sum of squares,
#: which only the fit holds).
REGRESSION_FIT_PRUNE = ("auto", "cv", "cv-min", "cp", "pessimistic", "none")

_SHARED = ("max_depth", "min_samples_split", "min_samples_leaf", "min_weight_fraction_leaf", "min_impurity_decrease",
           "max_leaf_nodes", "max_bins", "max_categories", "max_histogram_mb", "seed", "ccp_alpha", "keep_fold_trees",
           "client", "scheduler", "cache", "progress", "security", "memory_limit")
_SAMPLING = ("max_features", "random_state", "monotonic_cst")  # as classification's
_BY_NAME = {p.name: p for p in PARAMS}

REGRESSION_PARAMS: tuple[Param, ...] = (
    Param("criterion", "squared_error", [Options(REGRESSION_CRITERIA)], "split", LEARNING,
          help="what a test must decrease: squared_error (CART's variance), friedman_mse (Friedman's "
               "improvement) or poisson (the Poisson deviance: a target >= 0 with a positive sum)",
          doc='What a test must decrease: "squared_error" (the sum of squared errors, CART\'s), '
              '"friedman_mse" (Friedman\'s improvement) or "poisson" (the Poisson deviance; the target must be '
              "non-negative with a positive sum). Each is chosen from a node's exact sums "
              "(:mod:`dasktree.split.regression`)."),
    *(_BY_NAME[n] for n in _SHARED[:9]),
    *(_BY_NAME[n] for n in _SAMPLING),
    Param("cv", None, [Interval(Integral, 2, None), None], "folds", CV, metavar="K",
          help="K-fold cross-validation grown in the same passes: MSE, RMSE and R^2 per fold and pooled "
               "(default: none)",
          doc="Grow ``cv`` fold trees in the same passes as the main tree and report their cross-validated "
              'MSE, RMSE and R^2 in ``report_["cv"]``; no extra pass over the data.'),
    *(_BY_NAME[n] for n in _SHARED[9:10]),
    Param("prune", "auto", [Options(REGRESSION_FIT_PRUNE), None], "prune", PRUNING,
          help="cv: cost-complexity pruning, alpha by the 1-SE rule over the --cv fold trees; cv-min: the "
               "least CV error; cp: rpart's complexity at cp = 5/n (a split must lower the squared error by 5 rows' "
               "worth of the root's mean squared error); "
               "pessimistic: M5's estimate, SSE x (n + v) / (n - v), bottom up; none: the grown tree (default "
               "auto: cv-min with --cv, else cp, chosen by benchmarks/results/regression.md)",
          doc='How the grown tree is pruned, with no pass: "cv" (CART\'s cost complexity, alpha by the 1-SE '
              'rule over the fold trees\' held-out sums, rpart\'s ``anova`` cp table), "cv-min" (the least CV '
              'error), "cp" (rpart\'s complexity at ``cp = 5 / n`` for a tree of ``n`` rows: cost complexity at '
              "alpha = cp times the root's mean squared error, so a split stays when it lowers the tree's squared "
              "error by at least five rows' worth of the root's mean squared error; the tree grows only as far as "
              "that pruning can reach, as rpart's, and re-prunes to that alpha or a larger one; with row weights "
              "it grows whole, pruned the same), \"pessimistic\" (M5's pessimistic estimate, Quinlan 1992: "
              "bottom up, a node becomes a leaf when its sum of squared errors times (n + 1) / (n - 1) is at most "
              "its subtree's times (n + v) / (n - v), v the subtree's leaves; from each node's exact sums, "
              ':func:`dasktree.regress.prune.pessimistic_leaves`), None or "none" (the grown tree). "auto" is '
              "\"cv-min\" with ``cv``, else \"cp\". Why (the measurements: `benchmarks/results/regression.md "
              "<../benchmarks/results/regression.md>`_ and the candidates in "
              "``benchmarks/results/partial/README.md``): without ``cv``, the grown tree fits the noise row by "
              "row, M5's estimate alone keeps most splits (its penalty is two rows' error per leaf), and a fixed "
              "cp (rpart's 0.01) asks each split for 1% of the root's error whatever the rows, so on large data "
              "it stops far short of what the rows support; ``5 / n`` was chosen among cp rules of the rows by a "
              "rule written before measuring (at least cp = 0.01's mean R^2 on the ten public sets, more held out"
              " at 500,000 rows, at most a tenth of the grown tree's leaves there, then the best mean). With "
              "``cv``, cv-min led the 1-SE rule on both halves of the public sets."),
    *(_BY_NAME[n] for n in _SHARED[10:]),
)


def regression_defaults() -> dict[str, Any]:
    """The defaults of the parameters a regression model keeps."""
    return saved_defaults(REGRESSION_PARAMS)


def _needs_cv(out: dict) -> str | None:
    if out["prune"] in ("cv", "cv-min") and out["cv"] is None:
        return f"prune={out['prune']!r} chooses alpha by cross-validation: give cv=k too (or ccp_alpha=)"
    return None


def _one_pruning(out: dict) -> str | None:
    if out["ccp_alpha"] is not None and out["prune"] not in (None, "auto", "none"):
        return (f"give prune= or ccp_alpha=, not both (got prune={out['prune']!r}, "
                f"ccp_alpha={out['ccp_alpha']!r})")
    return None


REGRESSION_RULES = (_needs_cv, _one_pruning)
"""The rules between a regression tree's parameters, checked after each parameter's own."""


def validate_regression(values: Mapping[str, Any]) -> dict[str, Any]:
    """Every regression parameter checked (the others take their defaults), then the rules between
    them (:func:`dasktree.params.param.check_values`, the classification's loop);
    :class:`~dasktree.errors.ParameterError` names the first bad one."""
    return check_values(REGRESSION_PARAMS, values, REGRESSION_RULES, " for a regression tree")
