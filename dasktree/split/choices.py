"""The best test of each of a batch of training histograms: every attribute's best, then the best of those.

:func:`best_split` (one histogram), :func:`best_splits` (M stored ones) and
:func:`search_batch` (M differences of stored slices, a forest's trees at its
nodes) give :class:`~dasktree.split.search.Candidate` objects;
:func:`choose_batch` gives the same choices as :class:`Choices` columns, which
the level search writes out without an object per node
(:mod:`dasktree.forest.level_search`). Each attribute's best test is
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
from .criteria import split_information
from .multiway import selection_score
from .node_tests import Test, numeric_test
from .search import (
    ENGINES,
    AttributeLayout,
    Candidate,
    Column,
    SplitParams,
    attribute_candidates,
    gains_of,
    impurity_of,
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
                 engine: str = "auto", active: np.ndarray | None = None) -> Choices:
    """:func:`search_batch`'s choices as :class:`Choices`: the compiled scan's winners as numbers.

    ``active`` (attributes, M) bool, when given, names the attributes searched
    for each histogram (the others count as having no test); without it, all are.
    :func:`dasktree.split.postponed.choose` applies ``params.postpone`` on top of this.
    """
    node_counts = batch.node_counts  # (M, C)
    n = node_counts.sum(axis=1).astype(np.float64)
    parent_impurity = impurity_of(node_counts, params.impurity_name)
    safe_n = np.where(n > 0, n, 1.0)
    if active is None:
        compiled = _compiled_columns(batch, layout, params, parent_impurity, safe_n, engine)
        nominal = {}
        if params.nominal_split != "multiway":  # every nominal attribute's subset search in a few batches
            nominal = nominal_binary_columns(
                {a: batch.columns(int(layout.offsets[a]), int(layout.widths[a]))
                 for a in range(len(layout.kinds)) if layout.kinds[a] != "numeric" and a not in compiled},
                parent_impurity, safe_n, params)
        per_attribute = [
            compiled[a] if a in compiled else nominal[a] if a in nominal
            else attribute_candidates(batch, a, layout, params, parent_impurity, safe_n)
            for a in range(len(layout.kinds))
        ]
    else:
        compiled, per_attribute = _active_columns(batch, layout, params, parent_impurity, safe_n, engine, active)
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
        _gain_ratio_choices(choices, per_attribute, compiled, n)
        return choices
    for m in range(m_total):
        candidate = _choose([column[m] for column in per_attribute], params) if n[m] > 0 else None
        if candidate is not None:
            choices.others[m] = candidate
            choices.attribute[m], choices.gain[m] = candidate.test.attribute, candidate.gain
    return choices


def _compiled_columns(batch: TrainBatch, layout: AttributeLayout, params: SplitParams,
                      parent_impurity: np.ndarray, n: np.ndarray, engine: str,
                      active: np.ndarray | None = None) -> dict[int, "Column"]:
    """Binary threshold tests of the numeric attributes by the compiled scan: {attribute: column}.

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
        return {}
    entropy = params.impurity_name == "entropy"
    log2 = log2_table(float(n.max())) if entropy and len(batch) else np.zeros(1)
    # Exact like the reference for: entropy, the sizes the log2 table holds; gini, sums of
    # squared counts below 2**53 (float sums of integers are exact there); the histograms searched
    # (with ``active``: those with any of its attributes), sorted
    searched = np.arange(len(batch)) if active is None else np.flatnonzero(active[attributes].any(axis=0))
    rows = searched[n[searched] < (log2.size if entropy else 2**26)]
    mask = None if active is None else active[attributes]
    gain, cut, default, children = numeric_binary_numba(
        batch, layout, attributes, rows, parent_impurity, n, entropy, params.min_samples_leaf, log2, mask)
    all_rest = np.setdiff1d(searched, rows)
    columns = {}
    for k, a in enumerate(attributes):
        found: dict[int, tuple] = {}
        rest = all_rest if active is None else all_rest[active[a, all_rest]]
        if rest.size:
            reference = numeric_binary(batch.columns(int(layout.offsets[a]), int(layout.widths[a]), rows=rest),
                                       layout.uppers[a], layout.values[a], a, parent_impurity[rest], n[rest],
                                       params)
            gain[k, rest] = reference.gains
            found = {int(m): reference[i] for i, m in enumerate(rest) if np.isfinite(reference.gains[i])}
        scanned = np.zeros(len(batch), dtype=bool)
        scanned[rows] = True if active is None else active[a, rows]
        columns[a] = Column(gain[k], _compiled_test(a, layout.uppers[a], cut[k], default[k], gain[k],
                                                    children[k], found), (cut[k], default[k], children[k], scanned))
    return columns


def _active_columns(batch: TrainBatch, layout: AttributeLayout, params: SplitParams, parent_impurity: np.ndarray,
                    n: np.ndarray, engine: str, active: np.ndarray) -> tuple[dict[int, Column], list]:
    """The columns of :func:`choose_batch`, each attribute searched only for the histograms ``active`` names."""
    m_total = len(batch)
    compiled = _compiled_columns(batch, layout, params, parent_impurity, n, engine, active)
    per_attribute: list = []
    for a in range(len(layout.kinds)):
        rows = np.flatnonzero(active[a])
        if a in compiled:
            per_attribute.append(compiled[a])
        elif rows.size == 0:
            per_attribute.append(Column(np.full(m_total, -np.inf), None))
        elif rows.size == m_total:
            per_attribute.append(attribute_candidates(batch, a, layout, params, parent_impurity, n))
        else:
            sub = TrainBatch(batch.plus, batch.plus_index[rows], batch.minus, batch.minus_index[rows],
                             batch.node_counts[rows])
            column = attribute_candidates(sub, a, layout, params, parent_impurity[rows], n[rows])
            per_attribute.append(_scattered(column, rows, m_total))
    return compiled, per_attribute


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


def _gain_ratio_choices(choices: Choices, per_attribute: list, compiled: dict, n: np.ndarray) -> None:
    """C4.5's choice (:func:`_choose`'s, bit for bit) for every histogram, building no test it need not.

    The split information of a compiled scan's test comes from its children counts, for all of
    them at once; only the other attributes' tests (nominal, or beyond the scan) are built to be
    measured. The histograms are ranked in a few batches, on the
    same numbers :func:`_choose` ranks (the histograms with as many attributes having a test
    together, each row's mean gain numpy's sum of that contiguous row, as ``np.mean`` of the row alone). A winner from the scan stays numbers, as gini's winners do."""
    gains = np.stack([gains_of(column) for column in per_attribute])  # (A, M)
    finite = np.isfinite(gains)
    info = np.zeros(gains.shape)
    built: dict[tuple[int, int], tuple] = {}
    measured = np.zeros(gains.shape, dtype=bool)
    for a, column in compiled.items():
        _, _, children, scanned = column.scan
        rows = np.flatnonzero(scanned & finite[a])
        info[a, rows] = split_information(children[rows].sum(axis=2))
        measured[a, rows] = True
    for a, column in enumerate(per_attribute):  # nominal subset tests: their children, no test built
        rows = np.flatnonzero(finite[a] & ~measured[a])
        if rows.size and getattr(column, "children", None) is not None:
            info[a, rows] = split_information(column.children(rows).sum(axis=2))
            measured[a, rows] = True
    for a, m in zip(*np.nonzero(finite & ~measured)):
        built[(int(a), int(m))] = result = per_attribute[int(a)][int(m)]
        info[a, m] = float(split_information(result[2].sum(axis=1)))
    ranked = np.flatnonzero((n > 0) & finite.any(axis=0))
    has = finite[:, ranked].T  # (ranked histograms, A)
    count = has.sum(axis=1)
    # each row's attributes with a test first, in attribute order
    order = np.argsort(~has, axis=1, kind="stable")
    winner = np.full(gains.shape[1], -1, dtype=np.int64)
    score = np.full(gains.shape[1], -np.inf)
    for k in np.unique(count).tolist():
        rows = np.flatnonzero(count == k)
        ms, found = ranked[rows], np.ascontiguousarray(order[rows, :k])  # (histograms, k) attributes
        g = np.ascontiguousarray(gains.T[ms[:, None], found])  # each row as _choose's array of gains
        i_m = info.T[ms[:, None], found]
        ratio = np.where(i_m > 0, g / np.where(i_m > 0, i_m, 1.0), -np.inf)
        scores = np.where(g >= g.mean(axis=1)[:, None], ratio, -np.inf)
        none = ~np.isfinite(scores).any(axis=1)
        scores[none] = ratio[none]
        best = np.argmax(scores, axis=1)
        top = scores[np.arange(ms.size), best]
        ok = np.isfinite(top)
        winner[ms[ok]], score[ms[ok]] = found[ok, best[ok]], top[ok]
    for a in np.unique(winner[winner >= 0]).tolist():
        won = np.flatnonzero(winner == a)
        choices.attribute[won], choices.gain[won] = a, gains[a, won]
        if a in compiled:
            cut, default, children, scanned = compiled[a].scan
            numbers = won[scanned[won]]
            choices.cut[numbers], choices.default[numbers] = cut[numbers], default[numbers]
            choices.children[numbers] = children[numbers]
            choices.score[numbers] = score[numbers]
            won = won[~scanned[won]]
        for m in won.tolist():
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
        info = np.array([float(split_information(f[3].sum(axis=1))) for f in found])
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
