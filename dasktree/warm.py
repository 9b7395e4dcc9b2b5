"""Compile every numba kernel into numba's on-disk cache: ``dasktree warm``.

Every compiled kernel of dasktree is declared ``cache=True``: numba compiles it
at its first call with a given set of argument types and writes the machine code
to its cache, which later processes load in milliseconds. A fresh install (a
new virtualenv, a container image, a CI runner) has an empty cache, so its
first fit pays the compilation, many seconds. ``dasktree warm`` (or
:func:`warm`) pays it once, ahead of time: run it after ``pip install`` or as a
step of an image build, with the same Python and the same user the fits will
run under.

Where the cache lives is numba's rule: ``__pycache__`` beside the installed
package when that is writable, else numba's user cache directory
(``~/.cache/numba``). Set ``NUMBA_CACHE_DIR`` to choose it (for instance a
directory baked into an image whose site-packages is read-only); when neither
default is writable, importing dasktree sets it to a directory under the
system's temporary directory (:func:`dasktree.kernel_cache.ensure_cache_dir`), so a read-only install
still compiles once per machine rather than failing.

What is compiled is what fits call: small fits in this process on a frame
holding every column type the readers pass on (float64, float32, signed and
unsigned integers of each width, booleans, strings), under every criterion,
nominal split, multi-way arity, cross-validation and discretization method, and
regression trees under each of their criteria;
and one fit on a Dask cluster of threads in this process, whose passes take the
cluster's paths (per-worker counts in int32 and uint16, derived histograms).
Nothing is learned or written but the cache.
"""

from __future__ import annotations

import os
import tempfile
import time

from .kernel_cache import cache_dir

__all__ = ["warm"]


def _frame(n: int = 600, seed: int = 0):
    """Rows with a column of every type a Parquet dataset hands the readers, and 3 classes."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    frame = pd.DataFrame({
        "f64": x, "f32": rng.normal(size=n).astype(np.float32), "wide": rng.permutation(n) * 1.5,
        "i8": rng.integers(0, 9, n).astype(np.int8), "i16": rng.integers(0, 40, n).astype(np.int16),
        "i32": rng.integers(0, 70, n).astype(np.int32), "i64": rng.integers(0, 30, n).astype(np.int64),
        "u8": rng.integers(0, 5, n).astype(np.uint8), "u16": rng.integers(0, 50, n).astype(np.uint16),
        "u32": rng.integers(0, 7, n).astype(np.uint32), "flag": rng.random(n) < 0.4,
        "colour": rng.choice(["red", "green", "blue", "violet", "amber"], n),
    })
    frame.loc[rng.random(n) < 0.05, "f64"] = np.nan
    score = x + (frame["colour"] == "red") * 1.2 + frame["flag"] * 0.5 + frame["i8"] / 8
    frame["label"] = np.where(score > 0.8, "high", np.where(score > -0.3, "mid", "low"))
    return frame


IN_PROCESS_FITS: tuple[dict, ...] = (
    dict(criterion="gini", max_depth=4),
    dict(criterion="entropy", max_depth=4),
    dict(criterion="gain_ratio", max_depth=3),
    dict(criterion="entropy", max_depth=3, nominal_split="multiway"),
    dict(criterion="entropy", max_depth=3, max_arity=3),
    dict(criterion="gini", max_depth=3, max_arity=3, selection="gain_ratio"),
    dict(criterion="entropy", max_depth=3, max_arity=3, selection="distance"),
    dict(criterion="entropy", max_depth=4, cv=3),
    dict(criterion="gini", max_depth=3, max_bins=300),  # uint16 codes
    *(dict(criterion="entropy", max_depth=3, binning=method)
      for method in ("mdlp", "distance", "chimerge", "equal_width", "equal_frequency", "optimal")),
)
"""The fits :func:`warm` makes in this process (parameters; the frame of :func:`_frame`)."""

REGRESSION_FITS: tuple[dict, ...] = (
    dict(criterion="squared_error", max_depth=4, cv=3),
    dict(criterion="friedman_mse", max_depth=3),
    dict(criterion="poisson", max_depth=3),
)
"""The regression trees :func:`warm` grows in this process (their level pass is a kernel of its own),
on :func:`_frame`'s columns with a number >= 0 as the target."""


def warm(cluster: bool = True, progress=None) -> dict:
    """Compile every kernel into the cache; returns what was done and how long it took.

    Parameters
    ----------
    cluster : bool
        Also fit once on a ``LocalCluster`` of threads in this process, which compiles the
        cluster's pass paths (a second or two to start it).
    progress : callable, optional
        Called with a short label before each step.
    """
    import pyarrow as pa

    from .fit import fit
    from .engine.local_runner import IN_PROCESS

    started = time.perf_counter()
    frame = _frame()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    say = progress or (lambda label: None)
    for params in IN_PROCESS_FITS:
        say(", ".join(f"{k}={v}" for k, v in params.items()))
        model = fit(frame, target="label", nominal=["u32"], scheduler=IN_PROCESS, **params)
        model.predict_codes(table)
    from .fit import fit_regression

    numbers = frame.drop(columns="label").assign(amount=frame["f64"].abs().fillna(0.0) * 3 + frame["i8"])
    for params in REGRESSION_FITS:
        say("regression: " + ", ".join(f"{k}={v}" for k, v in params.items()))
        fit_regression(numbers, target="amount", nominal=["u32"], scheduler=IN_PROCESS, **params)
    steps = len(IN_PROCESS_FITS) + len(REGRESSION_FITS)
    say("small nodes grown in memory (both tasks)")
    numeric = frame[["f64", "f32", "wide", "i8", "i16", "u8", "label"]]
    fit(numeric, target="label", scheduler=IN_PROCESS)  # no max_depth: small nodes gathered and grown
    fit(numeric, target="label", scheduler=IN_PROCESS, cv=3)
    fit_regression(numbers[["f64", "f32", "wide", "i8", "amount"]], target="amount", scheduler=IN_PROCESS, cv=3)
    steps += 3
    say("the CSV scan")
    from .io.csv_scan import scan_bytes

    scan_bytes(b'a,b\n1,"x"\n')  # CSV input's record scan (dasktree.io.csv_scan)
    if cluster:
        say("a Dask cluster of threads")
        with tempfile.TemporaryDirectory(prefix="dasktree-warm-") as tmp:
            from .datasets.files import write_dataset

            data = write_dataset(_frame(4000, seed=1), os.path.join(tmp, "data"), n_files=2)
            fit(data, target="label", scheduler="threads", criterion="entropy", max_depth=6, cv=3)
            fit(data, target="label", scheduler="threads", criterion="gini", max_depth=6, cache=False)
        steps += 2
    return {"fits": steps, "seconds": round(time.perf_counter() - started, 2), "cache_dir": cache_dir()}
