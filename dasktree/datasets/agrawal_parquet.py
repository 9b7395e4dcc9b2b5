"""The Agrawal et al. database written as Parquet files, one file at a time
(:func:`write_parquet`, re-exported by :mod:`dasktree.datasets.agrawal`, which
draws the rows)."""

from __future__ import annotations

import json
import os
import uuid

import numpy as np

from .agrawal_functions import check_function, check_int
from .agrawal_rows import check_perturbation, check_seed, generate_rows

__all__ = ["write_parquet"]

_PART_PREFIX = "part-"
_PART_SUFFIX = ".parquet"
_TMP_SUFFIX = ".tmp"
_METADATA_KEY = b"dasktree.datasets.agrawal"

def _part_name(index: int) -> str:
    return f"{_PART_PREFIX}{index:05d}{_PART_SUFFIX}"


def _is_part_file(name: str) -> bool:
    return name.startswith(_PART_PREFIX) and name.endswith(_PART_SUFFIX)


def _is_own_temp_file(name: str) -> bool:
    # ".part-00000.parquet.<hex>.tmp": hidden (leading dot), so Dask and
    # pyarrow dataset discovery skip it, and it never matches part-*.parquet.
    return name.startswith("." + _PART_PREFIX) and name.endswith(_TMP_SUFFIX)


def _split_rows(n_rows: int, n_files: int) -> list[int]:
    base, extra = divmod(n_rows, n_files)
    return [base + (1 if i < extra else 0) for i in range(n_files)]


def write_parquet(
    path: str | os.PathLike[str],
    n_rows: int,
    *,
    n_files: int = 1,
    function: int = 1,
    perturbation: float = 0.0,
    seed: int = 0,
    row_group_size: int | None = None,
    overwrite: bool = False,
) -> list[str]:
    """Write an Agrawal et al. dataset as Parquet files ``part-NNNNN.parquet``.

    The rows are generated one file at a time, so memory holds one file's
    rows at most. File ``i`` gets ``n_rows // n_files`` rows, plus one for the
    first ``n_rows % n_files`` files, drawn by :func:`generate`'s procedure
    from the generator seeded with ``numpy.random.SeedSequence(seed,
    spawn_key=(i,))`` (the ``i``-th child of ``SeedSequence(seed)``). The
    dataset is therefore a deterministic function of ``(n_rows, n_files,
    function, perturbation, seed)``; it is not the frame that
    ``generate(n_rows, seed=seed)`` returns, even for one file.

    Every file is first written under a hidden temporary name
    (``.part-NNNNN.parquet.<token>.tmp``) and all are renamed to their final
    names only once all have been written; if writing fails or is
    interrupted, the temporary files written so far are removed. A reader
    therefore never sees a half-written ``part-*.parquet`` file.

    Parameters
    ----------
    path : str or os.PathLike
        Output directory; created (with its parents) if missing. It must be
        empty unless ``overwrite`` is true.
    n_rows : int
        Total number of rows, ``>= 0``.
    n_files : int, default 1
        Number of files, ``>= 1``. With more files than rows, some files are
        empty (they still carry the schema).
    function : int, default 1
        Classification function, 1 to 10.
    perturbation : float, default 0.0
        Perturbation factor in ``[0, 1]``, as in :func:`generate`.
    seed : int, default 0
        Non-negative root seed.
    row_group_size : int or None, default None
        Maximum rows per Parquet row group, ``>= 1``; None uses pyarrow's
        default.
    overwrite : bool, default False
        Allow a non-empty directory. The ``part-*.parquet`` files already
        there (and temporary files left by an interrupted run of this
        function) are removed once the new files have been written; no other
        file is touched.

    Returns
    -------
    list of str
        Paths of the files written, in order (``path/part-00000.parquet``,
        ...).

    Raises
    ------
    ValueError
        On an invalid argument, if ``path`` exists and is not a directory,
        or if the directory is not empty and ``overwrite`` is false.

    Notes
    -----
    Each file's Parquet schema metadata holds, under the key
    ``dasktree.datasets.agrawal``, a JSON record of the parameters and of the
    file's index and row count.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq


    n_rows = check_int("n_rows", n_rows, 0)
    n_files = check_int("n_files", n_files, 1)
    function = check_function(function)
    p = check_perturbation(perturbation)
    seed = check_seed(seed)
    if row_group_size is not None:
        row_group_size = check_int("row_group_size", row_group_size, 1, "None or an integer >= 1")
    if not isinstance(overwrite, (bool, np.bool_)):
        raise ValueError(f"overwrite must be True or False, got {overwrite!r}")

    directory = os.fspath(path)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(f"path must be a directory, got the existing non-directory {directory!r}")
    os.makedirs(directory, exist_ok=True)
    existing = sorted(os.listdir(directory))
    if existing and not overwrite:
        shown = ", ".join(existing[:5]) + (", ..." if len(existing) > 5 else "")
        raise ValueError(
            f"path must be an empty directory unless overwrite=True, got {directory!r} "
            f"holding {len(existing)} entries ({shown})"
        )

    token = uuid.uuid4().hex
    finals = [os.path.join(directory, _part_name(i)) for i in range(n_files)]
    temps = [
        os.path.join(directory, f".{_part_name(i)}.{token}{_TMP_SUFFIX}") for i in range(n_files)
    ]
    counts = _split_rows(n_rows, n_files)
    written: list[str] = []
    try:
        for index, (temp, count) in enumerate(zip(temps, counts)):
            child = np.random.SeedSequence(seed, spawn_key=(index,))
            frame = generate_rows(count, function, p, np.random.default_rng(child))
            table = pa.Table.from_pandas(frame, preserve_index=False)
            provenance = {
                "generator": "agrawal",
                "n_rows": n_rows,
                "n_files": n_files,
                "function": function,
                "perturbation": p,
                "seed": seed,
                "file_index": index,
                "file_rows": count,
            }
            table = table.replace_schema_metadata(
                {**(table.schema.metadata or {}), _METADATA_KEY: json.dumps(provenance).encode()}
            )
            del frame
            written.append(temp)
            pq.write_table(table, temp, row_group_size=row_group_size)
            del table
        if overwrite:
            keep = set(os.path.basename(f) for f in finals) | set(
                os.path.basename(t) for t in temps
            )
            for name in os.listdir(directory):
                if name in keep:
                    continue
                if _is_part_file(name) or _is_own_temp_file(name):
                    target = os.path.join(directory, name)
                    if os.path.isfile(target) or os.path.islink(target):
                        os.remove(target)
        for temp, final in zip(temps, finals):
            os.replace(temp, final)
    except BaseException:
        for temp in written:
            try:
                os.remove(temp)
            except FileNotFoundError:
                pass
        raise
    return finals

