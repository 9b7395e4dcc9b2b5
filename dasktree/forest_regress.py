"""A regression forest: ``fit_forest_regression(data, ...) -> ForestModel`` (``task`` Regression).

The pipeline of :func:`dasktree.forest_fit.fit_forest` with the regression tree's passes
(:func:`dasktree.regress.grow.grow_regression` with ``bagged``): each row carries its multiplicity
in every member's bag (:class:`dasktree.io.bagging.BagSpec`, the same bags as a classification
forest's), the regression level pass adds its fixed-point target times that integer multiplicity
(exact int64 sums), and each member searches its own ``max_features`` attributes per node
(:func:`dasktree.levels.sampling.feature_mask`, as classification's). A member's leaf predicts its
bag's mean; the forest averages the members' leaf means. With ``oob_score``, one more pass
scores every row with the members whose bag left it out: R^2 over the rows any member left out,
from sums exact whatever the partitioning (:func:`exact_sum`).
"""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction
from typing import Sequence

import numpy as np
import pyarrow as pa

from .binning.encode import encode_features
from .binning.spec import bin_spec as make_bin_spec
from .engine.memory_plan import parse_memory_limit
from .engine.part_pass import reduce_parts
from .engine.place import open_runner
from .errors import DataError, ParameterError
from .fit import _weight_column
from .levels.sampling import resolve_max_features
from .io.bagging import BagSpec, multiplicities
from .io.schema import resolve_roles
from .io.sources import DEFAULT_PART_ROWS, TableSource, open_source
from .io.weights import WeightStats, weighting
from .model.forest_model import ForestModel
from .params.forest import FOREST_PARAMS, NOT_FOR_FORESTS, bag_mean, forest_values
from .params.regression import validate_regression
from .regress.grow import RegressionGrowParams, grow_regression
from .regress.task import REGRESSION
from .regress.trees import tree_models

__all__ = ["fit_forest_regression", "oob_values", "exact_sum", "validate_forest_regression"]

REGRESSION_MAX_FEATURES = 1.0
"""A regression forest's default ``max_features``: every attribute, as scikit-learn's RandomForestRegressor."""


def validate_forest_regression(values: dict) -> tuple[dict, dict]:
    """(the forest's parameters, the members' regression settings) of ``values``; ParameterError names
    the first bad one, or a single tree's parameter a forest refuses."""
    names = {p.name for p in FOREST_PARAMS}
    refused = sorted(n for n in values if n in NOT_FOR_FORESTS and values[n] is not None
                     and not (n == "prune" and values[n] in ("none", "auto")))
    if refused:
        raise ParameterError(f"{refused[0]} is not for forests: their members are grown in full and not pruned, "
                             "nor cross-validated (oob_score=True gives an estimate)")
    forest = forest_values({"max_features": REGRESSION_MAX_FEATURES, **values})
    if forest["oob_score"] and not forest["bootstrap"]:
        raise ParameterError("oob_score=True needs bootstrap=True: without bags no row is out of bag")
    if forest["max_samples"] is not None and not forest["bootstrap"]:
        raise ParameterError("max_samples is the bags' size: give it with bootstrap=True")
    if values.get("max_leaf_nodes") is not None:
        raise ParameterError("max_leaf_nodes is not for forests yet: their members are grown in full")
    tree = {k: v for k, v in values.items() if k not in names and k not in NOT_FOR_FORESTS}
    return forest, validate_regression({**tree, "prune": "none"})


def fit_forest_regression(data, y=None, *, target: str | None = None, features: Sequence[str] | None = None,
                          exclude: Sequence[str] = (), nominal: Sequence[str] = (), key: str | None = None,
                          client=None, scheduler: str | None = None, cache: bool | str = "auto",
                          part_rows: int = DEFAULT_PART_ROWS, storage_options: dict | None = None, progress=False,
                          sample_weight=None, memory_limit: int | str | None = None, security=None,
                          positional: bool = False, **params) -> ForestModel:
    """Learn a regression forest of ``n_estimators`` trees from ``data``, every member in the same passes.

    The arguments are :func:`dasktree.forest_fit.fit_forest`'s; ``max_features`` defaults to 1.0 (every
    attribute, as scikit-learn's RandomForestRegressor), the members' parameters are a regression
    tree's (:func:`dasktree.fit_regression`'s but cross-validation, pruning and ``max_leaf_nodes``).

    Returns
    -------
    ForestModel
        Its ``task`` is Regression; ``report["oob_score"]`` is the out-of-bag R^2 when ``oob_score``;
        for data in memory ``run["oob_prediction"]`` holds each row's out-of-bag prediction (NaN where
        no member left the row out).
    """
    started = time.perf_counter()
    forest_params, settings = validate_forest_regression(params)
    limit = parse_memory_limit(memory_limit)
    source, target = open_source(data, y, target=target, part_rows=part_rows, storage_options=storage_options)
    source, weight = _weight_column(source, sample_weight, part_rows)
    n = forest_params["n_estimators"]
    bag = BagSpec(n, forest_params["random_state"], bag_mean(forest_params["max_samples"], source.n_rows),
                  forest_params["bootstrap"], key, positional=positional)
    roles = resolve_roles(source.schema, target, features=features, exclude=exclude, nominal=nominal,
                          extra=bag.columns, weight=weight, where=source.description)
    roles = dataclasses.replace(roles, regression=True)
    bag = bag.hashing(roles)
    with open_runner(source, roles, folds=bag, client=client, scheduler=scheduler, cache=cache, progress=progress,
                     security=security, memory_limit=limit) as runner:
        summary = runner.summary(settings["max_bins"])
        spec = make_bin_spec(summary, roles, max_bins=settings["max_bins"], max_categories=settings["max_categories"],
                             where=source.description)
        if settings["criterion"] == "poisson" and spec.target.lo < 0:
            raise DataError(f"criterion 'poisson' needs a target >= 0; {roles.target!r} goes down to "
                            f"{spec.target.lo} in {source.description}")
        if roles.weight is not None:
            rows = int(summary.n_rows - summary.n_null_target)
            stats = summary.weights or WeightStats({0: 1.0}, {0: rows})
            spec = dataclasses.replace(spec, weighting=weighting(roles.weight, stats, (0,), {0: rows}))
        runner.prepare(spec, n)
        k = resolve_max_features(forest_params["max_features"], spec.n_features)
        grow_params = RegressionGrowParams(
            criterion=settings["criterion"], max_depth=settings["max_depth"],
            min_samples_split=settings["min_samples_split"], min_samples_leaf=settings["min_samples_leaf"],
            min_impurity_decrease=float(settings["min_impurity_decrease"]),
            max_histogram_mb=min(settings["max_histogram_mb"], getattr(runner, "max_histogram_mb", None) or np.inf),
            bagged=True, max_features=k, feature_seed=forest_params["random_state"])
        nodes, levels, blocks = grow_regression(runner, spec, grow_params, holdout=np.full(n, -1, dtype=np.int64),
                                                rows=int(summary.n_rows))
        members, _, _ = tree_models(nodes, n, blocks, spec)
        members = [dataclasses.replace(m, validation=None) if getattr(m, "validation", None) is not None else m
                   for m in members]
        del nodes
        saved = {name: v for name, v in settings.items() if name not in ("keep_fold_trees", "prune", "cv", "ccp_alpha")}
        params_saved = {**saved, **{name: v for name, v in forest_params.items() if name != "oob_score"},
                        "max_features_per_node": k}
        model = ForestModel(spec=dataclasses.replace(spec, weighting=None), target=roles.target, members=members,
                            params=params_saved, task=REGRESSION)
        report = {
            "rows": int(summary.n_rows),
            "rows_used": int(summary.n_rows - summary.n_null_target - summary.n_zero_weight),
            "members": n,
            "nodes": int(sum(m.n_nodes for m in members)),
            "leaves": int(sum(m.n_leaves for m in members)),
            "max_depth": int(max(m.max_depth for m in members)),
            "passes": runner.passes,
        }
        if forest_params["oob_score"]:
            sums = reduce_parts(runner, _oob_part, _sum, roles.columns, "out-of-bag", model=model, bag=bag)
            report["oob_score"] = oob_r2(sums)
            report["oob_rows"] = int(sums[0])
            report["passes"] = runner.passes
        model.report = report
        model.run = {"seconds": {"total": round(time.perf_counter() - started, 4)}, "workers": runner.workers,
                     "levels": levels}
        if forest_params["oob_score"] and isinstance(source, TableSource):  # in memory: each row's prediction too
            values, n_out = oob_values(source.table.select(roles.columns), model=model, bag=bag)
            values[n_out == 0] = np.nan
            model.run["oob_prediction"] = values
        return model


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
    out = np.zeros(4, dtype=object)
    for p in parts:
        out = out + np.asarray(p, dtype=object)
    return out


def _oob_part(table: pa.Table, *, model: ForestModel, bag: BagSpec) -> np.ndarray:
    """One part's (rows with out-of-bag members, exact sums of y, y^2 and squared errors) (object ints)."""
    values, n_out = oob_values(table, model=model, bag=bag)
    y = table.column(model.target).to_numpy(zero_copy_only=False).astype(np.float64)
    scored = (n_out > 0) & np.isfinite(y)
    y, p = y[scored], values[scored]
    return np.asarray([int(np.count_nonzero(scored)), exact_sum(y), exact_sum(y * y), exact_sum((y - p) ** 2)],
                      dtype=object)
