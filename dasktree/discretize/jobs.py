"""Discretization as a job of the pass machinery: fine bins, one histogram pass, a task per attribute.

The job has three steps, whatever the input's size:

1. **Pass 0** (the runner's ``summary``) gives each numeric attribute its *fine
   bins*: one per distinct value while there are at most ``max_bins``,
   otherwise ``max_bins`` approximate quantile bins from the fixed fine grid of
   :mod:`dasktree.binning` (the cut points a method can choose are then the
   quantile edges, not every gap between distinct values).
2. **One histogram pass** over the whole data (the plan of a single root
   node): class counts per fine bin of every attribute, summed on the workers.
3. **One task per attribute**, next to the summed histogram: the method's
   kernel (:mod:`dasktree.discretize.methods`, or Block-Opt-P for
   ``optimal``) runs on that attribute's ``(n_bins, n_classes)`` counts and
   returns its cut indices, the class counts of the intervals and of the
   missing values. Only these small results reach the client.
4. **The refinement**, for ``mdlp``, ``distance`` and ``optimal`` on quantile
   fine bins: the task returns instead which fine bins hold rows of more than
   one class (a boundary point may lie inside them), and ONE more pass reads
   only those columns, keeping the exact distinct values inside those bins with
   their class counts (:mod:`dasktree.discretize.refine`); the method then runs
   on the refined counts, whose blocks are the exact ones: its cuts are exactly
   those it finds on the raw values, placed midway between adjacent values.

Without refinement, cut ``j`` (between fine bins ``j`` and ``j + 1``, 0-based) becomes the
threshold ``upper[j]``, a fine-bin edge: interval ``i`` holds
``t[i-1] < x <= t[i]``. For the supervised methods the cuts lie on boundary
points (block borders), hence so do the thresholds.

:func:`interval_spec` is step 2-3 on a learner's runner (``binning=`` of
:func:`dasktree.fit`): it returns a :class:`~dasktree.binning.spec.BinSpec` whose
numeric bins are the intervals.
"""

from __future__ import annotations

import dataclasses

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..binning.spec import BinSpec, FeatureBins
from ..binning.summary import Summary, numeric_edges
from ..errors import DataError, ParameterError
from ..io.schema import NUMERIC, Roles
from ..kernels.plans import PassPlan
from .methods import METHODS
from .refine import (REFINING_METHODS, Refined, RefinePlan, merge_tables, refine_plan, refine_table, refined_rows,
                     shortest_midpoints)

__all__ = [
    "DISCRETIZERS",
    "DEFAULT_MAX_BINS",
    "DEFAULT_N_INTERVALS",
    "AttributeJob",
    "AttributeCuts",
    "check_method_params",
    "cut_indices",
    "cut_attribute",
    "finish_column",
    "finish_refined",
    "refine_attributes",
    "fine_spec",
    "run_histogram_pass",
    "thresholds",
    "interval_bins",
    "interval_spec",
]

DISCRETIZERS = ("mdlp", "distance", "chimerge", "equal_width", "equal_frequency", "optimal")
"""The discretization methods by name (the kernels of :data:`METHODS` plus ``optimal``)."""

DEFAULT_MAX_BINS = 1024
"""Fine bins of pass 0 for the Discretizer: exact distinct values up to this many."""

DEFAULT_N_INTERVALS = 10
"""Intervals of ``equal_width`` / ``equal_frequency`` when ``n_intervals`` is not given."""

MAX_OPTIMAL_ARITY = 64


# ---------------------------------------------------------------- parameters
def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def check_method_params(method, *, n_intervals=None, significance=0.05, max_arity=5,
                        max_bins=DEFAULT_MAX_BINS) -> dict[str, Any]:
    """Validate the parameters; returns the keyword arguments of the method's kernel.

    Messages name the parameter, what it must be and the value given.
    """
    if not isinstance(method, str) or method not in DISCRETIZERS:
        raise ParameterError(f"method must be one of {list(DISCRETIZERS)}, got {method!r}")
    if not _is_int(max_bins) or not 2 <= max_bins <= 65535:
        raise ParameterError(f"max_bins must be an integer in 2..65535, got {max_bins!r}")
    if n_intervals is not None and (not _is_int(n_intervals) or n_intervals < 1):
        raise ParameterError(f"n_intervals must be an integer >= 1 or None, got {n_intervals!r}")
    if (isinstance(significance, (bool, np.bool_)) or not isinstance(significance, Real)
            or not 0.0 < float(significance) < 1.0):
        raise ParameterError(f"significance must be a number in the open interval (0, 1), got {significance!r}")
    if not _is_int(max_arity) or not 2 <= max_arity <= MAX_OPTIMAL_ARITY:
        raise ParameterError(f"max_arity must be an integer in 2..{MAX_OPTIMAL_ARITY}, got {max_arity!r}")
    if method in ("mdlp", "distance"):
        if n_intervals is not None:
            raise ParameterError(f"n_intervals must be None for method {method!r}, which stops by its MDL "
                             f"criterion; got {n_intervals!r}")
        return {}
    if method == "chimerge":
        return {"significance": float(significance), "max_intervals": None if n_intervals is None else int(n_intervals)}
    if method == "optimal":
        if n_intervals is not None and n_intervals > MAX_OPTIMAL_ARITY:
            raise ParameterError(f"n_intervals must be at most {MAX_OPTIMAL_ARITY} for method 'optimal', "
                             f"got {n_intervals!r}")
        return {"n_intervals": None if n_intervals is None else int(n_intervals), "max_arity": int(max_arity)}
    return {"n_intervals": DEFAULT_N_INTERVALS if n_intervals is None else int(n_intervals)}


# ---------------------------------------------------------------- kernels
def _optimal(counts: np.ndarray, *, n_intervals: int | None, max_arity: int) -> np.ndarray:
    """Block-Opt-P: the optimal ``n_intervals``-interval partition, or the one of best balanced gain.

    With ``n_intervals`` given: that many intervals (fewer when the attribute
    has fewer non-empty bins). Otherwise ``k = 2 .. max_arity`` compete by
    balanced gain ``gain / log2 k`` (gain: information gain in bits); ties go
    to the smaller ``k``, and no cut is made when even the best gain is zero.
    """
    from ..split.api import block_opt_p, selection_score

    k_max = max_arity if n_intervals is None else n_intervals
    n = float(counts.sum())
    if k_max < 2 or np.count_nonzero(counts.sum(axis=1)) < 2:
        return np.zeros(0, dtype=np.intp)
    optimum = block_opt_p(counts, max_arity=k_max, criterion="entropy")
    finite = [k for k in range(2, k_max + 1) if np.isfinite(optimum.cost[k])]
    if not finite:
        return np.zeros(0, dtype=np.intp)
    if n_intervals is not None:
        return np.asarray(optimum.cuts[finite[-1]], dtype=np.intp)
    tol = 1e-9 * (1.0 + n * math.log2(n + 1.0)) / n  # bits per example, as the other kernels' slack
    best_k, best_score = None, 0.0
    for k in finite:
        gain = (float(optimum.cost[1]) - float(optimum.cost[k])) / n
        edges = np.concatenate([[0], np.asarray(optimum.cuts[k], dtype=np.intp) + 1, [counts.shape[0]]])
        children = np.add.reduceat(counts, edges[:-1], axis=0)
        score = selection_score(children, gain, "balanced_gain")
        if score > best_score + tol:
            best_k, best_score = k, score
    if best_k is None:
        return np.zeros(0, dtype=np.intp)
    return np.asarray(optimum.cuts[best_k], dtype=np.intp)


def cut_indices(counts, values, method: str, params: dict[str, Any]) -> np.ndarray:
    """Sorted cut indices of one attribute's ``(n_bins, n_classes)`` counts by ``method``.

    ``params`` are the keyword arguments from :func:`check_method_params`.
    Cut ``j`` separates bin ``j`` from bin ``j + 1`` (0-based).
    """
    counts = np.asarray(counts)
    if method == "optimal":
        return _optimal(counts.astype(np.float64), **params)
    return np.asarray(METHODS[method](counts, values, **params), dtype=np.intp)


# ---------------------------------------------------------------- the task per attribute
@dataclass(frozen=True)
class AttributeJob:
    """One numeric attribute of a histogram pass: its rows ``offset .. offset + width`` (row 0: missing)."""

    index: int  # position in the spec
    name: str
    offset: int
    width: int
    values: np.ndarray  # a value per fine bin (exact value, or the largest value of the bin)
    upper: np.ndarray  # the fine bins' upper edges
    exact: bool  # a fine bin per distinct value


@dataclass(frozen=True)
class AttributeCuts:
    """What a task returns: the cuts, class counts per interval and of the missing values.

    ``plan`` is set (and ``cuts`` empty) while the attribute waits for its refinement
    (:mod:`dasktree.discretize.refine`); ``counts`` then holds its fine bins' class counts."""

    name: str
    cuts: np.ndarray  # (n_cuts,) intp cut indices (into the fine bins, or the refined rows)
    interval_counts: np.ndarray  # (n_cuts + 1, n_classes) int64
    missing_counts: np.ndarray  # (n_classes,) int64
    points: np.ndarray  # (n_cuts,) float64 cut points: interval i holds points[i-1] < x <= points[i]
    maxima: np.ndarray  # (n_cuts + 1,) float64 the largest value of each interval
    refined: dict | None = None  # what the refinement read: bins, rows, distinct values
    plan: RefinePlan | None = None
    counts: np.ndarray | None = None
    high: np.ndarray | None = None  # the fine bins' largest values, while waiting


def _finish(name: str, bins: np.ndarray, cuts: np.ndarray, points: np.ndarray, high: np.ndarray,
            missing: np.ndarray, refined: dict | None = None) -> AttributeCuts:
    """The cuts of ``bins`` (counts per bin, ``high`` its largest values) as an :class:`AttributeCuts`."""
    edges = np.concatenate([[0], cuts + 1]).astype(np.intp)
    intervals = np.add.reduceat(bins, edges, axis=0) if bins.shape[0] else np.zeros((1, bins.shape[1]), np.int64)
    maxima = np.append(np.asarray(high, dtype=np.float64)[cuts], float(high[-1]))
    return AttributeCuts(name, cuts, intervals.astype(np.int64), missing.copy(), np.asarray(points, np.float64),
                         maxima, refined)


def cut_attribute(hist: np.ndarray, job: AttributeJob, *, layout, method: str,
                  params: dict[str, Any], refine: bool = True) -> AttributeCuts:
    """Run on a worker next to the summed histogram: the cuts of one attribute, or (``refine``, a
    method of :data:`~dasktree.discretize.refine.REFINING_METHODS`, quantile fine bins) the plan of
    its refinement.

    ``layout`` is the pass's plan: ``layout.view(hist, 0)[0]`` is the
    ``(total_bins, n_classes)`` histogram of all rows.
    """
    whole = layout.view(hist, 0)[0]
    rows = np.asarray(whole[job.offset:job.offset + job.width], dtype=np.int64)
    bins = rows[1:]
    if refine and not job.exact and method in REFINING_METHODS:
        plan = refine_plan(job.name, bins, job.upper)
        if plan is not None:
            empty = np.zeros(0)
            return AttributeCuts(job.name, np.zeros(0, np.intp), bins, rows[0].copy(), empty, empty,
                                 plan=plan, counts=bins, high=job.values)
    cuts = cut_indices(bins, job.values, method, params)
    points = np.asarray(job.upper, dtype=np.float64)[cuts]
    if job.exact and cuts.size:  # midway between two values: the nearest float of the shortest decimal
        values = np.asarray(job.values, dtype=np.float64)
        points = shortest_midpoints(values[cuts], values[np.minimum(cuts + 1, values.size - 1)])
    return _finish(job.name, bins, cuts, points, job.values, rows[0])


def finish_column(refined: dict[str, Refined], waiting: AttributeCuts, *, method: str,
                  params: dict[str, Any]) -> AttributeCuts:
    """A task next to the refinement's total: the cuts of one attribute from its refined counts."""
    return finish_refined(waiting, refined[waiting.name], method, params)


def finish_refined(waiting: AttributeCuts, refined: Refined, method: str, params: dict[str, Any]) -> AttributeCuts:
    """The cuts of an attribute from its refined counts (:func:`~dasktree.discretize.refine.refined_rows`)."""
    rows = refined_rows(waiting.counts, waiting.high, waiting.plan, refined)
    cuts = cut_indices(rows.counts, None, method, params)
    report = {"bins": int(waiting.plan.refine.sum()), "rows": int(refined.rows),
              "values": int(refined.values.size)}
    return _finish(waiting.name, rows.counts, cuts, rows.cut_points(cuts), rows.high, waiting.missing_counts,
                   report)


# ---------------------------------------------------------------- fine bins (pass 0)
def _sorted_classes(labels) -> tuple:
    try:
        return tuple(sorted(labels))
    except TypeError:
        raise DataError(f"the target mixes label types: {sorted(map(repr, labels))[:5]}") from None


def fine_spec(summary: Summary, roles: Roles, *, max_bins: int,
              where: str = "the data") -> tuple[BinSpec, dict[str, str]]:
    """The fine bins of the numeric attributes that can be cut, and the reason each other one passes through.

    Unlike the learner's bin spec, one class is allowed (nothing to cut, but
    not an error) and a constant or all-missing column is passed through
    rather than refused.
    """
    if summary.n_rows == 0:
        raise DataError(f"{where} has no rows")
    if summary.n_rows == summary.n_null_target:
        raise DataError(f"every row of {where} has a null target {roles.target!r}")
    classes = _sorted_classes(summary.classes)
    features, passed = [], {}
    for name, kind, sketch, missing in zip(roles.features, roles.kinds, summary.numeric, summary.n_missing):
        if kind != NUMERIC:
            passed[name] = "nominal"
        elif missing == summary.n_rows:
            passed[name] = "all missing"
        elif sketch.size < 2:
            passed[name] = "constant"
        else:
            upper, values, exact = numeric_edges(sketch, max_bins)
            features.append(FeatureBins(name, NUMERIC, upper, values, exact))
    return BinSpec(tuple(features), classes), passed


# ---------------------------------------------------------------- the histogram pass
def run_histogram_pass(runner, spec: BinSpec, method: str, params: dict[str, Any], *,
                       n_folds: int = 1, n_repeats: int = 1, label: str = "discretize",
                       refine: bool = True) -> list[AttributeCuts]:
    """``runner.prepare(spec)`` and ONE histogram pass; a task per numeric attribute of ``spec`` cuts it.

    With ``refine`` (the default), the attributes of quantile fine bins that a method of
    :data:`~dasktree.discretize.refine.REFINING_METHODS` could cut inside a bin are refined by
    one more pass reading only their columns (:func:`refine_attributes`): their cuts are then
    exactly the method's on the raw values."""
    offsets, widths = spec.offsets, spec.widths
    jobs = [AttributeJob(a, f.name, int(offsets[a]), int(widths[a]), np.asarray(f.values, dtype=np.float64),
                         np.asarray(f.upper, dtype=np.float64), bool(f.exact))
            for a, f in enumerate(spec.features) if f.kind == NUMERIC]
    runner.prepare(spec, n_folds, level_passes=False)
    plan = PassPlan.root(widths, spec.n_classes, n_folds, n_repeats)
    results = runner.apply_pass(plan, cut_attribute, jobs, label, layout=plan, method=method, params=params,
                                refine=refine)
    if any(r.plan is not None for r in results):
        results = refine_attributes(runner, spec, results, method, params, label=label)
    return results


def refine_attributes(runner, spec: BinSpec, results: list[AttributeCuts], method: str, params: dict[str, Any],
                      *, label: str = "discretize") -> list[AttributeCuts]:
    """The refinement pass (:mod:`dasktree.discretize.refine`): one pass reading the target (and
    the weight) and the columns waiting in ``results``; each of them is then cut on its refined counts."""
    from ..engine.part_pass import reduce_parts

    waiting = [r for r in results if r.plan is not None]
    by_name = {f.name: f for f in spec.features}
    target = runner.roles.target
    weighting = spec.weighting
    columns = [target, *([] if weighting is None or weighting.column is None else [weighting.column]),
               *(r.name for r in waiting)]
    finished = reduce_parts(runner, refine_table, merge_tables, columns, f"{label} (refinement)",
                            plans=[r.plan for r in waiting], bins={r.name: by_name[r.name] for r in waiting},
                            classes=spec.classes, target=target, weighting=weighting,
                            then=finish_column, items=waiting, then_kwargs=dict(method=method, params=params))
    done = {r.name: r for r in finished}
    return [done.get(r.name, r) for r in results]


def thresholds(bins: FeatureBins, cuts: np.ndarray) -> list[float]:
    """The cut points of fine-bin cut indices: bin upper edges."""
    return [float(t) for t in np.asarray(bins.upper, dtype=np.float64)[np.asarray(cuts, dtype=np.intp)]]


# ---------------------------------------------------------------- binning= of the learner
def interval_bins(bins: FeatureBins, result: AttributeCuts) -> FeatureBins:
    """The intervals of an attribute's cuts as its bins.

    Interval ``i`` holds ``points[i-1] < x <= points[i]`` with ``points`` the
    cut points; its value is its largest value, as for quantile bins. The bins
    stay ``exact`` only if no two fine bins merged.
    """
    exact = bool(bins.exact and result.points.size == bins.n_bins - 1)
    return FeatureBins(bins.name, NUMERIC, np.asarray(result.points, dtype=np.float64),
                       np.asarray(result.maxima, dtype=np.float64), exact)


def interval_spec(runner, fine: BinSpec, method: str, *, n_folds: int = 1, n_repeats: int = 1) -> BinSpec:
    """Global discretization for the learner: ``fine`` with every numeric attribute's bins
    replaced by the intervals ``method`` (default parameters) finds in ONE histogram pass.

    Nominal attributes keep their categories. A numeric attribute without a cut
    becomes a single bin, so no test is made on it.
    """
    params = check_method_params(method)  # each method's defaults
    if not any(f.kind == NUMERIC for f in fine.features):
        return fine
    results = run_histogram_pass(runner, fine, method, params, n_folds=n_folds, n_repeats=n_repeats)
    features = list(fine.features)
    by_name = {r.name: r for r in results}
    for a, bins in enumerate(fine.features):
        if bins.kind == NUMERIC:
            features[a] = interval_bins(bins, by_name[bins.name])
    return dataclasses.replace(fine, features=tuple(features))  # the classes and row weighting as they were
