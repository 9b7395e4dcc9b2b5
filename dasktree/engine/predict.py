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
from ..io.sources import ParquetSource, Part, Source
from ..model.model import Model
from ..model.predict import predict_table
from .local_runner import IN_PROCESS, cores
from .progress import gather_with_progress

__all__ = ["predict_dataset"]


def _predict_part(part: Part, *, source: Source, model: Model, keep: Sequence[str], directory: str,
                  fs) -> tuple[str, list[int]]:
    import pyarrow.parquet as pq

    columns = [*dict.fromkeys([*model.features, *keep])]
    table = source.read(part, columns)
    out = predict_table(model, table, keep)
    path = f"{directory}/part-{part.index:05d}.parquet"
    with fs.open(path, "wb") as f:
        pq.write_table(out, f, write_page_checksum=True)  # readers can tell a damaged page
    proba = out.select([f"proba_{c}" for c in model.classes]).to_pandas().to_numpy()
    predicted = np.bincount(np.argmax(proba, axis=1), minlength=len(model.classes)) if len(proba) else \
        np.zeros(len(model.classes), dtype=np.int64)
    return path, predicted.tolist()


def _predict_here(source: Source, model: Model, keep: tuple, staging, progress) -> list[tuple[str, list[int]]]:
    """Every part predicted in this process, a part at a time on a thread per core (the kernels
    and Parquet's reader and writer release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(part):
        return _predict_part(part, source=source, model=model, keep=keep, directory=staging.tmp, fs=staging.fs)

    if progress is not None:
        progress.start("predict", len(source.parts))
    written = []
    with ThreadPoolExecutor(cores(), thread_name_prefix="dasktree-predict") as pool:
        for path_counts in pool.map(one, source.parts):
            written.append(path_counts)
            if progress is not None:
                progress.advance()
    if progress is not None:
        progress.finish()
    return written


def predict_dataset(model: Model, data, out: str, *, keep: Sequence[str] = (), overwrite: bool = False,
                    client=None, scheduler: str | None = None, progress=None,
                    counts: dict | None = None, security=None) -> list[str]:
    """Predict every row of a Parquet dataset into the directory ``out``; returns the files.

    Without ``client`` and ``scheduler`` (or with ``scheduler="inprocess"``) the parts are
    predicted in this process on a thread per core: a part at a time per thread, so any size of
    dataset streams through. Otherwise on the Dask cluster they name. ``counts``, if given,
    receives the rows written (``"rows"``) and the rows predicted as each class
    (``"class_counts"``, class name -> rows). ``security``: TLS for a ``tls://`` scheduler
    (:mod:`dasktree.engine.tls`).
    """
    from .cluster import connect

    source = data if isinstance(data, Source) else ParquetSource(data)
    missing = [c for c in [*model.features, *keep] if c not in source.schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is missing from {source.description}")
    if progress is not None:  # the pass reads every row of the model's features and kept columns once
        progress.describe(rows=source.n_rows, bytes_read=source.bytes_of([*dict.fromkeys([*model.features, *keep])]))
    with atomic_directory(out, overwrite=overwrite) as staging:
        if client is None and scheduler in (None, IN_PROCESS):  # no cluster to start: threads here
            written = _predict_here(source, model, tuple(keep), staging, progress)
        else:
            with connect(client, scheduler, on_cluster=None if progress is None else progress.cluster,
                         security=security) as dask_client:
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
