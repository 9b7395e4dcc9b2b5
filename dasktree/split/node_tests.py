"""Tests in a node, and how a node's bins map to its children.

A :class:`Test` on attribute ``a`` sends each code of ``a`` (0 = missing, then
the bins) to a child through ``bin_children``. Numeric tests are threshold
tests: child ``i`` of a ``k``-way numeric test holds ``t[i-1] < x <= t[i]``
(``t`` the thresholds, bin upper edges); a binary one is ``x <= t`` (left,
child 0) against ``x > t``. Nominal tests list the categories of each child.
Missing values, and bins with no training example at the node, go to the
``default`` child. Two trees of the forest share a child only when their tests
are identical: same attribute and same ``bin_children``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.ragged import firsts

__all__ = ["Test", "numeric_test", "nominal_test", "threshold_tables"]


class _cached:
    """``functools.cached_property`` without its lock (Python 3.11 takes one on every first read,
    about 1 us, and a deep forest level makes thousands of tests): a :class:`Test` never changes,
    so two threads racing to compute a value compute the same one."""

    def __init__(self, func):
        self.func, self.name, self.__doc__ = func, func.__name__, func.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)  # later reads find it there, not here
        return value


@dataclass(frozen=True, eq=False)
class Test:
    """A test on one attribute, as a code -> child table plus its readable form."""

    attribute: int
    kind: str  # "numeric" | "nominal"
    bin_children: np.ndarray  # (n_bins + 1,) child of each code; code 0 = missing
    default: int
    thresholds: tuple[float, ...] = ()  # numeric: k - 1 increasing thresholds
    groups: tuple[tuple[int, ...], ...] = ()  # nominal: the codes of each child

    # Cached on first use (a test never changes): 20k tests read 3 times each, 57 ms against 66 ms.
    @_cached
    def arity(self) -> int:
        return int(self.bin_children.max()) + 1

    @_cached
    def identity(self) -> tuple:
        """Equal for tests that partition every example the same way."""
        return (self.attribute, self.bin_children.tobytes())

    @_cached
    def cut(self) -> int:
        """The last code sent to child 0 when the code table is a threshold's (codes ``1..cut`` to
        child 0, the others to child 1, code 0 to any child: every binary numeric test, and a
        nominal one whose categories fall that way), else -1. The level-pass kernel routes such a test by a
        compare, not a table load (:class:`~dasktree.kernels.plans.PassPlan`)."""
        body = self.bin_children[1:]
        if not body.size or int(body.max()) > 1 or bool(np.any(body[1:] < body[:-1])):
            return -1
        return int(np.count_nonzero(body == 0))

    def knowing_arity(self, arity: int, cut: int | None = None) -> "Test":
        """This test with its arity (and ``cut``, unless None) cached as :attr:`arity` and
        :attr:`cut` would cache them, for a caller that knows them already (no pass over the code
        table); returns the test."""
        self.__dict__["arity"] = int(arity)
        if cut is not None:
            self.__dict__["cut"] = int(cut)
        return self

    def __eq__(self, other) -> bool:
        return isinstance(other, Test) and self.identity == other.identity

    def __hash__(self) -> int:
        return hash(self.identity)

    def to_json(self) -> dict:
        out = {
            "attribute": self.attribute,
            "kind": self.kind,
            "default": self.default,
            "bin_children": self.bin_children.tolist(),
        }
        if self.kind == "numeric":
            out["thresholds"] = list(self.thresholds)
        else:
            out["groups"] = [list(g) for g in self.groups]
        return out

    @classmethod
    def from_json(cls, d: dict) -> "Test":
        return cls(
            attribute=int(d["attribute"]),
            kind=d["kind"],
            bin_children=np.asarray(d["bin_children"], dtype=np.int16),
            default=int(d["default"]),
            thresholds=tuple(float(t) for t in d.get("thresholds", ())),
            groups=tuple(tuple(int(c) for c in g) for g in d.get("groups", ())),
        )


def numeric_test(attribute: int, cuts: np.ndarray, upper: np.ndarray, default: int) -> Test:
    """Threshold test cutting after each bin in ``cuts`` (1-based bins).

    Cut ``j`` sends bins ``<= j`` left of it; its threshold is ``upper[j - 1]``.
    """
    cuts = np.asarray(cuts, dtype=np.int64)
    n_bins = upper.size + 1
    binary = cuts.size == 1  # cut < n_bins: codes 1..cut go to child 0, the others (at least one) to child 1
    if binary:
        table = threshold_tables(np.array([n_bins + 1]), cuts, np.array([default]))
        thresholds: tuple[float, ...] = (float(upper[cuts[0] - 1]),)
    else:
        table = np.empty(n_bins + 1, dtype=np.int16)
        table[1:] = np.searchsorted(cuts, np.arange(1, n_bins + 1), side="left")
        table[0] = default
        thresholds = tuple(float(upper[j - 1]) for j in cuts)
    test = Test(attribute, "numeric", table, int(default), thresholds)
    return test.knowing_arity(max(int(default), 1) + 1, int(cuts[0])) if binary else test


def threshold_tables(n_codes: np.ndarray, cut: np.ndarray, default: np.ndarray) -> np.ndarray:
    """The code tables of binary threshold tests, one after another (int16): test ``k`` has
    ``n_codes[k]`` codes; code 0 (missing) goes to ``default[k]``, codes ``1..cut[k]`` to child 0,
    the others to child 1. All at once: a deep forest level chooses thousands."""
    n_codes = np.asarray(n_codes, dtype=np.int64)
    first = firsts(n_codes)
    code = np.arange(int(n_codes.sum()), dtype=np.int64) - np.repeat(first, n_codes)
    return np.where(code == 0, np.repeat(default, n_codes), code > np.repeat(cut, n_codes)).astype(np.int16)


def nominal_test(attribute: int, groups: list[np.ndarray], n_codes: int, default: int) -> Test:
    """One child per group of codes; codes in no group (and missing) go to ``default``."""
    table = np.full(n_codes, default, dtype=np.int16)
    for child, codes in enumerate(groups):
        table[np.asarray(codes, dtype=np.int64)] = child
    table[0] = default
    return Test(
        attribute, "nominal", table, int(default),
        groups=tuple(tuple(int(c) for c in sorted(g)) for g in groups),
    )
