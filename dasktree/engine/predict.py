"""Predictions of a Parquet dataset, written as Parquet atomically, part by part.

:func:`predict_dataset` reads the input part by part (on threads in this process, or
on the workers of a cluster when one is named), writes one
Parquet file per part into a hidden temporary directory beside ``out`` and
renames it to ``out`` only when every part is written: a failure leaves
nothing behind. The columns are :func:`dasktree.model.predict.predict_table`'s.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..io.outputs import atomic_directory
from ..io.sources import Part, Source, open_path
from ..model.model import Model
from ..model.predict import predict_table
from .place import open_parts

__all__ = ["predict_dataset", "proba_of"]


def _predict_part(part: Part, *, source: Source, model: Model, keep: Sequence[str], directory: str,
                  fs) -> tuple[str, list[int]]:
    import pyarrow.parquet as pq

    columns = [*dict.fromkeys([*model.features, *keep])]
    table = source.read(part, columns)
    out = predict_table(model, table, keep)
    path = f"{directory}/part-{part.index:05d}.parquet"
    with fs.open(path, "wb") as f:
        pq.write_table(out, f, write_page_checksum=True)  # readers can tell a damaged page
    return path, model.task.predicted_counts(model, out)


def predict_dataset(model: Model, data, out: str, *, keep: Sequence[str] = (), overwrite: bool = False,
                    client=None, scheduler: str | None = None, progress=None,
                    counts: dict | None = None, security=None) -> list[str]:
    """Predict every row of a Parquet or CSV dataset into the directory ``out`` (Parquet); returns the files.

    Where :func:`dasktree.engine.place.open_parts` says: ``client``'s or ``scheduler``'s cluster,
    an active ``distributed`` client, else this process on a thread per core (a part at a time per
    thread, so any size of dataset streams through). ``counts``, if given,
    receives the rows written (``"rows"``) and the rows predicted as each class
    (``"class_counts"``, class name -> rows). ``security``: TLS for a ``tls://`` scheduler
    (:mod:`dasktree.engine.tls`).
    """
    source = data if isinstance(data, Source) else open_path(data)
    missing = [c for c in [*model.features, *keep] if c not in source.schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is missing from {source.description}")
    if progress is not None:  # the pass reads every row of the model's features and kept columns once
        progress.describe(rows=source.n_rows, bytes_read=source.bytes_of([*dict.fromkeys([*model.features, *keep])]))
    with atomic_directory(out, overwrite=overwrite) as staging:
        with open_parts(source, client=client, scheduler=scheduler, progress=progress, security=security) as parts:
            written = parts.map(_predict_part, "predict", model=model, keep=tuple(keep), directory=staging.tmp,
                                fs=staging.fs)
    per_class = np.sum([c for _, c in written], axis=0, dtype=np.int64) if written else \
        np.zeros(len(model.classes), dtype=np.int64)
    if counts is not None:
        counts["rows"] = int(per_class.sum())
        counts["class_counts"] = {str(c): int(n) for c, n in zip(model.classes, per_class)}
    return [staging.final(f) for f, _ in written]


def proba_of(model, X, table):
    """``model.predict_proba_table`` of any input form, shape (n_rows, n_classes): a dask ``X`` as a lazy
    dask array (partition by partition), a dataset part by part, else ``table(X)`` (the estimator's
    in-memory table of ``X``). For a tree's model and a forest's alike."""
    from ..estimator_input import dask_frame, is_dask, is_dataset

    if is_dask(X):
        frame = dask_frame(X, model.features)
        return frame.map_partitions(_proba_frame, model=model, meta=np.zeros((0, len(model.classes)), dtype=np.float64))
    if is_dataset(X):
        source = open_path(X)
        parts = [model.predict_proba_table(source.read(p, model.features)) for p in source.parts]
        return np.concatenate(parts) if parts else np.zeros((0, len(model.classes)))
    return model.predict_proba_table(table(X))


def _proba_frame(frame, *, model) -> np.ndarray:
    from ..io.sources import frame_to_table

    return model.predict_proba_table(frame_to_table(frame.reset_index(drop=True)))
