"""Multi-way numeric tests and the selection functions that choose among arities.

With ``max_arity > 2`` a numeric attribute's test at a node is an optimal
k-interval split for every ``k = 2 .. max_arity`` (Block-Opt-P over the node's
bins, :mod:`dasktree.split.optimal`), of which one is kept by a *selection
function*. Information gain grows with the arity, so the selection corrects
for it (Elomaa & Rousu, 001):

* ``balanced_gain``: ``BG_log = gain / log2 k`` (the default for multi-way);
* ``gain_ratio``: ``gain / split_information`` (Quinlan);
* ``distance``: ``1 - d`` with López de Mántaras' normalized distance
  ``d(Pc, Pd) = (H(Pc|Pd) + H(Pd|Pc)) / H(Pc ∩ Pd)`` between the class
  partition and the test's partition.

The same function then ranks the attributes (numeric and nominal alike).
``gain`` is the impurity decrease of the criterion (entropy: information gain).

Missing values are not part of the optimal partition: they join the child
where they give the largest gain (ties: the larger child, then the lower
index), as in the binary search. A split whose child would hold fewer than
``min_samples_leaf`` examples is not a candidate.

Two twins: :func:`numeric_multiway_reference`, the readable numpy version,
and the compiled :func:`numeric_multiway` / :func:`numeric_multiway_batch`
(:mod:`dasktree.split.multiway_kernel`), which return the same tests, the same
gain floats and the same children. The reference spends its time in many
small numpy calls per node, tree and attribute; the compiled batch makes one
call for the M histograms of an attribute, and the dynamic program is then most
of the time on histograms of hundreds of blocks.
Float (non-integer dtype) histograms, and a process without numba, use the
reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .criteria import entropy, gini
from .multiway_kernel import multiway_kernel_available, multiway_kernels, run_kernels
from .node_tests import Test, numeric_test
from .optimal import block_opt_p, check_max_arity

__all__ = ["SELECTIONS", "MultiwayChoices", "multiway_choices", "multiway_compiled", "multiway_kernel_available",
           "numeric_multiway", "numeric_multiway_batch", "numeric_multiway_reference", "selection_score"]

SELECTIONS = ("balanced_gain", "gain_ratio", "distance")


def _entropy_of(counts: np.ndarray) -> float:
    return float(entropy(np.asarray(counts, dtype=np.float64).ravel()))


def selection_score(children: np.ndarray, gain: float, selection: str) -> float:
    """Score of a test with children class counts ``children`` (k, C) and impurity decrease ``gain``."""
    sizes = children.sum(axis=1)
    k = int(np.count_nonzero(sizes))
    if k < 2:
        return -np.inf
    if selection == "balanced_gain":
        return gain / np.log2(k)
    if selection == "gain_ratio":
        info = _entropy_of(sizes)
        return gain / info if info > 0 else -np.inf
    if selection == "distance":
        joint = _entropy_of(children)
        if joint <= 0:
            return -np.inf
        d = (2 * joint - _entropy_of(sizes) - _entropy_of(children.sum(axis=0))) / joint
        return 1.0 - d
    raise ValueError(f"selection must be one of {list(SELECTIONS)}, got {selection!r}")


def _impurity(counts: np.ndarray, name: str) -> np.ndarray:
    return gini(counts) if name == "gini" else entropy(counts)


def _place_missing(children: np.ndarray, miss: np.ndarray, parent_impurity: float, n: float,
                   name: str) -> tuple[int, float, np.ndarray]:
    """(default child, gain, children with the missing values added)."""
    k = children.shape[0]
    options = np.repeat(children[None], k, axis=0)
    options[np.arange(k), np.arange(k)] += miss
    sizes = options.sum(axis=-1)
    gains = parent_impurity - np.sum(sizes * _impurity(options, name), axis=-1) / n
    order = np.lexsort((np.arange(k), -children.sum(axis=1), -gains))
    best = int(order[0])
    return best, float(gains[best]), options[best]


def numeric_multiway_reference(h: np.ndarray, upper: np.ndarray, values: np.ndarray, a: int,
                               parent_impurity: float, n: float, *, impurity: str, max_arity: int,
                               selection: str, min_samples_leaf: int,
                               centre) -> tuple[Test, float, np.ndarray] | None:
    """The selected optimal k-interval test (k = 2 .. max_arity) on one numeric attribute.

    ``h`` is the attribute's slice of the node histogram: row 0 missing, then bins.
    ``centre(bins, cut, upper, values)`` moves a cut to the middle of a run of empty bins.
    Returns the test, its impurity decrease and its children's class counts
    (missing values included), or None when no test is valid. The numpy
    reference of :func:`numeric_multiway`.
    """
    bins = h[1:]
    if np.count_nonzero(bins.sum(axis=1)) < 2:
        return None
    optimum = block_opt_p(bins, max_arity=max_arity, criterion=impurity)
    best = None
    for k in range(2, max_arity + 1):
        if not np.isfinite(optimum.cost[k]):
            break
        cuts = np.asarray(optimum.cuts[k], dtype=np.int64) + 1  # 1-based: cut c sends bins <= c left
        edges = np.concatenate([[0], cuts, [bins.shape[0]]])
        children = np.stack([bins[edges[i]:edges[i + 1]].sum(axis=0) for i in range(k)])
        default, gain, children = _place_missing(children, h[0], parent_impurity, n, impurity)
        if children.sum(axis=1).min() < min_samples_leaf:
            continue
        score = selection_score(children, gain, selection)
        if best is None or score > best[0]:
            best = (score, cuts, default, gain, children)
    if best is None:
        return None
    _, cuts, default, gain, children = best
    cuts = np.array([centre(bins, int(c), upper, values) for c in cuts])
    return numeric_test(a, cuts, upper, default), gain, children


@dataclass(frozen=True)
class MultiwayChoices:
    """The selected multi-way test of each of M histograms (arrays over M).

    ``arity``: the chosen ``k`` (0: no valid test; -1,
    :data:`dasktree.split.multiway_kernel.INVALID`: a negative count);
    ``default``: the child of the missing values; ``gain``: the
    impurity decrease; ``score``: the selection score; ``children`` (M, A, C)
    int64: the children's class counts, missing values included (first
    ``arity`` rows); ``raw_cuts`` and ``cuts`` (M, A - 1): the ``arity - 1``
    1-based cuts of Block-Opt-P (cut ``j`` sends bins ``<= j`` left), and the
    same cuts centred in their runs of empty bins.
    """

    arity: np.ndarray
    default: np.ndarray
    gain: np.ndarray
    score: np.ndarray
    children: np.ndarray
    raw_cuts: np.ndarray
    cuts: np.ndarray


def multiway_choices(h: np.ndarray, parent_impurity: np.ndarray, n: np.ndarray, *, impurity: str,
                     max_arity: int, selection: str, min_samples_leaf: float, upper: np.ndarray,
                     values: np.ndarray) -> MultiwayChoices:
    """The selected optimal k-interval test (k = 2 .. max_arity) of each histogram of ``h``.

    Parameters
    ----------
    h : ndarray of int, shape (M, w, C)
        One attribute's rows of M node histograms: row 0 missing values, then
        the ``w - 1`` bins in value order.
    parent_impurity, n : ndarray of float64, shape (M,)
        Each node's impurity and size.
    impurity : {"entropy", "gini"}
    max_arity : int >= 2
    selection : {"balanced_gain", "gain_ratio", "distance"}
    min_samples_leaf : float
    upper, values : ndarray of float64
        The attribute's bin upper edges and a value per bin (for centring).

    Raises
    ------
    RuntimeError
        When the compiled kernels are not available (see :func:`multiway_kernel_available`).
    """
    kernels = multiway_kernels()
    if kernels is None:
        raise RuntimeError("the compiled multi-way search needs numba; use numeric_multiway_reference")
    return MultiwayChoices(*run_kernels(kernels, h, parent_impurity, n, impurity=impurity, max_arity=max_arity,
                                        selection=selection, min_samples_leaf=min_samples_leaf, upper=upper,
                                        values=values))


def multiway_compiled(h: np.ndarray, impurity: str, max_arity, selection: str) -> bool:
    """Whether the compiled twin handles histograms ``h`` with these parameters.

    It needs numba, integer counts, a known impurity and selection and a
    valid ``max_arity``; otherwise the reference runs (and raises what it raises).
    """
    if h.dtype.kind not in "iu" or impurity not in ("entropy", "gini") or selection not in SELECTIONS:
        return False
    try:
        check_max_arity(max_arity)
    except ValueError:
        return False
    return multiway_kernel_available()


def _reject(bins: np.ndarray, max_arity: int, impurity: str) -> None:
    """What the reference does with a histogram holding a negative count: None, or raise."""
    if np.count_nonzero(bins.sum(axis=1)) < 2:
        return None
    block_opt_p(bins, max_arity=max_arity, criterion=impurity)  # raises InputError: negative count
    raise AssertionError("the multi-way kernel rejected valid counts; it's a bug, please report it")


def numeric_multiway(h: np.ndarray, upper: np.ndarray, values: np.ndarray, a: int, parent_impurity: float,
                     n: float, *, impurity: str, max_arity: int, selection: str, min_samples_leaf: int,
                     centre) -> tuple[Test, float, np.ndarray] | None:
    """:func:`numeric_multiway_reference`, compiled: the same result for one histogram.

    The kernel chooses the arity, the cuts, the default child and the gain;
    ``centre`` then places the thresholds as in the reference.
    """
    h = np.asarray(h)
    if not multiway_compiled(h, impurity, max_arity, selection):
        return numeric_multiway_reference(h, upper, values, a, parent_impurity, n, impurity=impurity,
                                          max_arity=max_arity, selection=selection,
                                          min_samples_leaf=min_samples_leaf, centre=centre)
    found = multiway_choices(h[None], np.array([parent_impurity], dtype=np.float64),
                             np.array([n], dtype=np.float64), impurity=impurity, max_arity=max_arity,
                             selection=selection, min_samples_leaf=min_samples_leaf, upper=upper,
                             values=values)
    k = int(found.arity[0])
    if k <= 0:
        return _reject(h[1:], max_arity, impurity) if k < 0 else None
    bins = h[1:]
    cuts = np.array([centre(bins, int(c), upper, values) for c in found.raw_cuts[0, : k - 1]])
    return (numeric_test(a, cuts, upper, int(found.default[0])), float(found.gain[0]),
            found.children[0, :k].astype(h.dtype))


def numeric_multiway_batch(hists: np.ndarray, upper: np.ndarray, values: np.ndarray, a: int,
                           parent_impurity: np.ndarray, n: np.ndarray, *, impurity: str, max_arity: int,
                           selection: str, min_samples_leaf: int) -> list:
    """:func:`numeric_multiway` of the M histograms ``hists`` (M, w, C) of attribute ``a`` at once.

    One compiled call for all M (the trees of a forest sharing a node, a
    frontier's nodes). Thresholds are centred by the rule of
    :func:`dasktree.split.search._centered_cut`, compiled. Equal tests are one
    (immutable) :class:`Test` object. ``parent_impurity`` and ``n`` have shape
    (M,). Only for :func:`multiway_compiled` histograms and parameters.
    """
    hists = np.asarray(hists)
    if not multiway_compiled(hists, impurity, max_arity, selection):
        raise ValueError("numeric_multiway_batch needs numba, integer counts, impurity 'entropy' or 'gini', "
                         f"a selection in {list(SELECTIONS)} and max_arity >= 2 (multiway_compiled); "
                         "use numeric_multiway")
    found = multiway_choices(hists, parent_impurity, n, impurity=impurity, max_arity=max_arity,
                             selection=selection, min_samples_leaf=min_samples_leaf, upper=upper,
                             values=values)
    arity, default, gain = found.arity.tolist(), found.default.tolist(), found.gain.tolist()
    cuts = found.cuts.tolist()
    tests: dict[tuple, Test] = {}
    out: list = []
    for m, k in enumerate(arity):
        if k <= 0:
            out.append(_reject(hists[m, 1:], max_arity, impurity) if k < 0 else None)
            continue
        key = (tuple(cuts[m][: k - 1]), default[m])
        test = tests.get(key)
        if test is None:
            test = tests[key] = numeric_test(a, np.array(key[0], dtype=np.int64), upper, key[1])
        out.append((test, gain[m], found.children[m, :k].astype(hists.dtype)))
    return out
