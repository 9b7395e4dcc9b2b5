"""The functional core of forests, of both tasks: ``fit_forest(data, ..., task=) -> ForestModel``.

The same pipeline as :func:`dasktree.fit`: the input opened as parts with its column roles, a
runner where :func:`dasktree.engine.place.open_runner` puts the job, pass 0 and the bin spec; then
the forest's members grown together, one pass per level for all of them: each row carries its
multiplicity in each member's bag, drawn from its content hash (:class:`dasktree.io.bagging.BagSpec`),
and each member searches its own sample of the attributes at each node (:mod:`dasktree.levels.sampling`).
With ``oob_score``, one more pass scores every row with the members whose bag left it out. What a
task's forest does its own way is its forest object's (:data:`FORESTS`): :class:`ClassificationForest`
or :class:`dasktree.regress.forest.RegressionForest`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Sequence

import numpy as np
import pyarrow as pa

from .binning.encode import class_codes, encode_features
from .binning.spec import bin_spec as make_bin_spec
from .engine.memory_plan import parse_memory_limit
from .engine.part_pass import reduce_parts
from .engine.place import open_runner
from .engine.checkpoint import Resuming
from .fit import _weight_column, checkpoint_of, fit_of
from .levels.grow import grow
from .levels.sampling import resolve_max_features
from .levels.to_model import tree_model
from .gc_pause import collector_paused
from .io.bagging import BagSpec, multiplicities
from .io.schema import resolve_roles
from .io.sources import DEFAULT_PART_ROWS, TableSource, open_source
from .model.forest_model import ForestModel
from .model.task import CLASSIFICATION, Task
from .params.forest import bag_mean, validate_forest
from .regress.forest import REGRESSION_FOREST

__all__ = ["fit_forest", "fit_forest_regression", "oob_votes", "ClassificationForest", "FORESTS"]


def fit_forest(data, y=None, *, task: str | Task = "classification", target: str | None = None,
               features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
               key: str | None = None, client=None, scheduler: str | None = None, cache: bool | str = "auto",
               part_rows: int = DEFAULT_PART_ROWS, storage_options: dict | None = None, progress=False,
               sample_weight=None, class_weight=None, memory_limit: int | str | None = None, security=None,
               positional: bool = False, checkpoint: str | None = None, **params) -> ForestModel:
    """Learn a forest of ``n_estimators`` trees from ``data``, every member in the same passes.

    Parameters
    ----------
    data, y, target, features, exclude, nominal, client, scheduler, cache, part_rows, storage_options,
    progress, sample_weight, class_weight, memory_limit, security
        As :func:`dasktree.fit`'s.
    task : "classification", "regression" or a task (:mod:`dasktree.model.task`)
        What the members predict (:func:`fit_forest_regression`).
    key : str, optional
        A column whose values key the rows for the bags' hash (default: the row's content: its values in
        the features and the target, by the columns' names).
    positional : bool
        Name the content's columns by their places, not their names, in the bags' hash (the estimator's
        ``X, y``: an array and a DataFrame of the same values give one forest).
    checkpoint : str or path, optional
        As :func:`dasktree.fit`'s: a dataset's fit saves every level pass of the members here
        (:mod:`dasktree.engine.checkpoint`); the same forest fit started again replays them and goes on
        from the first pass not saved, to the same forest. A checkpoint of other data, parameters or
        columns is refused. Its passes are those of the fit without a checkpoint (a pass that grows
        small nodes in memory is saved as its grown subtrees), which give the same members.
    **params
        The forest's parameters (:data:`dasktree.params.forest.FOREST_PARAMS`: ``n_estimators``,
        ``max_features``, ``bootstrap``, ``max_samples``, ``oob_score``, ``random_state``) and the
        members' learning parameters (:func:`dasktree.fit`'s, but cross-validation, grids and pruning).

    Returns
    -------
    ForestModel
        Its ``report["oob_score"]`` is the out-of-bag accuracy (a regression forest's: R^2) when
        ``oob_score`` (the rows that are out of some member's bag); for data in memory its
        ``run["oob_decision_function"]`` holds each input row's out-of-bag class probabilities (a
        regression forest's ``run["oob_prediction"]`` its prediction), NaN where no member left the row out.
    """
    started = time.perf_counter()
    fitting = fit_of(task)
    forest = FORESTS[fitting.task]
    forest_params, settings = forest.validate({**params, "class_weight": class_weight})
    limit = parse_memory_limit(memory_limit)
    source, target = open_source(data, y, target=target, part_rows=part_rows, storage_options=storage_options)
    source, weight = _weight_column(source, sample_weight, part_rows)
    n = forest_params["n_estimators"]
    bag = BagSpec(n, forest_params["random_state"], bag_mean(forest_params["max_samples"], source.n_rows),
                  forest_params["bootstrap"], key, positional=positional)
    roles = resolve_roles(source.schema, target, features=features, exclude=exclude, nominal=nominal,
                          extra=bag.columns, weight=weight, where=source.description)
    roles = dataclasses.replace(roles, regression=not fitting.task.predicts_classes)  # the target: numbers
    bag = bag.hashing(roles)
    saving = None if checkpoint is None else checkpoint_of(checkpoint, source, fitting.task, {
        "params": {**forest.member_params(settings), **{name: v for name, v in forest_params.items()
                                                        if name != "oob_score"}},  # the out-of-bag pass comes after
        "part_rows": part_rows, "positional": positional,
        "columns": {"target": roles.target, "features": list(features or []), "exclude": list(exclude),
                    "nominal": list(nominal), "key": key, "weight": weight}})
    with open_runner(source, roles, folds=bag, client=client, scheduler=scheduler, cache=cache, progress=progress,
                     security=security, memory_limit=limit) as runner:
        summary = runner.summary(settings["max_bins"])
        spec = make_bin_spec(summary, roles, max_bins=settings["max_bins"], max_categories=settings["max_categories"],
                             where=source.description)
        spec = fitting.weighed(spec, summary, roles, source, settings)
        if saving is not None:
            saving.check_spec(spec)
        runner.prepare(spec, n)
        k = resolve_max_features(forest_params["max_features"], spec.n_features)
        passes = runner if saving is None else Resuming(runner, saving)  # saved passes come from the checkpoint
        members, levels = forest.grow_members(runner, passes, spec, settings, n, k, forest_params["random_state"],
                                              int(summary.n_rows))
        params_saved = {**forest.member_params(settings),
                        **{name: v for name, v in forest_params.items() if name != "oob_score"},
                        "max_features_per_node": k}
        model = ForestModel(spec=dataclasses.replace(spec, weighting=None), target=roles.target, members=members,
                            params=params_saved, task=fitting.task)
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
            report.update(forest.oob_report(runner, model, bag, roles.columns))
            report["passes"] = runner.passes
        model.report = report
        model.run = {"seconds": {"total": round(time.perf_counter() - started, 4)}, "workers": runner.workers,
                     "levels": levels}
        if forest_params["oob_score"] and isinstance(source, TableSource):  # in memory: each row's votes too
            model.run.update(forest.oob_rows(source.table.select(roles.columns), model, bag))
        return model


def fit_forest_regression(data, y=None, **options) -> ForestModel:
    """Learn a regression forest: :func:`fit_forest` with ``task="regression"`` (its arguments;
    ``max_features`` defaults to 1.0, every attribute, as scikit-learn's RandomForestRegressor; the
    members' parameters are a regression tree's, :func:`dasktree.fit_regression`'s, but
    cross-validation, pruning and ``max_leaf_nodes``)."""
    return fit_forest(data, y, task="regression", **options)


class ClassificationForest:
    """A classification forest's own steps of :func:`fit_forest` (a regression forest's:
    :class:`dasktree.regress.forest.RegressionForest`): its settings (``validate``), its members'
    passes (``grow_members``) and parameters (``member_params``), the out-of-bag score (``oob_report``:
    one more pass; ``oob_rows``: each in-memory row's estimate)."""

    task = CLASSIFICATION
    validate = staticmethod(validate_forest)

    @staticmethod
    def grow_members(runner, passes, spec, settings, n: int, max_features: int, seed: int,
                     rows: int) -> tuple[list, list]:
        """The members grown together, bagged (their passes made by ``passes``: the runner, or its
        checkpoint's replay): their trees and the level reports."""
        grow_params = settings.grow
        if getattr(runner, "max_histogram_mb", None) is not None:
            grow_params = dataclasses.replace(grow_params, max_histogram_mb=min(grow_params.max_histogram_mb,
                                                                                runner.max_histogram_mb))
        forest, grow_report = grow(passes, spec, grow_params, n_trees=n, bagged=True, max_features=max_features,
                                   feature_seed=seed)
        with collector_paused():
            members = [tree_model(forest, t) for t in range(n)]
            del forest
        return members, [dataclasses.asdict(level) for level in grow_report.levels]

    @staticmethod
    def member_params(settings) -> dict:
        return {name: v for name, v in settings.saved.items() if name != "prune"}

    @staticmethod
    def oob_report(runner, model: ForestModel, bag: BagSpec, columns: list[str]) -> dict:
        correct, counted = reduce_parts(runner, _oob_part, _sum, columns, "out-of-bag", model=model, bag=bag)
        return {"oob_score": float(correct / counted) if counted else None, "oob_rows": int(counted)}

    @staticmethod
    def oob_rows(table: pa.Table, model: ForestModel, bag: BagSpec) -> dict:
        votes, n_out = oob_votes(table, model=model, bag=bag)
        votes[n_out == 0] = np.nan
        return {"oob_decision_function": votes}


FORESTS = {forest.task: forest for forest in (ClassificationForest(), REGRESSION_FOREST)}
"""Each task's forest (its own steps of :func:`fit_forest`), by its task object."""


def oob_votes(table: pa.Table, *, model: ForestModel, bag: BagSpec) -> tuple[np.ndarray, np.ndarray]:
    """(the mean class probabilities of each row's out-of-bag members (n_rows, n_classes), the
    number of those members per row): each row's multiplicity in every member drawn again from
    its content hash, as the passes drew it."""
    codes = encode_features(table, model.spec)
    left_out = multiplicities(bag.row_hashes(table), bag.seed, bag.n_members, bag.mean) == 0  # (members, rows)
    votes = np.zeros((table.num_rows, len(model.classes)))
    for lo in range(0, table.num_rows, 1 << 14):
        proba = model.member_proba_codes(np.ascontiguousarray(codes[:, lo:lo + (1 << 14)]))  # (members, rows, C)
        votes[lo:lo + (1 << 14)] = np.einsum("mr,mrc->rc", left_out[:, lo:lo + (1 << 14)].astype(np.float64), proba)
    n_out = left_out.sum(axis=0)
    np.divide(votes, n_out[:, None], out=votes, where=n_out[:, None] > 0)
    return votes, n_out


def _sum(*counts: np.ndarray) -> np.ndarray:
    """The OOB pass's combine: parts' counts added (exact integers, in any grouping)."""
    return np.sum(counts, axis=0)


def _oob_part(table: pa.Table, *, model: ForestModel, bag: BagSpec) -> np.ndarray:
    """One part's (rows predicted right by their out-of-bag members, rows with any), int64."""
    votes, n_out = oob_votes(table, model=model, bag=bag)
    y = class_codes(table.column(model.target), model.spec.classes)
    scored = (n_out > 0) & (y >= 0)
    return np.asarray([int(np.count_nonzero(np.argmax(votes, axis=1)[scored] == y[scored])),
                       int(np.count_nonzero(scored))], dtype=np.int64)
