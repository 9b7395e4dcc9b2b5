"""``Discretizer``: supervised discretization of every numeric column from one histogram pass.

A fit is two passes over the data, whatever its size: pass 0 (the fine bins of
each numeric column, see :mod:`dasktree.discretize.jobs`) and one histogram
pass, after which one task per numeric column runs the method on that column's
class counts, on the worker that holds the summed histogram. Only the cut
points come back. For ``mdlp``, ``distance`` and ``optimal``, a column with
more distinct values than ``max_bins`` costs at most one more pass, shared by
all such columns: the refinement (:mod:`dasktree.discretize.refine`) reads
only those columns and keeps the exact distinct values inside the fine bins
that hold more than one class, so the cuts are exactly the method's on the raw
values. ``transform`` maps each discretized column to its interval
code (or a readable label); it reads the data once more.

Conventions
-----------
* Interval ``i`` of a column with cut points ``t[0] < ... < t[m-1]`` holds
  ``t[i-1] < x <= t[i]`` (``t[-1] = -inf``, ``t[m] = +inf``), the same
  ``x <= t`` as the tree's tests. Codes are ``0 .. m``.
* Missing values stay missing: a null (NaN) input gives a null code (pandas
  ``Int32`` with ``<NA>``, Arrow/Parquet ``int32`` null) and a null label.
  The methods learn from the non-missing values only.
* Labels: ``"(-inf, 1.5]"``, ``"(1.5, 2]"``, ``"(2, inf)"``; the numbers are
  the cut points rounded to 6 significant digits, or more where adjacent cut
  points need them to stay apart (``0.1 + 0.2`` printed ``0.3``, ``2.0``
  printed ``2``); the exact cut points are in ``cut_points_``.
* Nominal columns (strings, booleans, dictionaries, or ``nominal=``),
  constant and all-missing columns, the target and non-feature columns pass
  through untouched; ``report_["columns"]`` says why for each.
* Dates, timestamps and durations are numeric as in the learner: their cut
  points are in days (dates) or the column's unit since the epoch.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
from sklearn.base import BaseEstimator, TransformerMixin

from ..engine.progress import Progress
from ..errors import DataError, InputError, ParameterError
from ..io.outputs import atomic_directory
from ..io.schema import NUMERIC, Roles, resolve_roles
from ..io.sources import Source, is_dask_frame, open_path, open_source
from .jobs import (
    DEFAULT_MAX_BINS,
    check_method_params,
    fine_spec,
    run_histogram_pass,
)
from .transform import (
    check_columns,
    interval_labels,
    transform_frame,
    transform_part,
    transform_table,
)

__all__ = ["Discretizer", "FORMAT", "VERSION", "interval_labels", "transform_table", "transform_frame"]

FORMAT = "dasktree.discretizer"
VERSION = 1
CUTS_FILE = "_discretizer.json"  # in an output directory; '_' files are skipped by the Parquet reader


def _is_path(X) -> bool:
    return isinstance(X, (str, os.PathLike)) or (
        isinstance(X, (list, tuple)) and bool(X) and all(isinstance(p, (str, os.PathLike)) for p in X))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value


# ---------------------------------------------------------------- the estimator
class Discretizer(TransformerMixin, BaseEstimator):
    """Discretize every numeric column by its class counts, from one histogram pass.

    Parameters
    ----------
    method : {"mdlp", "distance", "chimerge", "equal_width", "equal_frequency", "optimal"}, default "mdlp"
        ``mdlp``: Fayyad & Irani's recursive minimal-entropy partitioning with
        the MDL acceptance criterion. ``distance``: López de Mántaras'
        normalized distance, one cut at a time over the whole range, stopped
        by its MDL criterion (Cerquides & López de Mántaras). ``chimerge``:
        Kerber's bottom-up merging at ``significance``. ``equal_width``,
        ``equal_frequency``: unsupervised, ``n_intervals`` (default 10).
        ``optimal``: the optimal ``n_intervals``-interval partition by class
        entropy (Elomaa & Rousu's Block-Opt-P), or with ``n_intervals=None``
        the ``k <= max_arity`` of best balanced gain ``gain / log2 k``.
    max_bins : int, default 1024
        Fine bins of pass 0: a column with at most this many distinct values
        gets one bin per value (cuts between any two adjacent values, exactly
        the method's result on the raw values); a column with more gets this
        many approximate quantile bins. ``mdlp``, ``distance`` and ``optimal``
        then refine the bins that hold rows of more than one class (one more
        pass reading only those columns), and their cuts are still exactly the
        method's on the raw values; ``chimerge`` and the unsupervised methods
        choose their cuts among the quantile bins' edges.
    n_intervals : int or None, default None
        ``equal_width`` / ``equal_frequency``: the number of intervals (None:
        10). ``chimerge``: merge until at most this many (None: no limit).
        ``optimal``: exactly this many (at most 64; None: chosen by balanced
        gain). Must be None for ``mdlp`` and ``distance``.
    significance : float, default 0.05
        ``chimerge``'s significance level, in (0, 1).
    max_arity : int, default 5
        ``optimal`` with ``n_intervals=None``: the most intervals tried (2..64).
    client : distributed.Client, optional
    scheduler : {"inprocess", "processes", "threads"} or address, optional
        Without either, on the ``distributed`` client already active in this
        process if any, else in this process (a dataset too large for memory
        on a ``LocalCluster`` started for the fit), by the rule of
        :mod:`dasktree.engine.place`, as ``fit`` does.
    progress : bool, default False
        A progress bar per pass on stderr.
    security : distributed.security.Security, str or dict, optional
        TLS for a ``scheduler`` at ``tls://`` (:mod:`dasktree.engine.tls`).

    Attributes
    ----------
    cut_points_ : dict of str -> list of float
        Per discretized column, its increasing cut points ``t``; interval
        ``i`` holds ``t[i-1] < x <= t[i]``. A column without a cut has ``[]``
        (one interval).
    passed_through_ : dict of str -> str
        Feature columns left untouched and why: "nominal", "constant",
        "all missing".
    report_ : dict
        Rows, class counts, passes, and per column of the data its status,
        fine bins, cut count and class counts per interval. ``refined`` names
        the columns the refinement read, with the rows it read inside their
        refined bins and the distinct values it kept (in all, and per column
        under ``columns``: ``{"bins", "rows", "values"}``, or None).
    run_ : dict
        Timings, parts and workers of the fit (not saved).
    """

    def __init__(self, method: str = "mdlp", *, max_bins: int = DEFAULT_MAX_BINS, n_intervals: int | None = None,
                 significance: float = 0.05, max_arity: int = 5, client=None, scheduler: str | None = None,
                 progress: bool = False, security=None):
        self.method = method
        self.max_bins = max_bins
        self.n_intervals = n_intervals
        self.significance = significance
        self.max_arity = max_arity
        self.client = client
        self.scheduler = scheduler
        self.progress = progress
        self.security = security

    _RUNTIME = ("client", "scheduler", "progress", "security")
    _refine = True  # the refinement (off only to measure what it costs: benchmarks/discretize.py)

    def _learning_params(self) -> dict:
        return {k: v for k, v in self.get_params(deep=False).items() if k not in self._RUNTIME}

    def _kernel_params(self) -> dict:
        return check_method_params(self.method, n_intervals=self.n_intervals, significance=self.significance,
                                   max_arity=self.max_arity, max_bins=self.max_bins)

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, *, target: str | None = None, features: Sequence[str] | None = None,
            exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            storage_options: dict | None = None) -> "Discretizer":
        """Learn the cut points of every numeric feature of ``X`` (pass 0 and one histogram pass).

        ``X``: a pandas or dask DataFrame (a dask one with a dask ``y``, paired row by row as
        :meth:`DaskTreeClassifier.fit <dasktree.DaskTreeClassifier.fit>` pairs them), a 2-D array with ``y``, or a Parquet
        file, directory, glob or fsspec URL (or the same of CSV files) with ``target=COLUMN``.
        ``features`` / ``exclude`` pick the columns, ``nominal`` names numeric
        columns to pass through as nominal. The supervised methods refuse a target that looks
        continuous (:func:`check_target_classes`: a float column of more than
        :data:`CONTINUOUS_LABELS` distinct values) with a :class:`~dasktree.errors.ParameterError`.
        """
        started = time.perf_counter()
        kernel_params = self._kernel_params()
        bar = self.progress if isinstance(self.progress, Progress) else Progress(enabled=bool(self.progress))
        if is_dask_frame(X) and y is not None:  # paired row by row, whatever dask did to the partitions
            from ..estimator_input import join_dask

            X, target = join_dask(X, y, target)
            y = None
        source, target = open_source(X, y, target=target, storage_options=storage_options)
        roles = resolve_roles(source.schema, target, features=features, exclude=exclude, nominal=nominal,
                              where=source.description)
        numeric = Roles(roles.target, tuple(f for f, k in zip(roles.features, roles.kinds) if k == NUMERIC),
                        tuple(k for k in roles.kinds if k == NUMERIC))
        from ..engine.place import open_runner

        with open_runner(source, numeric, client=self.client, scheduler=self.scheduler, cache=None,
                         progress=bar, security=self.security) as runner:
            self._fit_with(runner, source, roles, numeric, kernel_params, started, workers=runner.workers)
        return self

    def _fit_with(self, runner, source: Source, roles: Roles, numeric: Roles, kernel_params: dict,
                  started: float, *, workers: int) -> None:
        summary = runner.summary(self.max_bins)
        check_target_classes(summary.classes, source.schema.field(roles.target).type, roles.target, self.method)
        spec, passed = fine_spec(summary, numeric, max_bins=self.max_bins, where=source.description)
        pass0 = time.perf_counter()
        results = (run_histogram_pass(runner, spec, self.method, kernel_params, refine=self._refine)
                   if spec.features else [])
        done = time.perf_counter()
        refined = {r.name: r.refined for r in results if r.refined is not None}
        by_name = {r.name: r for r in results}
        cut_points: dict[str, list[float]] = {}
        columns: dict[str, dict[str, Any]] = {}
        missing_of = dict(zip(numeric.features, summary.n_missing.tolist()))
        for bins in spec.features:
            result = by_name[bins.name]
            cut_points[bins.name] = [float(t) for t in result.points]
            columns[bins.name] = {
                "status": "discretized", "fine_bins": bins.n_bins, "exact": bool(bins.exact),
                "refined": result.refined,
                "cuts": len(result.cuts), "intervals": len(result.cuts) + 1, "missing": int(missing_of[bins.name]),
                "interval_counts": result.interval_counts.tolist(),
            }
        passed_through = {name: "nominal" for name, kind in zip(roles.features, roles.kinds) if kind != NUMERIC}
        passed_through.update(passed)
        for name in source.schema.names:
            if name in cut_points:
                continue
            if name == roles.target:
                reason = "target"
            elif name in passed_through:
                reason = passed_through[name]
            else:
                reason = "not a feature"
            columns[name] = {"status": "passed through", "reason": reason}
        rows = summary.n_rows - summary.n_null_target
        self.cut_points_ = {name: cut_points[name] for name in roles.features if name in cut_points}
        self.passed_through_ = {name: passed_through[name] for name in roles.features if name in passed_through}
        self.target_ = roles.target
        self.classes_ = np.asarray(spec.classes)
        self.feature_names_in_ = np.asarray(roles.features, dtype=object)
        self.n_features_in_ = len(roles.features)
        self.report_ = _jsonable({
            "method": self.method,
            "params": {k: v for k, v in self._learning_params().items() if k != "method"},
            "rows": int(summary.n_rows),
            "rows_used": int(rows),
            "rows_skipped_null_target": int(summary.n_null_target),
            "class_counts": {str(k): int(v) for k, v in sorted(summary.classes.items(), key=lambda kv: str(kv[0]))},
            "classes": list(spec.classes),
            "passes": runner.passes,
            "discretized": list(self.cut_points_),
            "refined": {"columns": list(refined), "rows": sum(r["rows"] for r in refined.values()),
                        "values": sum(r["values"] for r in refined.values())},
            "passed_through": dict(self.passed_through_),
            "columns": {name: columns[name] for name in source.schema.names if name in columns},
        })
        self.run_ = {
            "parts": len(source.parts),
            "workers": workers,
            "seconds": {"pass0": round(pass0 - started, 4), "histogram": round(done - pass0, 4),
                        "total": round(time.perf_counter() - started, 4)},
        }

    def _check_fitted(self) -> dict[str, list[float]]:
        if not hasattr(self, "cut_points_"):
            raise InputError("this Discretizer is not fitted yet: call fit first")
        return self.cut_points_

    # ---------------------------------------------------------------- transform
    def transform(self, X, *, labels: bool = False, out: str | None = None, overwrite: bool = False,
                  storage_options: dict | None = None):
        """Each discretized column of ``X`` as interval codes (or labels); other columns untouched.

        pandas DataFrame -> pandas DataFrame (codes ``Int32``, missing
        ``<NA>``); dask DataFrame -> dask DataFrame (lazy); 2-D array -> a
        DataFrame with columns ``x0, x1, ...``. A Parquet or CSV path or URL with
        ``out=DIR`` is written as Parquet, one file per input part plus
        ``DIR/_discretizer.json`` (the cut points), atomically (see
        :meth:`transform_dataset`); without ``out`` it is read into a pandas
        DataFrame (small data only).
        """
        cut_points = self._check_fitted()
        if not isinstance(labels, (bool, np.bool_)):
            raise InputError(f"labels must be True or False, got {labels!r}")
        if _is_path(X):
            if out is not None:
                return self.transform_dataset(X, out, labels=labels, overwrite=overwrite,
                                              storage_options=storage_options)
            source = open_path(X, storage_options=storage_options)
            check_columns(source.schema.names, cut_points, source.description)
            tables = [source.read(p, source.schema.names) for p in source.parts]
            table = pa.concat_tables(tables) if tables else source.schema.empty_table()
            return transform_frame(table.to_pandas(), cut_points, labels=bool(labels), where=source.description)
        if out is not None:
            raise InputError("out= is for dataset inputs (a Parquet path or URL)")
        if is_dask_frame(X):
            meta = transform_frame(X._meta, cut_points, labels=bool(labels), where="the dask DataFrame")
            return X.map_partitions(transform_frame, cut_points, labels=bool(labels), where="the dask DataFrame",
                                    meta=meta)
        import pandas as pd

        if isinstance(X, np.ndarray) or (isinstance(X, list) and X and not isinstance(X[0], (str, os.PathLike))):
            array = np.asarray(X)
            if array.ndim != 2:
                raise InputError(f"X must be 2-D (rows x features), got shape {array.shape}")
            X = pd.DataFrame(array, columns=[f"x{i}" for i in range(array.shape[1])])
        if not isinstance(X, pd.DataFrame):
            raise InputError(f"cannot transform {type(X).__name__}: pass a pandas or dask DataFrame, "
                             "a 2-D array or a Parquet path or URL")
        return transform_frame(X, cut_points, labels=bool(labels))

    def fit_transform(self, X, y=None, *, labels: bool = False, out: str | None = None, overwrite: bool = False,
                      **fit_params):
        """``fit(X, y, **fit_params)`` then ``transform(X, labels=..., out=...)``."""
        self.fit(X, y, **fit_params)
        return self.transform(X, labels=labels, out=out, overwrite=overwrite,
                              storage_options=fit_params.get("storage_options"))

    def transform_dataset(self, data, out: str, *, labels: bool = False, overwrite: bool = False,
                          storage_options: dict | None = None) -> list[str]:
        """Write ``data`` discretized into the directory ``out``; returns the Parquet files written.

        One file ``part-NNNNN.parquet`` per input part (all columns kept, the
        discretized ones replaced), plus ``_discretizer.json``, the saved
        discretizer. Everything is written into a hidden temporary directory
        beside ``out`` and renamed to ``out`` when complete, so a failure
        leaves nothing behind; an existing ``out`` is an error unless
        ``overwrite``. One read of the data, a part at a time, where
        :func:`dasktree.engine.place.open_parts` says (by default in this process).
        """
        from ..engine.place import open_parts

        cut_points = self._check_fitted()
        source = data if isinstance(data, Source) else open_path(data, storage_options=storage_options)
        check_columns(source.schema.names, cut_points, source.description)
        bar = self.progress if isinstance(self.progress, Progress) else Progress(enabled=bool(self.progress))
        with atomic_directory(out, overwrite=overwrite, storage_options=storage_options) as staging:
            with open_parts(source, client=self.client, scheduler=self.scheduler, progress=bar,
                            security=self.security) as parts:
                files = parts.map(transform_part, "discretize (write)", cut_points=cut_points, labels=bool(labels),
                                  directory=staging.tmp, fs=staging.fs)
            with staging.fs.open(f"{staging.tmp}/{CUTS_FILE}", "w") as f:
                f.write(self.dumps())
        return [staging.final(f) for f in files]

    # ---------------------------------------------------------------- JSON
    def to_json(self) -> dict:
        self._check_fitted()
        return _jsonable({
            "format": FORMAT,
            "version": VERSION,
            "params": self._learning_params(),
            "target": self.target_,
            "classes": list(self.classes_.tolist()),
            "features": list(self.feature_names_in_.tolist()),
            "cut_points": self.cut_points_,
            "passed_through": self.passed_through_,
            "report": self.report_,
        })

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, sort_keys=False, allow_nan=False)

    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted discretizer as versioned JSON: to a temporary name, then renamed (never pickle)."""
        from ..io.outputs import atomic_write_text

        atomic_write_text(path, self.dumps())

    @classmethod
    def from_json(cls, d: dict, where: str = "discretizer") -> "Discretizer":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise DataError(f"{where}: not a dasktree discretizer (no \"format\": \"{FORMAT}\")")
        if d.get("version") != VERSION:
            raise DataError(f"{where}: discretizer format version {d.get('version')!r}; "
                            f"this dasktree reads {VERSION}")
        try:
            params = dict(d["params"])
            unknown = set(params) - set(cls._get_param_names())
            if unknown:
                raise ValueError(f"unknown parameters {sorted(unknown)}")
            est = cls(**params)
            est._kernel_params()
            cut_points = {str(k): [float(t) for t in v] for k, v in d["cut_points"].items()}
            for name, t in cut_points.items():
                if not all(math.isfinite(x) for x in t) or any(a >= b for a, b in zip(t[:-1], t[1:])):
                    raise ValueError(f"cut points of {name!r} must be finite and increasing")
            est.cut_points_ = cut_points
            est.passed_through_ = {str(k): str(v) for k, v in d.get("passed_through", {}).items()}
            est.target_ = str(d["target"])
            est.classes_ = np.asarray(d["classes"])
            est.feature_names_in_ = np.asarray(d["features"], dtype=object)
            est.n_features_in_ = len(est.feature_names_in_)
            est.report_ = d.get("report", {})
            est.run_ = {}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{where}: malformed discretizer: {type(exc).__name__}: {exc}") from None
        return est

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Discretizer":
        """A fitted discretizer from a JSON file written by :meth:`save` (runs no code)."""
        from ..io.outputs import read_json_file

        return cls.from_json(read_json_file(path, "discretizer"), where=os.fspath(path))


CONTINUOUS_LABELS = 32
"""A float target of more distinct values than this looks continuous: the supervised methods refuse it."""

UNSUPERVISED = ("equal_width", "equal_frequency")
"""The methods that do not read the target (its classes only count the rows of each interval)."""


def check_target_classes(classes: dict, type_: pa.DataType, target: str, method: str) -> None:
    """Refuse (one line, exit 2) a supervised discretization of a target that looks continuous: a float
    column of more than :data:`CONTINUOUS_LABELS` distinct values, which the methods would take for as
    many classes (a price's 214 values: cuts that separate prices, or none at all)."""
    if pa.types.is_dictionary(type_):
        type_ = type_.value_type
    if method in UNSUPERVISED or not pa.types.is_floating(type_) or len(classes) <= CONTINUOUS_LABELS:
        return
    raise ParameterError(
        f"target {target!r} looks continuous ({type_} with {len(classes)} distinct values): supervised "
        f"discretization ({method}) cuts by class labels; give a class column as the target, or bin it first, "
        "or use an unsupervised method (equal_width, equal_frequency)")
