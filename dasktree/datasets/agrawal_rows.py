"""Rows of the Agrawal generator: the columns, the argument checks and the generation itself.

:mod:`dasktree.datasets.agrawal` documents the generator (Agrawal, Imielinski &
Swami 1993) and gives :func:`~dasktree.datasets.agrawal.generate`;
:mod:`dasktree.datasets.agrawal_parquet` writes the same rows as Parquet files.
Both call :func:`generate_rows` here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .agrawal_functions import GROUP_A, check_int

__all__ = ["ATTRIBUTES", "TARGET", "DTYPES", "HVALUE_MAX", "check_perturbation", "check_seed", "generate_rows"]

ATTRIBUTES: tuple[str, ...] = (
    "salary",
    "commission",
    "age",
    "elevel",
    "car",
    "zipcode",
    "hvalue",
    "hyears",
    "loan",
)
"""The nine attribute column names, in the paper's order."""

TARGET = "class"
"""Name of the class column: 0 for group A, 1 for group B."""

DTYPES: dict[str, np.dtype] = {
    "salary": np.dtype(np.float64),
    "commission": np.dtype(np.float64),
    "age": np.dtype(np.int16),
    "elevel": np.dtype(np.int8),
    "car": np.dtype(np.int8),
    "zipcode": np.dtype(np.int8),
    "hvalue": np.dtype(np.float64),
    "hyears": np.dtype(np.int16),
    "loan": np.dtype(np.float64),
    TARGET: np.dtype(np.int8),
}
"""Column dtypes of the frames that :func:`generate` returns."""

HVALUE_MAX = 1_350_000.0
"""Upper clipping bound of a perturbed ``hvalue`` (``9 * 150000``)."""



# --------------------------------------------------------------------------
# Argument checking
# --------------------------------------------------------------------------


def check_perturbation(perturbation: Any) -> float:
    what = "a number in [0, 1]"
    if isinstance(perturbation, bool):
        raise ValueError(f"perturbation must be {what}, got {perturbation!r}")
    try:
        p = float(perturbation)
    except (TypeError, ValueError):
        raise ValueError(f"perturbation must be {what}, got {perturbation!r}") from None
    if not 0.0 <= p <= 1.0:  # also rejects NaN
        raise ValueError(f"perturbation must be {what}, got {perturbation!r}")
    return p


def check_seed(seed: Any) -> int:
    return check_int("seed", seed, 0, "a non-negative integer")


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------


def _perturb(
    values: np.ndarray,
    rng: np.random.Generator,
    p: float,
    low: float,
    high: float,
    width: float | np.ndarray | None = None,
) -> np.ndarray:
    """MOA's ``perturbValue``: ``clip(x + width * p * (2u - 1), low, high)``.

    Returns a new float64 array; ``values`` is not modified.
    """
    if width is None:
        out = rng.uniform(-p * (high - low), p * (high - low), values.shape[0])
    else:
        out = rng.uniform(-p, p, values.shape[0])
        out *= width
    out += values
    np.clip(out, low, high, out=out)
    return out


def _round_half_up(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Java's ``Math.round`` (``floor(x + 0.5)``), as MOA rounds age and hyears.

    Works in place on ``values`` (a float64 scratch array).
    """
    values += 0.5
    np.floor(values, out=values)
    return values.astype(dtype)


# Width k * 100000 of the hvalue range for each zipcode, k = 9 - zipcode.
_HVALUE_WIDTH = (9.0 - np.arange(9.0)) * 100000.0


def generate_rows(n_rows: int, function: int, p: float, rng: np.random.Generator) -> pd.DataFrame:
    """Draw ``n_rows`` rows from ``rng``; arguments already checked."""
    salary = rng.uniform(20000.0, 150000.0, n_rows)

    commission = np.zeros(n_rows)
    has_commission = salary < 75000.0
    n_commission = int(np.count_nonzero(has_commission))
    commission[has_commission] = rng.uniform(10000.0, 75000.0, n_commission)

    age = rng.integers(20, 80, size=n_rows, dtype=np.int16, endpoint=True)
    elevel = rng.integers(0, 4, size=n_rows, dtype=np.int8, endpoint=True)
    car = rng.integers(1, 20, size=n_rows, dtype=np.int8, endpoint=True)
    zipcode = rng.integers(0, 8, size=n_rows, dtype=np.int8, endpoint=True)

    hvalue_width = _HVALUE_WIDTH[zipcode]
    hvalue = rng.uniform(0.5, 1.5, n_rows)
    hvalue *= hvalue_width  # U[k * 50000, k * 150000)

    hyears = rng.integers(1, 30, size=n_rows, dtype=np.int16, endpoint=True)
    loan = rng.uniform(0.0, 500000.0, n_rows)

    columns = {
        "salary": salary,
        "commission": commission,
        "age": age,
        "elevel": elevel,
        "car": car,
        "zipcode": zipcode,
        "hvalue": hvalue,
        "hyears": hyears,
        "loan": loan,
    }
    # The class comes from the unperturbed values (MOA, and the paper).
    group_a = GROUP_A[function](columns)
    label = np.logical_not(group_a).view(np.int8)

    if p > 0.0:
        columns["salary"] = _perturb(salary, rng, p, 20000.0, 150000.0)
        perturbed_commission = commission.copy()
        perturbed_commission[has_commission] = _perturb(
            commission[has_commission], rng, p, 10000.0, 75000.0
        )
        columns["commission"] = perturbed_commission
        columns["age"] = _round_half_up(_perturb(age, rng, p, 20.0, 80.0), DTYPES["age"])
        columns["hvalue"] = _perturb(hvalue, rng, p, 0.0, HVALUE_MAX, hvalue_width)
        columns["hyears"] = _round_half_up(_perturb(hyears, rng, p, 1.0, 30.0), DTYPES["hyears"])
        columns["loan"] = _perturb(loan, rng, p, 0.0, 500000.0)

    columns[TARGET] = label
    return pd.DataFrame(columns, copy=False)
