"""Prediction on in-memory data and on datasets (written as Parquet, atomically).

``predict_dataset`` reads the input part by part on the workers, writes one
Parquet file per part into a hidden temporary directory beside ``out`` and
renames it to ``out`` only when every part is written: a failure leaves
nothing behind. Each output row holds the prediction (column ``prediction``)
and one probability column per class (``proba_<class>``), plus any ``keep``
columns copied from the input.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from .dataset import Part, ParquetSource, Source, frame_to_table
from .errors import InputError
from .model import Model
from .outputs import atomic_directory, gather_with_progress

__all__ = ["predict_table", "predict_dataset", "prediction_columns", "as_table"]


def prediction_columns(model: Model) -> list[str]:
    return ["prediction", *[f"proba_{c}" for c in model.classes]]


def as_table(model: Model, X) -> pa.Table:
    """In-memory input as an Arrow table with the model's feature names."""
    import pandas as pd

    if isinstance(X, pa.Table):
        return X
    if isinstance(X, pd.DataFrame):
        return frame_to_table(X.reset_index(drop=True))
    array = np.asarray(X)
    if array.ndim != 2:
        raise InputError(f"X must be 2-D (rows x features), got shape {array.shape}")
    if array.shape[1] != len(model.features):
        raise InputError(f"X has {array.shape[1]} columns but the model uses {len(model.features)} features")
    return frame_to_table(pd.DataFrame(array, columns=model.features))


def predict_table(model: Model, table: pa.Table, keep: Sequence[str] = ()) -> pa.Table:
    """Prediction and class probabilities for every row of ``table``."""
    proba = model.predict_proba_table(table)
    labels = np.asarray(model.classes, dtype=object)[np.argmax(proba, axis=1)] if len(proba) else []
    label_type = pa.array(list(model.classes)).type
    columns = {name: table.column(name) for name in keep}
    columns["prediction"] = pa.array(list(labels), type=label_type)
    for i, c in enumerate(model.classes):
        columns[f"proba_{c}"] = pa.array(proba[:, i] if len(proba) else np.zeros(0), type=pa.float64())
    return pa.table(columns)


def _predict_part(part: Part, *, source: Source, model: Model, keep: Sequence[str], directory: str,
                  fs) -> tuple[str, list[int]]:
    import pyarrow.parquet as pq

    columns = [*dict.fromkeys([*model.features, *keep])]
    table = source.read(part, columns)
    out = predict_table(model, table, keep)
    path = f"{directory}/part-{part.index:05d}.parquet"
    with fs.open(path, "wb") as f:
        pq.write_table(out, f)
    proba = out.select([f"proba_{c}" for c in model.classes]).to_pandas().to_numpy()
    predicted = np.bincount(np.argmax(proba, axis=1), minlength=len(model.classes)) if len(proba) else \
        np.zeros(len(model.classes), dtype=np.int64)
    return path, predicted.tolist()


def predict_dataset(model: Model, data, out: str, *, keep: Sequence[str] = (), overwrite: bool = False,
                    client=None, scheduler: str | None = None, progress=None,
                    counts: dict | None = None) -> list[str]:
    """Predict every row of a Parquet dataset into the directory ``out``; returns the files.

    ``counts``, if given, receives the rows written (``"rows"``) and the rows
    predicted as each class (``"class_counts"``, class name -> rows).
    """
    from .cluster import connect

    source = data if isinstance(data, Source) else ParquetSource(data)
    missing = [c for c in [*model.features, *keep] if c not in source.schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is missing from {source.description}")
    with atomic_directory(out, overwrite=overwrite) as staging:
        with connect(client, scheduler) as dask_client:
            [source_f] = dask_client.scatter([source], broadcast=True, hash=False)
            [model_f] = dask_client.scatter([model], broadcast=True, hash=False)
            futures = [
                dask_client.submit(_predict_part, part, source=source_f, model=model_f, keep=tuple(keep),
                                   directory=staging.tmp, fs=staging.fs, pure=False)
                for part in source.parts
            ]
            written = gather_with_progress(dask_client, futures, progress, "predict")
    per_class = np.sum([c for _, c in written], axis=0, dtype=np.int64) if written else \
        np.zeros(len(model.classes), dtype=np.int64)
    if counts is not None:
        counts["rows"] = int(per_class.sum())
        counts["class_counts"] = {str(c): int(n) for c, n in zip(model.classes, per_class)}
    return [staging.final(f) for f, _ in written]
