"""Prediction on in-memory data and on datasets (written as Parquet, atomically).

``predict_dataset`` reads the input part by part (on threads in this process, or
on the workers of a cluster when one is named), writes one
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
from .local_runner import IN_PROCESS, cores
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
                  fs) -> str:
    import pyarrow.parquet as pq

    columns = [*dict.fromkeys([*model.features, *keep])]
    table = source.read(part, columns)
    out = predict_table(model, table, keep)
    path = f"{directory}/part-{part.index:05d}.parquet"
    with fs.open(path, "wb") as f:
        pq.write_table(out, f)
    return path


def _predict_here(source: Source, model: Model, keep: tuple, staging, progress) -> list[str]:
    """Every part predicted in this process, a part at a time on a thread per core (the kernels
    and Parquet's reader and writer release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(part):
        return _predict_part(part, source=source, model=model, keep=keep, directory=staging.tmp, fs=staging.fs)

    if progress is not None:
        progress.start("predict", len(source.parts))
    files = []
    with ThreadPoolExecutor(cores(), thread_name_prefix="dasktree-predict") as pool:
        for path in pool.map(one, source.parts):
            files.append(path)
            if progress is not None:
                progress.advance()
    if progress is not None:
        progress.finish()
    return files


def predict_dataset(model: Model, data, out: str, *, keep: Sequence[str] = (), overwrite: bool = False,
                    client=None, scheduler: str | None = None, progress=None) -> list[str]:
    """Predict every row of a Parquet dataset into the directory ``out``; returns the files.

    Without ``client`` and ``scheduler`` (or with ``scheduler="inprocess"``) the parts are
    predicted in this process on a thread per core: a part at a time per thread, so any size of
    dataset streams through. Otherwise on the Dask cluster they name."""
    from .cluster import connect

    source = data if isinstance(data, Source) else ParquetSource(data)
    missing = [c for c in [*model.features, *keep] if c not in source.schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is missing from {source.description}")
    with atomic_directory(out, overwrite=overwrite) as staging:
        if client is None and scheduler in (None, IN_PROCESS):  # no cluster to start: threads here
            return [staging.final(f) for f in _predict_here(source, model, tuple(keep), staging, progress)]
        with connect(client, scheduler) as dask_client:
            [source_f] = dask_client.scatter([source], broadcast=True, hash=False)
            [model_f] = dask_client.scatter([model], broadcast=True, hash=False)
            futures = [
                dask_client.submit(_predict_part, part, source=source_f, model=model_f, keep=tuple(keep),
                                   directory=staging.tmp, fs=staging.fs, pure=False)
                for part in source.parts
            ]
            files = gather_with_progress(dask_client, futures, progress, "predict")
    return [staging.final(f) for f in files]
