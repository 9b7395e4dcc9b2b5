"""Predictions of a Parquet dataset, written as Parquet atomically, part by part.

:func:`predict_dataset` reads the input part by part (on threads in this process, or
on the workers of a cluster when one is named), writes one
Parquet file per part into a hidden temporary directory beside ``out`` and
renames it to ``out`` only when every part is written: a failure leaves
nothing behind. The columns are :func:`dasktree.model.predict.predict_table`'s.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import InputError
from ..io.outputs import atomic_directory
from ..io.sources import ParquetSource, Part, Source
from ..model.model import Model
from ..model.predict import predict_table
from .local_runner import IN_PROCESS, cores
from .progress import gather_with_progress

__all__ = ["predict_dataset"]


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
