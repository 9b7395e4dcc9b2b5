"""What only a regression forest has, as :func:`dasktree.forest_fit.fit_forest` (``task="regression"``) asks.

Its members grow in the regression tree's passes (:func:`dasktree.regress.grow.grow_regression` with
``bagged``): each row carries its multiplicity in every member's bag (:class:`dasktree.io.bagging.BagSpec`,
the same bags as a classification forest's), the regression level pass adds its fixed-point target
times that integer multiplicity (exact int64 sums), and each member searches its own ``max_features``
attributes per node (:func:`dasktree.levels.sampling.feature_mask`, as classification's). A member's
leaf predicts its bag's mean; the forest averages the members' leaf means. With ``oob_score``, one
more pass scores every row with the members whose bag left it out: R^2 over the rows any member left
out, from sums exact whatever the partitioning (:func:`exact_sum`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pyarrow as pa

from ..binning.encode import encode_features
from ..engine.part_pass import reduce_parts
from ..gc_pause import collector_paused
from ..errors import ParameterError
from ..io.bagging import BagSpec, multiplicities
from ..levels.to_model import tree_model
from ..model.forest_model import ForestModel
from ..params.forest import validate_forest
from ..params.regression import validate_regression
from .grow import grow_params, grow_regression
from .task import REGRESSION

__all__ = ["RegressionForest", "REGRESSION_FOREST", "REGRESSION_MAX_FEATURES", "oob_values", "exact_sum",
           "validate_forest_regression"]

REGRESSION_MAX_FEATURES = 1.0
"""A regression forest's default ``max_features``: every attribute, as scikit-learn's RandomForestRegressor."""


def validate_forest_regression(values: dict) -> tuple[dict, dict]:
    """(the forest's parameters, the members' regression settings) of ``values``
    (:func:`dasktree.params.forest.validate_forest`'s rules; ``max_leaf_nodes`` refused too); ParameterError
    names the first bad one, or a single tree's parameter a forest refuses."""
    forest, settings = validate_forest({"max_features": REGRESSION_MAX_FEATURES, **values},
                                       members=validate_regression)
    if settings["max_leaf_nodes"] is not None:
        raise ParameterError("max_leaf_nodes is not for forests yet: their members are grown in full")
    return forest, settings


class RegressionForest:
    """A regression forest's own steps of :func:`dasktree.forest_fit.fit_forest` (a classification
    forest's: :class:`dasktree.forest_fit.ClassificationForest`)."""

    task = REGRESSION

    @staticmethod
    def validate(values: dict) -> tuple[dict, dict]:
        if values.get("class_weight") is None:
            values = {k: v for k, v in values.items() if k != "class_weight"}
        return validate_forest_regression(values)

    @staticmethod
    def grow_members(runner, passes, spec, settings: dict, n: int, max_features: int, seed: int,
                     rows: int) -> tuple[list, list]:
        """The members grown together, bagged (``rows``: the data's, from pass 0; their passes made by
        ``passes``: the runner, or its checkpoint's replay): their trees and the level reports."""
        params = grow_params(settings, runner, bagged=True, max_features=max_features, feature_seed=seed)
        forest, levels = grow_regression(passes, spec, params, holdout=np.full(n, -1, dtype=np.int64), rows=rows)
        with collector_paused():  # hundreds of thousands of lists and tests, no cycles: nothing to collect
            trees = [tree_model(forest, t) for t in range(forest.n_trees)]
        return trees, levels  # no tree holds rows out: no validation sums

    @staticmethod
    def member_params(settings: dict) -> dict:
        return {name: v for name, v in settings.items() if name not in ("keep_fold_trees", "prune", "cv", "ccp_alpha")}

    @staticmethod
    def oob_report(runner, model: ForestModel, bag: BagSpec, columns: list[str]) -> dict:
        """The out-of-bag R^2 and its rows, from one more pass."""
        sums = reduce_parts(runner, _oob_part, _sum, columns, "out-of-bag", model=model, bag=bag)
        return {"oob_score": oob_r2(sums), "oob_rows": int(sums[0])}

    @staticmethod
    def oob_rows(table: pa.Table, model: ForestModel, bag: BagSpec) -> dict:
        """Each in-memory row's out-of-bag prediction (NaN where no member left the row out)."""
        values, n_out = oob_values(table, model=model, bag=bag)
        values[n_out == 0] = np.nan
        return {"oob_prediction": values}


REGRESSION_FOREST = RegressionForest()


def oob_values(table: pa.Table, *, model: ForestModel, bag: BagSpec) -> tuple[np.ndarray, np.ndarray]:
    """(the mean prediction of each row's out-of-bag members (n_rows,), the number of those members per
    row): each row's multiplicity in every member drawn again from its content hash, as the passes drew it."""
    codes = encode_features(table, model.spec)
    left_out = multiplicities(bag.row_hashes(table), bag.seed, bag.n_members, bag.mean) == 0  # (members, rows)
    out = np.zeros(table.num_rows)
    step = 1 << 14
    for lo in range(0, table.num_rows, step):
        values = model.member_proba_codes(np.ascontiguousarray(codes[:, lo:lo + step]))[:, :, 0]  # (members, rows)
        out[lo:lo + step] = np.einsum("mr,mr->r", left_out[:, lo:lo + step].astype(np.float64), values)
    n_out = left_out.sum(axis=0)
    np.divide(out, n_out, out=out, where=n_out > 0)
    return out, n_out


def exact_sum(x: np.ndarray) -> int:
    """The exact sum of float64 values ``x`` times 2**1074, a Python int (every finite double is an
    integer multiple of 2**-1074): parts' sums add to the same total in any grouping."""
    x = np.asarray(x, dtype=np.float64)
    if not x.size:
        return 0
    mantissa, exponent = np.frexp(x)  # x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    m = np.ldexp(mantissa, 53).astype(np.int64)  # exact: 53 bits
    e = exponent.astype(np.int64) - 53 + 1074  # x = m * 2**(e - 1074), e >= 0 for normal values
    shift = np.maximum(e, 0)
    m = np.where(e < 0, m >> np.minimum(-e, 63), m)  # subnormals: exact, their low bits are zero
    total = 0
    for value in np.unique(shift).tolist():
        mine = m[shift == value]
        hi, lo = mine >> 26, mine & ((1 << 26) - 1)  # each sum stays far inside int64
        total += (int(hi.sum()) * (1 << 26) + int(lo.sum())) << value
    return total


def oob_r2(sums) -> float | None:
    """R^2 of the out-of-bag predictions from (rows, sum y, sum y^2, sum (y - prediction)^2), the sums
    scaled by 2**1074 (:func:`exact_sum`): 1 - SSE / (sum y^2 - (sum y)^2 / rows), exactly, then rounded."""
    count, sy, syy, sse = (int(v) for v in sums)
    if count == 0:
        return None
    scale = Fraction(1, 1 << 1074)
    total = Fraction(syy) * scale - (Fraction(sy) * scale) ** 2 / count
    if total == 0:
        return None
    return float(1 - Fraction(sse) * scale / total)


def _sum(*parts: np.ndarray) -> np.ndarray:
    """The OOB pass's combine: parts' exact sums (Python ints) added, in any grouping."""
    return np.sum(np.asarray(parts, dtype=object), axis=0)


def _oob_part(table: pa.Table, *, model: ForestModel, bag: BagSpec) -> np.ndarray:
    """One part's (rows with out-of-bag members, exact sums of y, y^2 and squared errors) (object ints)."""
    values, n_out = oob_values(table, model=model, bag=bag)
    y = table.column(model.target).to_numpy(zero_copy_only=False).astype(np.float64)
    scored = (n_out > 0) & np.isfinite(y)
    y, p = y[scored], values[scored]
    return np.asarray([int(np.count_nonzero(scored)), exact_sum(y), exact_sum(y * y), exact_sum((y - p) ** 2)],
                      dtype=object)
