"""Regression metrics from per-part sums: what ``dasktree evaluate`` reports for a regression model.

Each part gives its rows' count (weighted), sums of squared and absolute
errors, largest absolute error, and the target's mean and sum of squared
deviations (:func:`part_stats`); parts merge in a fixed order with Chan's
update (:func:`merge`), so the result does not depend on how the rows are
split, and equals :mod:`sklearn.metrics` (``mean_squared_error``,
``mean_absolute_error``, ``r2_score``, ``max_error``) up to float rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ErrorSums", "part_stats", "merge", "metrics_of", "table_stats", "merged_metrics"]


@dataclass(frozen=True)
class ErrorSums:
    n: float = 0.0  # rows, or the sum of their weights
    squared: float = 0.0
    absolute: float = 0.0
    largest: float = 0.0
    mean: float = 0.0  # of the target
    m2: float = 0.0  # sum of squared deviations of the target from its mean


def part_stats(y: np.ndarray, predicted: np.ndarray, weight: np.ndarray | None = None) -> ErrorSums:
    y, predicted = np.asarray(y, np.float64), np.asarray(predicted, np.float64)
    w = np.ones(y.size) if weight is None else np.asarray(weight, np.float64)
    n = float(w.sum())
    if n == 0:
        return ErrorSums()
    e = y - predicted
    mean = float(np.sum(w * y) / n)
    return ErrorSums(n, float(np.sum(w * e * e)), float(np.sum(w * np.abs(e))),
                     float(np.abs(e).max()) if e.size else 0.0, mean, float(np.sum(w * (y - mean) ** 2)))


def merge(a: ErrorSums, b: ErrorSums) -> ErrorSums:
    if a.n == 0:
        return b
    if b.n == 0:
        return a
    n = a.n + b.n
    delta = b.mean - a.mean
    return ErrorSums(n, a.squared + b.squared, a.absolute + b.absolute, max(a.largest, b.largest),
                     a.mean + delta * b.n / n, a.m2 + b.m2 + delta * delta * a.n * b.n / n)


def metrics_of(s: ErrorSums) -> dict:
    n = max(s.n, 1e-300)
    mse = s.squared / n
    return {"rows": s.n, "mse": mse, "rmse": float(np.sqrt(mse)), "mae": s.absolute / n,
            "r2": 1.0 - s.squared / s.m2 if s.m2 > 0 else (1.0 if s.squared == 0 else 0.0),
            "max_error": s.largest, "target_mean": s.mean}


def table_stats(model, table, target: str, where: str, weight: str | None = None) -> tuple[ErrorSums, int]:
    """A regression model's error sums on the rows of ``table`` with a target, and the rows without one."""
    import pyarrow.compute as pc

    from ..errors import DataError
    from ..io.weights import weight_values

    column = table.column(target)
    keep = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    try:
        y = np.asarray(pc.cast(column, "float64").to_numpy(zero_copy_only=False), dtype=np.float64)[keep]
    except Exception:  # noqa: BLE001  (arrow's cast errors are many; each means: not numbers)
        raise DataError(f"{where}: target {target!r} is {column.type}, not numeric") from None
    if not np.isfinite(y).all():
        raise DataError(f"{where}: target {target!r} has a non-finite value")
    w = weight_values(table.column(weight), weight, where)[keep] if weight else None
    predicted = model.predict_values(table.filter(keep) if not keep.all() else table)
    return part_stats(y, predicted, w), int((~keep).sum())


def merged_metrics(results: list[tuple[ErrorSums, int]]) -> dict:
    """The metrics of the parts' error sums, merged in the parts' order (the same floats whatever the
    cluster), and the rows skipped without a target."""
    total, skipped = ErrorSums(), 0
    for sums, part_skipped in results:
        total = merge(total, sums)
        skipped += part_skipped
    return {**metrics_of(total), "rows_skipped_null_target": skipped}
