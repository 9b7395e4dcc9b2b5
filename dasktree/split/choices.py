"""The best test of each of a batch of training histograms: every attribute's best, then the best of those.

:func:`best_split` (one histogram), :func:`best_splits` (M stored ones) and
:func:`search_batch` (M differences of stored slices, a forest's trees at its
nodes) give :class:`~dasktree.split.search.Candidate` objects;
:func:`choose_batch` gives the same choices as :class:`Choices` columns, which
the level search writes out without an object per node
(:mod:`dasktree.levels.level_search`). Each attribute's best test is
:mod:`dasktree.split.search`'s (numeric binary tests by the compiled scan of
:mod:`dasktree.split.binary_kernel` where it applies); the ranking across
attributes follows the rule described there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .binary_kernel import (
    TrainBatch,
    kernel_available,
    log2_table,
    numeric_binary_numba,
)
from .gain_ratio_kernel import c45_rank
from .multiway import selection_score
from .node_tests import Test, numeric_test
from .search import (
    ENGINES,
    AttributeLayout,
    Candidate,
    Column,
    SplitParams,
    attribute_candidates,
    entropy_of_counts,
    gains_of,
    node_impurity,
    nominal_binary_columns,
    numeric_binary,
)

__all__ = ["best_split", "best_splits", "search_batch", "Choices", "choose_batch"]


def best_split(hist: np.ndarray, layout: AttributeLayout, params: SplitParams) -> Candidate | None:
    """The best test for one tree at one node, or None.

    Parameters
    ----------
    hist : ndarray of shape (total_bins, n_classes)
        The tree's training counts at the node, attributes concatenated as in
        ``layout`` (each: missing row, then bins).
    """
    return best_splits(np.asarray(hist)[None], layout, params)[0]


def best_splits(hists: np.ndarray, layout: AttributeLayout, params: SplitParams, *,
                engine: str = "auto") -> list[Candidate | None]:
    """:func:`best_split` of M histograms at once, shape (M, total_bins, n_classes).

    Numeric attributes are searched for all M together (the common case at a
    wide frontier); each histogram's choice is exactly ``best_split``'s.
    ``engine`` is one of :data:`ENGINES`.
    """
    o, w = int(layout.offsets[0]), int(layout.widths[0])
    return search_batch(TrainBatch.of(hists, slice(o, o + w)), layout, params, engine=engine)


def search_batch(batch: TrainBatch, layout: AttributeLayout, params: SplitParams, *,
                 engine: str = "auto") -> list[Candidate | None]:
    """:func:`best_splits` of the training histograms of ``batch`` (differences of stored slices)."""
    return choose_batch(batch, layout, params, engine=engine).candidates()


@dataclass
class Choices:
    """The best test of each of M training histograms (:func:`choose_batch`), as columns.

    A binary threshold test on a numeric attribute that the compiled scan found
    is only its numbers: ``attribute``, ``cut`` (bins ``1..cut`` go to child 0),
    ``default`` (the child of missing values), ``gain`` (also its score) and the
    training ``children`` counts. A deep forest level chooses thousands of
    those, and a :class:`Test` and :class:`Candidate` each were most of its
    search time. Any other choice is a :class:`Candidate` in ``others`` (its
    ``cut`` is -1); ``attribute`` is -1 where no test is valid.
    """

    attribute: np.ndarray  # (M,) int64
    gain: np.ndarray  # (M,) float64
    cut: np.ndarray  # (M,) int64
    default: np.ndarray  # (M,) int64
    children: np.ndarray  # (M, 2, C) int64, where cut >= 0
    others: dict[int, Candidate]
    uppers: tuple[np.ndarray | None, ...]  # the layout's bin upper edges (a test's threshold)
    searched: int = 0  # attribute searches made (histogram, attribute pairs)
    postponed: int = 0  # attribute searches postponed (dasktree.split.postpone)
    score: np.ndarray | None = None  # (M,) what ranked a threshold test as numbers (None: its gain)

    @classmethod
    def none(cls, size: int, n_classes: int, uppers: tuple) -> "Choices":
        """``size`` histograms with no test chosen yet."""
        return cls(np.full(size, -1, dtype=np.int64), np.full(size, -np.inf), np.full(size, -1, dtype=np.int64),
                   np.zeros(size, dtype=np.int64), np.zeros((size, 2, n_classes), dtype=np.int64), {}, uppers,
                   score=np.full(size, -np.inf))

    def scores(self) -> np.ndarray:
        """What ranked each threshold test as numbers: its gain, or (gain ratio) its score."""
        return np.where(np.isfinite(self.score), self.score, self.gain) if self.score is not None else self.gain

    def candidates(self) -> list[Candidate | None]:
        """The choices as :class:`Candidate` s (equal tests of one attribute share an object)."""
        tests: dict[tuple[int, int, int], Test] = {}
        out: list[Candidate | None] = []
        scores = self.scores()
        for m, (a, cut, default) in enumerate(zip(*(x.tolist() for x in (self.attribute, self.cut, self.default)))):
            if m in self.others or a < 0:
                out.append(self.others.get(m))
                continue
            if (a, cut, default) not in tests:
                tests[(a, cut, default)] = numeric_test(a, self.cut[m:m + 1], self.uppers[a], default)
            gain = float(self.gain[m])
            out.append(Candidate(tests[(a, cut, default)], gain, float(scores[m]), self.children[m]))
        return out


def choose_batch(batch: TrainBatch, layout: AttributeLayout, params: SplitParams, *,
                 engine: str = "auto", active: np.ndarray | None = None, monotonic: np.ndarray | None = None,
                 bounds: np.ndarray | None = None) -> Choices:
    """:func:`search_batch`'s choices as :class:`Choices`: the compiled scan's winners as numbers.

    ``active`` (attributes, M) bool, when given, names the attributes searched
    for each histogram (the others count as having no test); without it, all are.
    ``monotonic`` (attributes,) int8 and ``bounds`` (M, 2): each numeric attribute's constraint and
    each histogram's value bounds; a cut breaking them is no candidate (:mod:`dasktree.split.monotonic`).
    :func:`dasktree.split.postpone_search.choose` applies ``params.postpone`` on top of this.
    """
    mono = _Monotonic(monotonic, bounds)
    node_counts = batch.node_counts  # (M, C)
    n = node_counts.sum(axis=1).astype(np.float64)
    parent_impurity = node_impurity(node_counts, params.impurity_name)
    safe_n = np.where(n > 0, n, 1.0)
    if active is None:
        compiled, scan = _compiled_columns(batch, layout, params, parent_impurity, safe_n, engine, mono=mono)
        nominal = {}
        if params.nominal_split != "multiway":  # every nominal attribute's subset search in a few batches
            nominal = nominal_binary_columns(
                {a: batch.columns(int(layout.offsets[a]), int(layout.widths[a]))
                 for a in range(len(layout.kinds)) if layout.kinds[a] != "numeric" and a not in compiled},
                parent_impurity, safe_n, params)
        per_attribute = [
            compiled[a] if a in compiled else nominal[a] if a in nominal
            else attribute_candidates(batch, a, layout, params, parent_impurity, safe_n, *mono.of(a))
            for a in range(len(layout.kinds))
        ]
    else:
        compiled, scan, per_attribute = _active_columns(batch, layout, params, parent_impurity, safe_n, engine,
                                                        active, mono)
    m_total = len(batch)
    choices = Choices.none(m_total, node_counts.shape[1], layout.uppers)
    choices.searched = len(layout.kinds) * m_total if active is None else int(np.count_nonzero(active))
    if params.max_arity == 2 and params.criterion != "gain_ratio":
        # Ranked by gain alone: the winning attribute from the gains (ties: the lower attribute).
        gains = np.stack([gains_of(column) for column in per_attribute])  # (A, M)
        winner = np.argmax(gains, axis=0)
        best = gains[winner, np.arange(m_total)]
        valid = (n > 0) & np.isfinite(best)
        choices.attribute[valid] = winner[valid]
        choices.gain[valid] = best[valid]
        for a, column in compiled.items():
            cut, default, children, scanned = column.scan
            won = valid & (winner == a) & scanned
            choices.cut[won], choices.default[won], choices.children[won] = cut[won], default[won], children[won]
        for m in np.flatnonzero(valid & (choices.cut < 0)).tolist():
            test, gain, children = per_attribute[int(winner[m])][m]
            choices.others[m] = Candidate(test, gain, gain, children.astype(np.int64))
        return choices
    if params.max_arity == 2 and params.criterion == "gain_ratio":
        _gain_ratio_choices(choices, per_attribute, compiled, scan, n)
        return choices
    for m in range(m_total):
        candidate = _choose([column[m] for column in per_attribute], params) if n[m] > 0 else None
        if candidate is not None:
            choices.others[m] = candidate
            choices.attribute[m], choices.gain[m] = candidate.test.attribute, candidate.gain
    return choices


@dataclass(frozen=True)
class _Monotonic:
    """A search's monotonic constraints: each attribute's (None: none) and each histogram's bounds (M, 2)."""

    cst: np.ndarray | None
    bounds: np.ndarray | None

    def of(self, a: int, rows: np.ndarray | None = None) -> tuple[int, np.ndarray | None]:
        """``(constraint, bounds)`` of attribute ``a`` for the histograms ``rows`` (all when None)."""
        if self.cst is None or not self.cst[a]:
            return 0, None
        return int(self.cst[a]), self.bounds if rows is None else self.bounds[rows]


@dataclass
class _Scan:
    """The compiled scan's numbers for its attributes (in this order), each over the M histograms:
    the cut, the default child, the children counts (k, M, 2, C), and where the scan made the test."""

    attributes: np.ndarray  # (k,) int64
    cut: np.ndarray  # (k, M) int64
    default: np.ndarray  # (k, M) int64
    children: np.ndarray  # (k, M, 2, C) int64
    scanned: np.ndarray  # (k, M) bool


def _compiled_columns(batch: TrainBatch, layout: AttributeLayout, params: SplitParams,
                      parent_impurity: np.ndarray, n: np.ndarray, engine: str,
                      active: np.ndarray | None = None,
                      mono: _Monotonic = _Monotonic(None, None)) -> tuple[dict[int, "Column"], "_Scan | None"]:
    """Binary threshold tests of the numeric attributes by the compiled scan: {attribute: column},
    and the scan's numbers for all those attributes together (None without a scan).

    Empty when ``engine`` (or the search) calls for the numpy reference.
    Histograms too large for the scan to compute exactly the reference's gains
    (entropy: beyond the ``log2`` table; gini: 2**26 rows) go to the reference.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "numba" and not kernel_available():
        raise RuntimeError("engine='numba' needs numba installed; use engine='numpy' or 'auto'")
    attributes = [a for a, kind in enumerate(layout.kinds)
                  if kind == "numeric" and (active is None or active[a].any())]
    integer = np.issubdtype(batch.plus.dtype, np.integer) and np.issubdtype(batch.minus.dtype, np.integer)
    if engine == "numpy" or not kernel_available() or params.max_arity > 2 or not attributes or not integer:
        return {}, None
    entropy = params.impurity_name == "entropy"
    log2 = log2_table(float(n.max())) if entropy and len(batch) else np.zeros(1)
    # Exact like the reference for: entropy, the sizes the log2 table holds; gini, sums of
    # squared counts below 2**53 (float sums of integers are exact there); the histograms searched
    # (with ``active``: those with any of its attributes), sorted
    searched = np.arange(len(batch)) if active is None else np.flatnonzero(active[attributes].any(axis=0))
    rows = searched[n[searched] < (log2.size if entropy else 2**26)]
    mask = None if active is None else active[attributes]
    gain, cut, default, children = numeric_binary_numba(
        batch, layout, attributes, rows, parent_impurity, n, entropy, params.min_samples_leaf, log2, mask,
        mono.cst, mono.bounds)
    all_rest = np.setdiff1d(searched, rows)
    columns = {}
    scan = _Scan(np.asarray(attributes, dtype=np.int64), cut, default, children,
                 np.zeros((len(attributes), len(batch)), dtype=bool))
    for k, a in enumerate(attributes):
        found: dict[int, tuple] = {}
        rest = all_rest if active is None else all_rest[active[a, all_rest]]
        if rest.size:
            reference = numeric_binary(batch.columns(int(layout.offsets[a]), int(layout.widths[a]), rows=rest),
                                       layout.uppers[a], layout.values[a], a, parent_impurity[rest], n[rest],
                                       params, *mono.of(a, rest))
            gain[k, rest] = reference.gains
            found = {int(m): reference[i] for i, m in enumerate(rest) if np.isfinite(reference.gains[i])}
        scanned = scan.scanned[k]
        scanned[rows] = True if active is None else active[a, rows]
        columns[a] = Column(gain[k], _compiled_test(a, layout.uppers[a], cut[k], default[k], gain[k],
                                                    children[k], found), (cut[k], default[k], children[k], scanned))
    return columns, scan


def _active_columns(batch: TrainBatch, layout: AttributeLayout, params: SplitParams, parent_impurity: np.ndarray,
                    n: np.ndarray, engine: str, active: np.ndarray,
                    mono: _Monotonic = _Monotonic(None, None)) -> tuple[dict[int, Column], "_Scan | None", list]:
    """The columns of :func:`choose_batch`, each attribute searched only for the histograms ``active`` names."""
    m_total = len(batch)
    compiled, scan = _compiled_columns(batch, layout, params, parent_impurity, n, engine, active, mono)
    per_attribute: list = []
    for a in range(len(layout.kinds)):
        rows = np.flatnonzero(active[a])
        if a in compiled:
            per_attribute.append(compiled[a])
        elif rows.size == 0:
            per_attribute.append(Column(np.full(m_total, -np.inf), None))
        elif rows.size == m_total:
            per_attribute.append(attribute_candidates(batch, a, layout, params, parent_impurity, n, *mono.of(a)))
        else:
            sub = TrainBatch(batch.plus, batch.plus_index[rows], batch.minus, batch.minus_index[rows],
                             batch.node_counts[rows])
            column = attribute_candidates(sub, a, layout, params, parent_impurity[rows], n[rows], *mono.of(a, rows))
            per_attribute.append(_scattered(column, rows, m_total))
    return compiled, scan, per_attribute


def _scattered(column, rows: np.ndarray, m_total: int):
    """A column of the histograms ``rows`` as one of all ``m_total`` (no test elsewhere)."""
    if isinstance(column, Column):
        gains = np.full(m_total, -np.inf)
        gains[rows] = column.gains
        at = dict(zip(rows.tolist(), range(rows.size)))
        return Column(gains, lambda m: column[at[m]])
    out = [None] * m_total
    for m, result in zip(rows.tolist(), column):
        out[m] = result
    return out


def _compiled_test(a: int, upper: np.ndarray, cut: np.ndarray, default: np.ndarray, gain: np.ndarray,
                   children: np.ndarray, found: dict[int, tuple]):
    tests: dict[tuple[int, int], Test] = {}  # equal tests are one (immutable) object

    def build(m: int):
        if m in found:
            return found[m]
        key = (int(cut[m]), int(default[m]))
        if key not in tests:
            tests[key] = numeric_test(a, cut[m:m + 1], upper, key[1])
        return tests[key], float(gain[m]), children[m]

    return build


def _gain_ratio_choices(choices: Choices, per_attribute: list, compiled: dict, scan: "_Scan | None",
                        n: np.ndarray) -> None:
    """C4.5's choice (:func:`_choose`'s, bit for bit) for every histogram, building no test it need not.

    The split information of the compiled scan's tests comes from their children counts, for all
    attributes and histograms at once; only the other attributes' tests (nominal, or beyond the
    scan) are built to be measured. The ranking is :func:`~dasktree.split.gain_ratio_kernel.c45_rank`'s
    (compiled, every histogram in one call). A winner from the scan stays numbers, as gini's
    winners do."""
    gains = np.stack([gains_of(column) for column in per_attribute])  # (A, M)
    finite = np.isfinite(gains)
    info = np.zeros(gains.shape)
    measured = np.zeros(gains.shape, dtype=bool)
    if scan is not None:
        on = scan.scanned & finite[scan.attributes]
        info_scanned = np.zeros(on.shape)
        info_scanned[on] = entropy_of_counts(scan.children[on].sum(axis=2))
        info[scan.attributes], measured[scan.attributes] = info_scanned, on
    for a, column in enumerate(per_attribute):  # nominal subset tests: their children, no test built
        rows = np.flatnonzero(finite[a] & ~measured[a])
        if rows.size and getattr(column, "children", None) is not None:
            info[a, rows] = entropy_of_counts(column.children(rows).sum(axis=2))
            measured[a, rows] = True
    built: dict[tuple[int, int], tuple] = {}
    for a, m in zip(*np.nonzero(finite & ~measured)):
        built[(int(a), int(m))] = result = per_attribute[int(a)][int(m)]
        info[a, m] = float(entropy_of_counts(result[2].sum(axis=1)))
    winner, score = c45_rank(gains, info, n)
    won = np.flatnonzero(winner >= 0)
    choices.attribute[won], choices.gain[won] = winner[won], gains[winner[won], won]
    if scan is not None:  # the scan's winners: numbers
        at = np.full(len(per_attribute), -1, dtype=np.int64)
        at[scan.attributes] = np.arange(scan.attributes.size)
        k = at[winner[won]]
        numbers = np.zeros(won.size, dtype=bool)
        numbers[k >= 0] = scan.scanned[k[k >= 0], won[k >= 0]]
        ms, ks = won[numbers], k[numbers]
        choices.cut[ms], choices.default[ms] = scan.cut[ks, ms], scan.default[ks, ms]
        choices.children[ms], choices.score[ms] = scan.children[ks, ms], score[ms]
        won = won[~numbers]
    for m in won[np.argsort(winner[won], kind="stable")].tolist():  # attribute by attribute
        a = int(winner[m])
        test, gain, children = built.get((a, m)) or per_attribute[a][m]
        choices.others[m] = Candidate(test, gain, float(score[m]), children.astype(np.int64))


def _choose(results: list, params: SplitParams) -> Candidate | None:
    """The best attribute's candidate (ties: the lower attribute index)."""
    found = [(a, *r) for a, r in enumerate(results) if r is not None]
    if not found:
        return None
    gains = np.array([f[2] for f in found])
    if params.max_arity > 2:
        scores = np.array([selection_score(f[3], f[2], params.selection) for f in found])
    elif params.criterion == "gain_ratio":
        info = np.array([float(entropy_of_counts(f[3].sum(axis=1))) for f in found])
        ratio = np.where(info > 0, gains / np.where(info > 0, info, 1.0), -np.inf)
        eligible = gains >= gains.mean()
        scores = np.where(eligible, ratio, -np.inf)
        if not np.isfinite(scores).any():
            scores = ratio
    else:
        scores = gains
    i = int(np.argmax(scores))
    if not np.isfinite(scores[i]):
        return None
    _, test, gain, children = found[i]
    return Candidate(test, gain, float(scores[i]), children.astype(np.int64))
