"""A saved model evaluated on a labelled dataset: one pass (in process or on a cluster, as
:func:`dasktree.engine.place.open_parts` puts it), a leaves x classes table back.

Each part's task routes its rows to the model's leaves and counts the true
classes there (``counts[node, class]``, int64); the driver sums the parts'
tables and :func:`dasktree.model.metrics.leaf_metrics` turns the sum into
precision, recall, F1, balanced accuracy, log-loss and ROC AUC. Rows whose
label is missing are skipped and counted; a label the model never saw is an
error naming it. With a weight column each row counts its weight (float64
sums, added part by part in the parts' order), as scikit-learn's metrics take
``sample_weight``.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError, InputError
from ..io.sources import Part, Source, open_path
from ..io.weights import weight_values
from ..model.metrics import leaf_metrics
from ..model.model import Model

__all__ = ["evaluate_dataset", "leaf_class_counts"]


def leaf_class_counts(model: Model, table, target: str, where: str = "data",
                      weight: str | None = None) -> tuple[np.ndarray, int]:
    """``counts[node, class]`` of ``table``'s labelled rows at the model's nodes (int64; float64 sums
    of column ``weight``'s values when given), and the rows without a label."""
    import pandas as pd

    labels = table.column(target).to_pandas()
    codes = pd.Categorical(labels, categories=list(model.classes)).codes.astype(np.int64)
    unknown = (codes < 0) & labels.notna().to_numpy()
    if unknown.any():
        raise DataError(f"{where}: label {labels[unknown].iloc[0]!r} of column {target!r} is not a class of "
                        f"the model ({list(model.classes)})")
    leaves = model.leaves(table)
    keep = codes >= 0
    if weight is None:
        counts = np.zeros((model.tree.n_nodes, len(model.classes)), dtype=np.int64)
        np.add.at(counts, (leaves[keep], codes[keep]), 1)
    else:
        w = weight_values(table.column(weight), weight, where)
        counts = np.zeros((model.tree.n_nodes, len(model.classes)), dtype=np.float64)
        np.add.at(counts, (leaves[keep], codes[keep]), w[keep])
    return counts, int((~keep).sum())


def _count_part(part: Part, *, source: Source, model: Model, target: str,
                weight: str | None = None) -> tuple[np.ndarray, int]:
    table = source.read(part, [*model.features, target, *([weight] if weight else [])])
    return leaf_class_counts(model, table, target, where=f"{source.description} part {part.index}", weight=weight)


def evaluate_dataset(model: Model, data, target: str, *, client=None, scheduler: str | None = None,
                     progress=None, storage_options: dict | None = None, weight: str | None = None,
                     security=None) -> dict:
    """Metrics of ``model`` on the labelled Parquet or CSV dataset ``data`` (class column ``target``), each
    row weighted by column ``weight`` when given; ``security``: TLS for a ``tls://`` scheduler
    (:mod:`dasktree.engine.tls`)."""
    from .place import open_parts

    source = data if isinstance(data, Source) else open_path(data, storage_options=storage_options)
    missing = [c for c in [*model.features, target, *([weight] if weight else [])] if c not in source.schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is missing from {source.description}")
    if model.task == "regression":
        return _evaluate_regression(model, source, target, client=client, scheduler=scheduler, progress=progress,
                                    weight=weight, security=security)
    with open_parts(source, client=client, scheduler=scheduler, progress=progress, security=security) as parts:
        results = parts.map(_count_part, "evaluate", model=model, target=target, weight=weight)
    counts = np.zeros((model.tree.n_nodes, len(model.classes)), dtype=np.int64 if weight is None else np.float64)
    skipped = 0
    for part_counts, part_skipped in results:
        counts += part_counts
        skipped += part_skipped
    leaves = [i for i, test in enumerate(model.tree.tests) if test is None]
    report = leaf_metrics(counts[leaves], model.tree.value[leaves], model.classes)
    predicted = np.argmax(model.tree.value[leaves], axis=1)
    confusion = np.zeros((len(model.classes),) * 2, dtype=counts.dtype)
    for c in range(len(model.classes)):
        confusion[:, c] = counts[leaves][predicted == c].sum(axis=0)
    report["rows_skipped_null_target"] = skipped
    report["confusion_matrix"] = {"classes": [str(c) for c in model.classes],
                                  "rows_true_columns_predicted": confusion.tolist()}
    return report


def _error_part(part: Part, *, source: Source, model: Model, target: str, weight: str | None = None):
    """A regression model's error sums on one part (:mod:`dasktree.regress.metrics`), and its rows
    without a target."""
    import pyarrow.compute as pc

    from ..regress.metrics import part_stats

    where = f"{source.description} part {part.index}"
    table = source.read(part, [*model.features, target, *([weight] if weight else [])])
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


def _evaluate_regression(model: Model, source: Source, target: str, *, client, scheduler, progress, weight,
                         security) -> dict:
    from ..regress.metrics import ErrorSums, merge, metrics_of
    from .place import open_parts

    with open_parts(source, client=client, scheduler=scheduler, progress=progress, security=security) as parts:
        results = parts.map(_error_part, "evaluate", model=model, target=target, weight=weight)
    total, skipped = ErrorSums(), 0
    for sums, part_skipped in results:  # in the parts' order: the same floats whatever the cluster
        total = merge(total, sums)
        skipped += part_skipped
    return {**metrics_of(total), "rows_skipped_null_target": skipped}
