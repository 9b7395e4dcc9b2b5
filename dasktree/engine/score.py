"""``DaskTreeClassifier.score`` on dask collections: accuracy counted partition by partition on the
cluster, ``y`` (and ``sample_weight``) paired with ``X`` row by row by
:func:`~dasktree.estimator_input.join_dask`, whatever dask did to their partitions."""

from __future__ import annotations

import numpy as np

from ..estimator_input import join_dask

__all__ = ["dask_score"]


def dask_score(model, X, y, sample_weight=None, client=None) -> float:
    """Mean accuracy of ``model`` on dask ``X, y`` (weighted by ``sample_weight``); NaN without rows."""
    import dask

    data, truth = join_dask(X, y, "y", columns=model.features)
    weight = None
    if sample_weight is not None:
        data, weight = join_dask(data, sample_weight, "sample_weight", what="sample_weight")
    hits = [dask.delayed(_hits)(part, model=model, truth=truth, weight=weight) for part in data.to_delayed()]
    total = dask.delayed(np.sum)(hits, axis=0)  # in partition order: the same sum every time
    right, rows = client.compute(total).result() if client is not None else total.compute()
    return float(right / rows) if rows else float("nan")


def _hits(frame, *, model, truth: str, weight: str | None) -> np.ndarray:
    """Correct predictions and rows of one partition of ``X`` joined with its labels (each row
    counted by its weight when there is a ``weight`` column)."""
    from ..io.sources import frame_to_table

    if not len(frame):
        return np.zeros(2)
    proba = model.predict_proba_table(frame_to_table(frame.reset_index(drop=True)))
    right = np.asarray(model.classes)[np.argmax(proba, axis=1)] == frame[truth].to_numpy()
    if weight is None:
        return np.array([int(np.sum(right)), len(frame)])
    w = frame[weight].to_numpy(dtype=np.float64)
    return np.array([float(np.sum(w[right])), float(np.sum(w))])
