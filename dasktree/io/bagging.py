"""Bootstrap multiplicities that follow the rows: a forest member's bag drawn from each row's content.

Member ``m`` of a forest counts row ``r`` ``w(r, m)`` times, a draw from Poisson(``mean``):
``u = (mix64(h ^ salt_m) >> 11) / 2**53`` with ``h`` the row's content hash
(:func:`dasktree.io.row_hash.row_hash`, the hash the folds draw from) and
``salt_m = mix64((seed * golden) ^ BAG_TAG + m + 1)``; ``w`` is the least ``k`` with
``u < F(k)``, ``F`` Poisson(``mean``)'s distribution function (its thresholds taken as whole
multiples of 2**-53, so the draw is integer arithmetic). The bag of a row is therefore the same
whatever holds the row (files, row groups, parts, workers, input form), identical rows share it,
and its counts are whole numbers: a member's histograms stay exact integers.

Poisson(1) weights are the bootstrap of large samples (Oza & Russell's online bagging; Spark
MLlib's and PLANET's forests): a row is left out of a member with probability ``e**-mean``
(0.368 for a mean of 1), its out-of-bag rows. ``mean`` is ``max_samples`` as a fraction of the rows.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..kernels.jit import jit, numba
from ..errors import ParameterError
from .folds import FoldSpec
from .row_hash import mix64

__all__ = ["BagSpec", "bag_salts", "poisson_thresholds", "multiplicities", "multiplicities_naive"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
BAG_TAG = np.uint64(0xB0075712A9B5E7D1)  # keeps the bags' salts apart from the folds' (io.folds)
MAX_MULTIPLICITY = 127  # the draws' ceiling: Poisson(1) reaches 20 once in 10**19 draws

if numba is not None:
    from .row_hash import _finalise

    _mix = jit(_finalise, inline="always")

    @jit
    def _draw(hashes, salts, thresholds, out):
        for i in range(hashes.size):
            h = hashes[i]
            for m in range(salts.size):
                u = _mix(h ^ salts[m]) >> np.uint64(11)
                k = 0
                while k < thresholds.size and u >= thresholds[k]:
                    k += 1
                out[m, i] = k


def bag_salts(seed: int, n_members: int) -> np.ndarray:
    """The salt of each member: ``mix64((seed * golden) ^ BAG_TAG + m + 1)``, uint64 (n_members,)."""
    with np.errstate(over="ignore"):
        base = (np.uint64(seed) * _GOLDEN) ^ BAG_TAG
        return mix64(base + np.arange(1, n_members + 1, dtype=np.uint64))


def poisson_thresholds(mean: float) -> np.ndarray:
    """``floor(F(k) * 2**53)`` for k = 0, 1, ... while below 2**53 (uint64), Poisson(``mean``)'s
    distribution function as integers; at most :data:`MAX_MULTIPLICITY` of them."""
    if not 0.0 < mean <= 64.0:
        raise ParameterError(f"the bootstrap's mean must be in (0, 64], got {mean!r}")
    out, term, total = [], math.exp(-mean), 0.0
    for k in range(MAX_MULTIPLICITY):
        total += term
        scaled = int(math.floor(min(total, 1.0) * 2.0**53))
        if scaled >= 2**53:
            break
        out.append(scaled)
        term *= mean / (k + 1)
    return np.asarray(out, dtype=np.uint64)


def multiplicities(hashes: np.ndarray, seed: int, n_members: int, mean: float = 1.0) -> np.ndarray:
    """Each row's multiplicity in each member's bag: (n_members, n_rows) int16, from the row hashes."""
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    salts, thresholds = bag_salts(seed, n_members), poisson_thresholds(mean)
    out = np.empty((n_members, hashes.size), dtype=np.int16)
    if numba is None:  # pragma: no cover
        return multiplicities_naive(hashes, seed, n_members, mean)
    _draw(hashes, salts, thresholds, out)
    return out


def multiplicities_naive(hashes: np.ndarray, seed: int, n_members: int, mean: float = 1.0) -> np.ndarray:
    """The twin of :func:`multiplicities` in numpy: ``searchsorted`` of the uniform draws."""
    hashes = np.asarray(hashes, dtype=np.uint64)
    thresholds = poisson_thresholds(mean)
    out = np.empty((n_members, hashes.size), dtype=np.int16)
    for m, salt in enumerate(bag_salts(seed, n_members)):
        u = mix64(hashes ^ salt) >> np.uint64(11)
        out[m] = np.searchsorted(thresholds, u, side="right")
    return out


@dataclass(frozen=True)
class BagSpec:
    """A forest's bags: ``n_members`` members, multiplicities Poisson(``mean``) from ``seed``, or every
    row once in every member (``bootstrap=False``). It stands where a :class:`~dasktree.io.folds.FoldSpec`
    stands for the runners: :meth:`parts_of` gives each row's multiplicity per member as the rows' "parts"
    (``k`` = ``n_members`` parts of one repetition), which a bagged pass plan counts as weights
    (:class:`~dasktree.kernels.plans.PassPlan` ``bagged``)."""

    n_members: int
    seed: int = 0
    mean: float = 1.0
    bootstrap: bool = True
    key: str | None = None
    content: tuple[str, ...] | None = None
    positional: bool = False

    @property
    def k(self) -> int:
        return self.n_members

    repeats = 1
    column = None

    @property
    def n_parts(self) -> int:
        return self.n_members

    @property
    def columns(self) -> list[str]:
        return [] if self.key is None else [self.key]

    def hashing(self, roles) -> "BagSpec":
        """This spec hashing the columns ``roles`` fits on: the features and the target, not the weight
        column (a row of weight 2 is two identical rows, which share their bags: weights are repeated rows)."""
        return dataclasses.replace(self, content=(*roles.features, roles.target))

    def row_hashes(self, table: pa.Table, where: str = "the data") -> np.ndarray:
        """One uint64 per row: its key's hash, else its content's; with ``positional``, the content's
        columns named by their place in ``content`` (scikit-learn's ``X, y``: an array and a DataFrame
        of the same values, whatever their columns' names, give the same bags)."""
        if self.positional and self.key is None and self.content is not None:
            table = table.select(list(self.content)).rename_columns([f"#{i}" for i in range(len(self.content))])
            return FoldSpec(2, content=tuple(table.column_names)).row_hashes(table, where)
        return FoldSpec(2, key=self.key, content=self.content).row_hashes(table, where)

    def parts_of(self, table: pa.Table, part) -> np.ndarray:
        """Each row's multiplicity in each member: (n_members, n_rows) int16."""
        if not self.bootstrap:
            return np.ones((self.n_members, table.num_rows), dtype=np.int16)
        return multiplicities(self.row_hashes(table, part.key), self.seed, self.n_members, self.mean)
