"""The parameters of a forest (:class:`dasktree.DaskForestClassifier`, ``dasktree fit --trees N``).

The forest's own, declared here once (:data:`FOREST_PARAMS`): ``n_estimators``, ``max_features``,
``bootstrap``, ``max_samples``, ``oob_score``, ``random_state``. Every learning parameter of a single
tree (:data:`dasktree.params.declared.PARAMS`) applies to each member, but those of
cross-validation, grids and pruning (:data:`NOT_FOR_FORESTS`): a forest's members are grown in
full and not pruned, as scikit-learn's. :func:`validate_forest` checks them once per fit.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Mapping

from ..errors import ParameterError
from . import Settings, validate
from .constraints import Boolean, Interval, Options
from .param import Param

__all__ = ["FOREST_PARAMS", "NOT_FOR_FORESTS", "validate_forest", "forest_values"]

FOREST = "forest (members grown in the same passes)"

FOREST_PARAMS: tuple[Param, ...] = (
    Param("n_estimators", 100, [Interval(Integral, 1, 32767)], "grow", FOREST, metavar="N",
          help="members of the forest, grown together in the same passes",
          doc="Members of the forest (trees), grown together: one pass per level for all of them."),
    Param("max_features", "sqrt", [Options(("sqrt", "log2")), Interval(Integral, 1, None),
                                   Interval(Real, 0, 1, closed="right"), None], "split", FOREST,
          type_doc='{"sqrt", "log2"}, int, float or None',
          help="attributes each member searches at each node: sqrt, log2, a number, a fraction, or all (none)",
          doc='Attributes each member searches at a node, drawn anew per (member, node) from '
              '``random_state``, the member and the node\'s path (:mod:`dasktree.levels.sampling`): '
              '"sqrt" or "log2" of the attributes, an int, a float fraction of them, or None (all).'),
    Param("bootstrap", True, [Boolean()], "folds", FOREST,
          help="each member counts each row its Poisson(1) multiplicity drawn from the row's content",
          doc="Each member counts each row a Poisson(``max_samples``) number of times drawn from a hash of the "
              "row's content and the member (:mod:`dasktree.io.bagging`): the same bags whatever the files, "
              "parts or workers. False: every row once in every member."),
    Param("max_samples", None, [Interval(Real, 0, 1, closed="right"), Interval(Integral, 1, None), None],
          "folds", FOREST, type_doc="float, int or None",
          help="the bags' mean size: a fraction of the rows, or a number of rows (default: all)",
          doc="The bags' mean size, the Poisson draw's mean: a fraction of the rows, a number of rows, or None "
              "(as many as the rows: a mean of 1)."),
    Param("oob_score", False, [Boolean()], "model", FOREST,
          help="score the forest on each row's out-of-bag members (one more pass)",
          doc="Score the forest on the out-of-bag rows: each row predicted by the members whose bag left it out "
              "(``oob_score_``; the estimator's ``oob_decision_function_``). One more pass over the data."),
    Param("random_state", 0, [Interval(Integral, 0, 2**63 - 1)], "folds", FOREST,
          help="seed of the bags and the feature samples",
          doc="Seed of the bags and of the feature samples (an int: the same seed, the same forest)."),
)

NOT_FOR_FORESTS = ("cv", "repeats", "param_grid", "refit", "keep_fold_trees", "prune", "ccp_alpha", "confidence",
                   "postpone", "min_weight_fraction_leaf")
"""The single tree's parameters a forest refuses: its members are grown in full and not pruned (and
``min_weight_fraction_leaf`` is not in the members' search yet). ``monotonic_cst`` holds in every member
(each member's nodes bounded by its own values), so the forest's average is monotone too: a classification
forest's; a regression forest refuses it (:data:`REGRESSION_NOT_YET`)."""
_NOT_YET = {"min_weight_fraction_leaf": "a member's search does not take it (min_samples_leaf does)"}
REGRESSION_NOT_YET = {"monotonic_cst": "a regression member's level search does not take its value bounds yet (a "
                                       "classification forest's members and a single regression tree do)"}
"""What a regression forest refuses that a classification forest takes: its members' search in
``dasktree.regress.grow`` grows children outside the node's bounds, so clipping cannot keep the
order of its subtrees."""


def forest_values(values: Mapping[str, Any]) -> dict:
    """The forest's own parameters of ``values`` checked, the others left out (defaults filled)."""
    return {p.name: p.check(values.get(p.name, p.default)) for p in FOREST_PARAMS}


def validate_forest(values: Mapping[str, Any], n_rows: int | None = None, *, members=validate) -> tuple[dict, Settings]:
    """(the forest's parameters, the members' :class:`~dasktree.params.Settings`) of ``values``; ``members``:
    the members' validation (a regression forest's: :func:`dasktree.params.regression.validate_regression`).

    Raises :class:`~dasktree.errors.ParameterError`: one line naming the parameter, what it must be
    and what it got; a parameter of :data:`NOT_FOR_FORESTS` given is refused by name."""
    names = {p.name for p in FOREST_PARAMS}
    refused = sorted(n for n in values if n in NOT_FOR_FORESTS and values[n] is not None
                     and not (n == "prune" and values[n] in ("none", "auto"))
                     and not (n == "min_weight_fraction_leaf" and values[n] == 0))
    if len(refused) == 1 and refused[0] in _NOT_YET:
        raise ParameterError(f"{refused[0]} is not for forests yet: {_NOT_YET[refused[0]]}")
    if members is not validate:  # a regression forest's members
        for name, why in REGRESSION_NOT_YET.items():
            if values.get(name) is not None:
                raise ParameterError(f"{name} is not for regression forests yet: {why}")
    if refused:
        raise ParameterError(f"{refused[0]} is not for forests: their members are grown in full and not pruned, "
                             "nor cross-validated (oob_score=True gives an estimate)")
    forest = forest_values(values)
    if forest["oob_score"] and not forest["bootstrap"]:
        raise ParameterError("oob_score=True needs bootstrap=True: without bags no row is out of bag")
    if forest["max_samples"] is not None and not forest["bootstrap"]:
        raise ParameterError("max_samples is the bags' size: give it with bootstrap=True")
    tree = {k: v for k, v in values.items() if k not in names and k not in NOT_FOR_FORESTS}
    return forest, members({**tree, "prune": "none"})


def bag_mean(max_samples, n_rows: int) -> float:
    """The Poisson draw's mean from ``max_samples`` and the rows of the input."""
    if max_samples is None:
        return 1.0
    if isinstance(max_samples, Integral) and not isinstance(max_samples, bool):
        if n_rows <= 0 or max_samples > n_rows:
            raise ParameterError(f"max_samples must be at most the rows ({n_rows}), got {max_samples}")
        return max_samples / n_rows
    return float(max_samples)


