"""What a parameter's value may be: small constraint objects in the style of scikit-learn's
``_parameter_constraints`` (``sklearn/utils/_param_validation.py``).

A parameter declares a list of them; its value is valid when one of them holds
(``None`` in the list stands for the value None). Each constraint says in words
what it accepts (:meth:`Constraint.text`, for the error message and the docs)
and gives a value it refuses (:meth:`Constraint.counterexample`, for the tests
that check every declared parameter is validated).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Callable, Sequence

__all__ = ["Constraint", "Interval", "Options", "Boolean", "Instance", "Check", "holds", "describe"]


class Constraint:
    """One kind of value a parameter accepts."""

    def holds(self, value) -> bool:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def counterexample(self):
        """A value this constraint refuses (and that no usual companion, such as None, accepts)."""
        return object()


class Interval(Constraint):
    """A number of ``kind`` (``Integral`` or ``Real``) between ``low`` and ``high`` (None: unbounded),
    ``closed`` on the "left", "right", "both" or "neither" side. Booleans are not numbers here, and
    a real must be finite."""

    #: an integer beyond this is no count of rows, depth or leaves the kernels can hold (int64)
    LARGEST_INTEGER = 2**62

    def __init__(self, kind: type, low: float | None, high: float | None, *, closed: str = "left"):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def holds(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if self.kind is Real and not math.isfinite(value):
            return False
        if self.kind is Integral and abs(value) > self.LARGEST_INTEGER:
            return False
        left = self.closed in ("left", "both")
        right = self.closed in ("right", "both")
        if self.low is not None and (value < self.low or (value == self.low and not left)):
            return False
        return self.high is None or not (value > self.high or (value == self.high and not right))

    def text(self) -> str:
        what = "an integer" if self.kind is Integral else "a finite number" if self.high is None else "a number"
        if self.high is None:  # (an integer beyond LARGEST_INTEGER is refused all the same)
            return f"{what} {'>=' if self.closed in ('left', 'both') else '>'} {self.low}"
        if self.low is None:
            return f"{what} {'<=' if self.closed in ('right', 'both') else '<'} {self.high}"
        if self.kind is Integral and self.closed == "both":
            return f"{what} in {self.low}..{self.high}"
        left = "[" if self.closed in ("left", "both") else "("
        right = "]" if self.closed in ("right", "both") else ")"
        return f"{what} in {left}{self.low}, {self.high}{right}"

    def counterexample(self):
        if self.low is not None:
            return self.low - 1
        return self.high + 1


class Options(Constraint):
    """One of ``values`` (compared with ``==``, and of the same type: ``True`` is not ``1``)."""

    def __init__(self, values: Sequence):
        self.values = tuple(values)

    def holds(self, value) -> bool:
        return any(type(value) is type(v) and value == v for v in self.values)

    def text(self) -> str:
        return f"one of {list(self.values)}"

    def counterexample(self):
        return "bogus"


class Boolean(Constraint):
    """``True`` or ``False`` (numpy's booleans too)."""

    def holds(self, value) -> bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"

    def text(self) -> str:
        return "a boolean"

    def counterexample(self):
        return "yes"


class Instance(Constraint):
    """An instance of ``kind``, described as ``what``."""

    def __init__(self, kind: type | tuple, what: str):
        self.kind, self.what = kind, what

    def holds(self, value) -> bool:
        return isinstance(value, self.kind)

    def text(self) -> str:
        return self.what

    def counterexample(self):
        return object()


class Check(Constraint):
    """A constraint given as a function that raises ``ValueError`` with the whole message (or returns
    the value in its canonical form: ``normalize``), for values whose check says more than "must be"
    (``postpone``'s rule text, ``class_weight``'s weights)."""

    def __init__(self, check: Callable[[Any], Any], what: str, bad: Any):
        self.check, self.what, self.bad = check, what, bad

    def holds(self, value) -> bool:
        try:
            self.check(value)
        except ValueError:
            return False
        return True

    def text(self) -> str:
        return self.what

    def counterexample(self):
        return self.bad


def holds(constraints: Sequence, value) -> bool:
    """Whether one of ``constraints`` accepts ``value`` (``None`` in the list accepts None)."""
    return any(value is None if c is None else c.holds(value) for c in constraints)


def describe(constraints: Sequence) -> str:
    """What ``constraints`` accept, in words: "an integer >= 1 or None"."""
    return " or ".join("None" if c is None else c.text() for c in constraints)
