"""The ten classification functions of the Agrawal et al. database, F1 .. F10.

Each ``_fN`` maps the attribute columns (float64) to the mask of group A, as
MOA's ``AgrawalGenerator`` writes them; :func:`classify` gives the class
column (0 for group A, 1 for group B). :mod:`dasktree.datasets.agrawal` says
where they come from and draws the rows they classify.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["FUNCTIONS", "GROUP_A", "classify"]

FUNCTIONS: tuple[int, ...] = tuple(range(1, 11))
"""The valid classification function numbers, 1 to 10."""


def check_int(name: str, value: Any, minimum: int, what: str | None = None) -> int:
    """``value`` as an int of at least ``minimum``, or a ValueError naming ``name``."""
    what = what or f"an integer >= {minimum}"
    if isinstance(value, bool):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be {what}, got {value!r}") from None
    if number < minimum:
        raise ValueError(f"{name} must be {what}, got {number!r}")
    return number


def check_function(function: Any) -> int:
    """A classification function number, 1 to 10."""
    what = "an integer from 1 to 10"
    number = check_int("function", function, 1, what)
    if number > 10:
        raise ValueError(f"function must be {what}, got {number!r}")
    return number

# --------------------------------------------------------------------------
# Classification functions (vectorised; each returns the group-A mask)
# --------------------------------------------------------------------------


def _between(x: np.ndarray, low: float, high: float) -> np.ndarray:
    return (low <= x) & (x <= high)


def _by_age(age: np.ndarray, young: np.ndarray, middle: np.ndarray, old: np.ndarray) -> np.ndarray:
    return np.where(age < 40, young, np.where(age < 60, middle, old))


def _f1(c: Mapping[str, np.ndarray]) -> np.ndarray:
    age = c["age"]
    return (age < 40) | (60 <= age)


def _f2(c: Mapping[str, np.ndarray]) -> np.ndarray:
    salary = c["salary"]
    return _by_age(
        c["age"],
        _between(salary, 50000, 100000),
        _between(salary, 75000, 125000),
        _between(salary, 25000, 75000),
    )


def _f3(c: Mapping[str, np.ndarray]) -> np.ndarray:
    elevel = c["elevel"]
    return _by_age(
        c["age"],
        _between(elevel, 0, 1),
        _between(elevel, 1, 3),
        _between(elevel, 2, 4),
    )


def _f4(c: Mapping[str, np.ndarray]) -> np.ndarray:
    salary, elevel = c["salary"], c["elevel"]
    low = _between(salary, 25000, 75000)
    mid = _between(salary, 50000, 100000)
    high = _between(salary, 75000, 125000)
    return _by_age(
        c["age"],
        np.where(_between(elevel, 0, 1), low, mid),
        np.where(_between(elevel, 1, 3), mid, high),
        np.where(_between(elevel, 2, 4), mid, low),
    )


def _f5(c: Mapping[str, np.ndarray]) -> np.ndarray:
    salary, loan = c["salary"], c["loan"]
    loan_1_3 = _between(loan, 100000, 300000)
    loan_2_4 = _between(loan, 200000, 400000)
    loan_3_5 = _between(loan, 300000, 500000)
    return _by_age(
        c["age"],
        np.where(_between(salary, 50000, 100000), loan_1_3, loan_2_4),
        np.where(_between(salary, 75000, 125000), loan_2_4, loan_3_5),
        np.where(_between(salary, 25000, 75000), loan_3_5, loan_1_3),
    )


def _f6(c: Mapping[str, np.ndarray]) -> np.ndarray:
    total = c["salary"] + c["commission"]
    return _by_age(
        c["age"],
        _between(total, 50000, 100000),
        _between(total, 75000, 125000),
        _between(total, 25000, 75000),
    )


# F7 .. F10 keep MOA's order of floating-point operations, so that rows on a
# boundary fall on the same side as in MOA.


def _f7(c: Mapping[str, np.ndarray]) -> np.ndarray:
    disposable = 2.0 * (c["salary"] + c["commission"]) / 3.0 - c["loan"] / 5.0 - 20000.0
    return disposable > 0


def _f8(c: Mapping[str, np.ndarray]) -> np.ndarray:
    disposable = 2.0 * (c["salary"] + c["commission"]) / 3.0 - 5000.0 * c["elevel"] - 20000.0
    return disposable > 0


def _f9(c: Mapping[str, np.ndarray]) -> np.ndarray:
    disposable = (
        2.0 * (c["salary"] + c["commission"]) / 3.0
        - 5000.0 * c["elevel"]
        - c["loan"] / 5.0
        - 10000.0
    )
    return disposable > 0


def _f10(c: Mapping[str, np.ndarray]) -> np.ndarray:
    hyears = c["hyears"]
    equity = np.where(hyears >= 20, c["hvalue"] * (hyears - 20.0) / 10.0, 0.0)
    disposable = (
        2.0 * (c["salary"] + c["commission"]) / 3.0
        - 5000.0 * c["elevel"]
        + equity / 5.0
        - 10000.0
    )
    return disposable > 0


GROUP_A: dict[int, Callable[[Mapping[str, np.ndarray]], np.ndarray]] = {  # function -> group-A mask
    1: _f1,
    2: _f2,
    3: _f3,
    4: _f4,
    5: _f5,
    6: _f6,
    7: _f7,
    8: _f8,
    9: _f9,
    10: _f10,
}


class _Columns(Mapping[str, np.ndarray]):
    """Read-only view that turns each requested column into a float64 array."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            column = self._data[name]
        except KeyError:
            raise ValueError(f"data must have a column {name!r}; it has none") from None
        return np.asarray(column, dtype=np.float64)

    def __iter__(self):  # pragma: no cover - Mapping protocol only
        return iter(self._data)

    def __len__(self) -> int:  # pragma: no cover - Mapping protocol only
        return len(self._data)


def classify(data: Mapping[str, Any], function: int = 1) -> np.ndarray:
    """Class of each row under one of the functions F1 .. F10.

    Parameters
    ----------
    data : pandas.DataFrame or mapping of str to array_like
        The attribute columns, by the names in :data:`ATTRIBUTES`. Only the
        columns the function reads are needed (for example ``age`` alone for
        F1). All columns must have the same length.
    function : int, default 1
        Classification function, 1 to 10 (see the module docstring).

    Returns
    -------
    numpy.ndarray of int8
        0 where the row is in group A, 1 where it is in group B.

    Raises
    ------
    ValueError
        If ``function`` is not an integer from 1 to 10 or a needed column is
        missing.

    Examples
    --------
    >>> classify({"age": [39, 40, 59, 60]}, function=1)
    array([0, 1, 1, 0], dtype=int8)
    """
    function = check_function(function)
    group_a = np.asarray(GROUP_A[function](_Columns(data)))
    return (~group_a).astype(np.int8)
