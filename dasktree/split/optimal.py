"""Optimal multi-way splits of a numeric attribute (Elomaa & Rousu).

Given a node's class-count histogram of one numeric attribute, ``counts`` of
shape ``(n_bins, n_classes)`` in value order, find for every arity
``k = 1 .. max_arity`` the partition of the bins into ``k`` intervals that
minimises a *cumulative* evaluation function ``sum_i g(S_i)``:

* ``"entropy"``: ``g(S) = |S| H(S)``, ``H`` the class entropy in bits. The
  cost divided by ``|S|`` is the average class entropy *ACE*; the information
  gain is ``H(S) - cost / |S|`` (000, Section 2).
* ``"gini"``: ``g(S) = |S| gini(S)``.
* ``"tse"``: training set error, ``g(S) = |S| - max_c |S|_c``, the examples
  an interval misclassifies when it predicts its majority class.

All three impurities are concave, so the functions are well-behaved: an optimal
k-split on *boundary points* (block borders, 001 Definition 2, see
:mod:`dasktree.split.blocks`) always exists.

Algorithms (000, Table 1):

* :func:`bin_opt` -- dynamic programming over the non-empty bins (Fulton et
  al.; Elomaa & Rousu's *Bin-Opt*), ``O((k + m) V^2)``.
* :func:`block_opt` -- the same dynamic programming over blocks; only block
  borders are candidate cuts (*Block-Opt*), ``O((k + m) B^2)``.
* :func:`block_opt_p` -- Block-Opt with the candidate pruning of Theorem 2,
  Table 2 of "Speeding up the search for optimal partitions" (*Block-Opt-P*).
* :func:`tse_opt` -- the one-pass ``O(k m B)`` optimiser of training set
  error (000, Section 2 and Table 1, "One-pass").

:func:`optimal_partitions` dispatches by name through :data:`METHODS`.

Result
------
:class:`OptimalPartitions`: ``cost[k]`` is the optimal cost of a split into
exactly ``k`` non-empty intervals (``inf`` when the node has fewer than ``k``
non-empty bins; ``cost[0]`` is unused and ``inf``; ``cost[1]`` is the cost of
no split), ``cuts[k]`` the ``k - 1`` cut bin indices in increasing order (cut
``j`` separates bin ``j`` from bin ``j + 1``, examples of bins ``<= j`` go
left; a cut is always placed right after a non-empty bin), ``evaluations`` the
number of candidate partitions evaluated (see below).

Empty bins hold no example of the node and are ignored: they never separate
two intervals by themselves and an interval is never empty.

Arities above the number of blocks. With ``B`` blocks only ``B - 1`` boundary
points exist, but a split into ``k > B`` intervals is still possible when some
uniform block spans several non-empty bins (``V`` of them in all). Such a
split can do no better than the ``B``-split into all blocks, and that cost is
reached by cutting inside uniform blocks (whose pieces are pure): the block
methods report ``cost[k] = cost[B]`` for ``B < k <= V``, with all ``B - 1``
boundary points plus the rightmost ``k - B`` non-boundary cuts. Every method
therefore returns the optimum over all partitions of the non-empty bins for
every ``k``; for ``k <= B`` the block methods cut on boundary points only.

Ties
----
Costs are float64 and compared with exact ``<`` (Table 2, line 12). Each DP
cell ``(i, k)`` scans its candidates ``j`` from the right (Table 2, line 7:
the scan starts at ``N[i, k-1] = i - 1``) and keeps the first strict minimum,
so among candidates of equal cost the rightmost last cut wins; the split is
read back through ``L`` (rightmost last cut, then, for that prefix, its
rightmost last cut, and so on). Bin-Opt, Block-Opt and Block-Opt-P use the same
rule, and Block-Opt-P returns exactly Block-Opt's floats and cuts (see the
pruning margin below). The one-pass TSE optimiser prefers, on a tie, starting
a new interval (a cut further right) and then the lower class index. The
results are a function of the counts alone: bit-identical on every run.

Evaluations
-----------
``evaluations`` counts executions of Table 2, line 9: the evaluation of one
candidate partition ``P[j, k-1] + cost[j+1]`` (the best ``(k-1)``-split of the
first ``j`` units extended by the interval ``j+1 .. i``). This is the count of
000, Section 5 / Figure 2 ("the number of candidate partitions evaluated"):
Bin-Opt and Block-Opt evaluate every candidate, Block-Opt-P evaluates a
candidate as long as it is in the N list, including the evaluation that prunes
it, and never again afterwards. All three run the same loop (including line
4's arity limit) on ``V`` non-empty bins or ``B <= V`` blocks, and
Block-Opt-P's lists are subsets of Block-Opt's, so always
``Block-Opt-P <= Block-Opt <= Bin-Opt``. Interval costs (line 2) are not
partition evaluations and are not counted. For the one-pass TSE optimiser,
one evaluation is one state ``(unit, arity, class)`` of the pass.

Numerics and the two kernels
----------------------------
The dynamic programming loops, the extraction of the units (non-empty bins
or blocks) and the read-back of the cuts run compiled by numba
(``@numba.njit(cache=True, nogil=True)``) when numba can be imported, and
otherwise as numpy code (:func:`dasktree.split.blocks.bins_to_blocks` for the
blocks); both compute every float with the same operations in the same order
and give identical results (the tests check it). The compiled extraction
spares the ~30 us of numpy calls that dominated a call on a small domain. The
units' class counts and their total are numpy's bit for bit for non-integer
counts too: a block's counts are summed in ``np.add.reduceat``'s order and
the total in ``ndarray.sum``'s (:mod:`dasktree.split.unit_kernels`).

Interval costs: entropy ``sum_c n_c (log2 n - log2 n_c)``, gini
``sum_c n_c (n - n_c) / n`` (exact numerator for integer counts), TSE
``n - max_c n_c``. For integer counts with at most :data:`LOG2_TABLE_MAX`
examples, the ``log2`` values come from a table of ``log2`` of the integers,
computed by numpy, cached per process and shared by both kernels. Above that
(or for non-integer counts) each kernel calls its own ``log2``: the C
library's under numba, numpy's SIMD one otherwise; on some CPUs (AVX-512)
these differ in the last bit for about one argument in 10^4, so the two
kernels may then break a near-tie differently. Each kernel on its own is
deterministic; do not mix workers with and without numba when bit-identical
models across them matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import InputError
from .compiled import LOG2_TABLE_MAX, log2_table_for
from .optimal_kernels import kernel_backend, loaded_kernels

__all__ = [
    "CRITERIA",
    "DEFAULT_MAX_ARITY",
    "LOG2_TABLE_MAX",
    "METHODS",
    "PRUNE_MARGIN",
    "OptimalPartitions",
    "bin_opt",
    "block_opt",
    "block_opt_p",
    "kernel_backend",
    "optimal_partitions",
    "tse_opt",
]

CRITERIA = ("entropy", "gini", "tse")
"""Cumulative criteria the dynamic programming methods minimise."""

_CRITERION_CODE = {"entropy": 0, "gini": 1, "tse": 2}

DEFAULT_MAX_ARITY = 5
"""Default ``max_arity`` of :func:`optimal_partitions`."""

PRUNE_MARGIN = 1e-9
"""Relative safety margin of Block-Opt-P's pruning test (Table 2, line 10).

A candidate is pruned when ``current >= rejectlevel + PRUNE_MARGIN * n``
(``n`` the node's example count) instead of the paper's ``current >=
rejectlevel``, for two reasons:

1. Exact ties. The paper's justification that "the optimal k-split will always
   pass the first test" needs a k-split *strictly* better than the best
   (k-1)-split; by concavity one is only guaranteed to be *at least as good*.
   With two adjacent mixed blocks of proportional class distributions, e.g.
   ``[[1, 1], [1, 1]]``, every 2-split costs exactly what no split costs
   (4 bits), line 10 prunes every candidate and ``P[2, 2]`` stays infinite.
2. Rounding. Theorem 2 is exact arithmetic; in float64 a mathematically equal
   pair can round either way and the optimum be pruned.

With the margin (far above float64 rounding of these sums, far below any
meaningful cost difference) a pruned candidate is worse than a kept one by at
least the margin at every later step, so pruning never removes a candidate
that Block-Opt would choose: Block-Opt-P returns Block-Opt's costs and cuts
bit for bit.
"""


# ---------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class OptimalPartitions:
    """Optimal k-interval splits of one attribute for ``k = 1 .. max_arity``.

    Attributes
    ----------
    cost : ndarray of float64, shape (max_arity + 1,), read-only
        ``cost[k]``: minimum cumulative cost ``sum_i g(S_i)`` over splits into
        exactly ``k`` non-empty intervals; ``inf`` where impossible (fewer
        than ``k`` non-empty bins) and at the unused index 0. ``cost[1]`` is
        the cost of no split.
    cuts : tuple of tuples of int
        ``cuts[k]``: the ``k - 1`` cut bin indices of that split, increasing;
        cut ``j`` separates bin ``j`` from bin ``j + 1``. Empty for ``k = 0``,
        ``k = 1`` and impossible ``k``.
    evaluations : int
        Candidate partitions evaluated (Table 2, line 9; see the module doc).
    """

    cost: np.ndarray
    cuts: tuple[tuple[int, ...], ...]
    evaluations: int

    @property
    def max_arity(self) -> int:
        return int(self.cost.shape[0]) - 1


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------


def _as_counts(counts) -> np.ndarray:
    """``counts`` as a C-contiguous float64 array, after the checks of its shape and dtype."""
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise InputError(
            f"counts must be a 2-D array of shape (n_bins, n_classes); got shape {arr.shape}"
        )
    if arr.shape[1] < 1:
        raise InputError(
            f"counts must have at least one class column (shape (n_bins, n_classes >= 1)); "
            f"got shape {arr.shape}"
        )
    if arr.dtype.kind not in "iuf":
        raise InputError(
            f"counts must hold integer or float class counts; got dtype {arr.dtype}"
        )
    return np.ascontiguousarray(arr, dtype=np.float64)


def _check_counts(counts) -> np.ndarray:
    """:func:`_as_counts`, then finite and non-negative values (the error names the first bad one).

    The optimisers leave these checks to the units kernel, which scans the
    counts anyway, and call this only to report what it found.
    """
    arr = _as_counts(counts)
    if arr.size:
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise InputError(
                f"counts must be finite; got {arr[tuple(bad)]} at bin {bad[0]}, class {bad[1]}"
            )
        if arr.min() < 0:
            bad = np.argwhere(arr < 0)[0]
            raise InputError(
                f"counts must be non-negative; got {arr[tuple(bad)]:g} at bin {bad[0]}, "
                f"class {bad[1]}"
            )
    return arr


def _units(counts, on_blocks: bool, kernels: dict):
    """``(counts, units, last_bin, n_nonempty, total, integral)``: see ``unit_kernels.units_loops``."""
    counts = _as_counts(counts)
    status, units, last_bin, n_nonempty, total, integral = kernels["units"](counts, on_blocks)
    if status:
        _check_counts(counts)  # raises, naming the bad value
        raise AssertionError("the units kernel rejected valid counts; it's a bug, please report it")
    return counts, units, last_bin, int(n_nonempty), float(total), bool(integral)


def check_max_arity(max_arity) -> int:
    if isinstance(max_arity, (bool, np.bool_)) or not isinstance(
        max_arity, (int, np.integer)
    ):
        raise InputError(f"max_arity must be an integer >= 2; got {max_arity!r}")
    if max_arity < 2:
        raise InputError(f"max_arity must be an integer >= 2; got {int(max_arity)}")
    return int(max_arity)


def _check_criterion(criterion) -> int:
    if not isinstance(criterion, str) or criterion not in _CRITERION_CODE:
        raise InputError(f"criterion must be one of {list(CRITERIA)}; got {criterion!r}")
    return _CRITERION_CODE[criterion]


# ---------------------------------------------------------------------------
# Drivers
# ---------------------------------------------------------------------------


def _empty_result(max_arity: int, cost1: float) -> tuple[np.ndarray, list]:
    cost = np.full(max_arity + 1, np.inf)
    cost[1] = cost1
    return cost, [()] * (max_arity + 1)


def _finish(cost: np.ndarray, cuts: list, evaluations: int) -> OptimalPartitions:
    """The result; ``cost`` is the float64 array of :func:`_empty_result`, made read-only here."""
    cost.setflags(write=False)
    return OptimalPartitions(cost=cost, cuts=tuple(cuts), evaluations=int(evaluations))


def _extend_beyond_blocks(
    counts: np.ndarray, last_bin: np.ndarray, n_nonempty: int, cost: np.ndarray, cuts: list,
    max_arity: int,
) -> None:
    """Arities ``B < k <= V``: all boundary points plus cuts inside uniform blocks.

    Cutting a uniform block leaves pure pieces of cost 0, so these splits cost
    exactly the ``B``-split into blocks, the least cost any split can have.
    The extra cuts are the rightmost non-boundary cuts between non-empty bins.
    """
    n_blocks = last_bin.shape[0]
    if n_nonempty <= n_blocks or max_arity <= n_blocks:
        return
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    boundary = set(int(b) for b in last_bin[:-1])
    inner = [int(b) for b in nonempty[:-1] if int(b) not in boundary]
    for k in range(n_blocks + 1, min(max_arity, n_nonempty) + 1):
        extra = inner[len(inner) - (k - n_blocks) :]
        cost[k] = cost[n_blocks]
        cuts[k] = tuple(sorted(boundary.union(extra)))


def _cut_tuples(rows: np.ndarray, arity: int, cuts: list) -> None:
    """``cuts[k]`` for ``k = 2 .. arity`` from the read-back rows (cut bins, increasing)."""
    rows = rows.tolist()
    for k in range(2, arity + 1):
        cuts[k] = tuple(rows[k][: k - 1])


def _dp(counts, max_arity, criterion, *, on_blocks: bool, prune: bool) -> OptimalPartitions:
    kernels = loaded_kernels()
    counts, units, last_bin, n_nonempty, total, integral = _units(counts, on_blocks, kernels)
    max_arity = check_max_arity(max_arity)
    crit = _check_criterion(criterion)
    n_units = units.shape[0]
    if n_units == 0:
        cost, cuts = _empty_result(max_arity, 0.0)
        return _finish(cost, cuts, 0)
    arity = min(max_arity, n_units)  # P, L columns beyond n_units are never used
    P, L, evaluations = kernels["table2"](
        units, arity, crit, bool(prune), PRUNE_MARGIN * total,
        log2_table_for(total, integral, crit),
    )
    cost, cuts = _empty_result(max_arity, 0.0)
    cost[1 : arity + 1] = P[n_units, 1 : arity + 1]
    _cut_tuples(kernels["cuts"](L, last_bin, arity), arity, cuts)
    if on_blocks:
        _extend_beyond_blocks(counts, last_bin, n_nonempty, cost, cuts, max_arity)
    return _finish(cost, cuts, evaluations)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def bin_opt(counts, *, max_arity: int, criterion: str) -> OptimalPartitions:
    """Bin-Opt: optimal k-splits by dynamic programming over the non-empty bins.

    Every border between two non-empty bins is a candidate cut (Fulton et al.
    1995; 000, Table 1). Same loop as :func:`block_opt` without pruning.
    """
    return _dp(counts, max_arity, criterion, on_blocks=False, prune=False)


def block_opt(counts, *, max_arity: int, criterion: str) -> OptimalPartitions:
    """Block-Opt: the dynamic programming of :func:`bin_opt` over blocks.

    Only block borders (boundary points) are candidate cuts, which loses no
    optimum for the well-behaved criteria here (000, Section 2).
    """
    return _dp(counts, max_arity, criterion, on_blocks=True, prune=False)


def block_opt_p(counts, *, max_arity: int, criterion: str) -> OptimalPartitions:
    """Block-Opt-P: Table 2 of 000, Block-Opt with the pruning of Theorem 2.

    A candidate prefix split ``P[j, k-1]`` whose extension to the current
    prefix is no better than the best ``(k-1)``-split of that prefix
    (``P[j, k-1] + cost[j+1] >= P[i, k-1]``, plus :data:`PRUNE_MARGIN`) is
    unlinked from the list ``N`` and never evaluated again. Same costs and
    cuts as :func:`block_opt`, fewer evaluations.
    """
    return _dp(counts, max_arity, criterion, on_blocks=True, prune=True)


def tse_opt(counts, *, max_arity: int, criterion: str = "tse") -> OptimalPartitions:
    """Optimal k-splits for training set error by the one-pass optimiser.

    The cost of an interval is the number of its examples outside its
    majority class. The pass runs over blocks (TSE is concave and cumulative,
    hence well-behaved), so cuts lie on boundary points for ``k <= B``.
    ``criterion`` exists for :data:`METHODS`' uniform signature and must be
    ``"tse"``.
    """
    kernels = loaded_kernels()
    counts, units, last_bin, n_nonempty, total, _ = _units(counts, True, kernels)
    max_arity = check_max_arity(max_arity)
    if criterion != "tse":
        raise InputError(
            f"criterion must be 'tse' for method 'tse_opt' (it optimises training set "
            f"error only); got {criterion!r}"
        )
    n_units = units.shape[0]
    if n_units == 0:
        cost, cuts = _empty_result(max_arity, 0.0)
        return _finish(cost, cuts, 0)
    arity = min(max_arity, n_units)
    top, start, argtop, evaluations = kernels["tse"](units, arity)
    cost, cuts = _empty_result(max_arity, total - float(top[1]))
    cost[2 : arity + 1] = total - top[2 : arity + 1]
    rows, found = kernels["tse_cuts"](start, argtop, last_bin, arity)
    rows, found = rows.tolist(), found.tolist()
    for k in range(2, arity + 1):
        cuts[k] = tuple(rows[k][k - 1 - found[k] : k - 1])
    _extend_beyond_blocks(counts, last_bin, n_nonempty, cost, cuts, max_arity)
    return _finish(cost, cuts, evaluations)


METHODS: dict[str, Callable[..., OptimalPartitions]] = {
    "bin_opt": bin_opt,
    "block_opt": block_opt,
    "block_opt_p": block_opt_p,
    "tse_opt": tse_opt,
}
"""Optimisers by name; each is called as ``f(counts, max_arity=..., criterion=...)``."""


def optimal_partitions(
    counts,
    *,
    max_arity: int = DEFAULT_MAX_ARITY,
    criterion: str = "entropy",
    method: str = "block_opt_p",
) -> OptimalPartitions:
    """Optimal splits into ``1 .. max_arity`` intervals of one numeric attribute.

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin, bins in value order; empty bins
        are allowed and ignored.
    max_arity : int >= 2
        Largest number of intervals.
    criterion : {"entropy", "gini", "tse"}
        Cumulative cost minimised (see the module doc). ``"tse"`` is the only
        criterion of method ``"tse_opt"``.
    method : {"bin_opt", "block_opt", "block_opt_p", "tse_opt"}
        Optimiser, from :data:`METHODS`.

    Raises
    ------
    ValueError (:class:`dasktree.errors.InputError`)
        Bad shape, dtype, negative or non-finite counts, ``max_arity < 2``,
        unknown criterion or method.
    """
    if not isinstance(method, str) or method not in METHODS:
        raise InputError(f"method must be one of {sorted(METHODS)}; got {method!r}")
    _check_criterion(criterion)
    return METHODS[method](counts, max_arity=max_arity, criterion=criterion)
