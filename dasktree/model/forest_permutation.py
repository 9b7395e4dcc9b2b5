"""Permutation importances on a forest's out-of-bag rows: scikit-learn's ``permutation_importance``
semantics with the out-of-bag estimate as the score (Breiman's importances of random forests).

The score is the forest's out-of-bag one (``oob_score_``): each row predicted by the members whose
bag left it out, the accuracy of those predictions (classification) or their R^2 (regression), over
the rows some member left out and that have a target. A feature's importance in repeat ``r`` is the
score lost when that feature's values are shuffled among those rows (each row keeps its own bags,
drawn from its content: the members that score it are the same); ``importances_mean`` and
``importances_std`` over the ``n_repeats`` repeats, as scikit-learn's.

Deterministic whatever the partitioning or the order of the rows: the rows are put in one canonical
order first (by their bag hash, then their encoded values and target: rows equal in all of them are
interchangeable), and repeat ``r`` shuffles them by the permutation
``numpy.random.default_rng([random_state, r])`` draws, the same for every feature (as scikit-learn
shuffles every column by the same sequence of permutations). Pure numpy over the routing kernel:
no Dask; the rows are in memory (the cost is ``n_features * n_repeats`` predictions of the rows by
every member).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..binning.encode import class_codes, encode_features
from ..errors import InputError, ParameterError
from ..io.bagging import BagSpec, multiplicities
from .forest_model import ForestModel

__all__ = ["oob_permutation_importance", "BLOCK_ROWS"]

BLOCK_ROWS = 1 << 14
"""Rows walked through every member at a time: (members, rows, outputs) doubles in memory."""


def _targets(forest: ForestModel, table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(each row's target: class code or number, which rows have one)."""
    column = table.column(forest.target)
    if forest.task.predicts_classes:
        y = class_codes(column, forest.spec.classes)
        return y, y >= 0
    valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    try:
        y = np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"target {forest.target!r} is {column.type}, not numeric") from None
    return y, valid & np.isfinite(y)


def _oob_outputs(forest: ForestModel, codes: np.ndarray, left_out: np.ndarray, n_out: np.ndarray) -> np.ndarray:
    """Each row's mean output (class probabilities, or (rows, 1) values) over its out-of-bag members,
    their outputs added in member order (each row's sum the same whatever the blocks)."""
    out = None
    for lo in range(0, codes.shape[1], BLOCK_ROWS):
        member = forest.member_proba_codes(np.ascontiguousarray(codes[:, lo:lo + BLOCK_ROWS]))  # (members, rows, k)
        if out is None:
            out = np.zeros((codes.shape[1], member.shape[2]))
        block = out[lo:lo + BLOCK_ROWS]
        for m in range(member.shape[0]):
            block += left_out[m, lo:lo + BLOCK_ROWS, None] * member[m]
    return out / n_out[:, None]


def _score(forest: ForestModel, outputs: np.ndarray, y: np.ndarray) -> float:
    """Accuracy of the outputs' classes, or R^2 of their values."""
    if forest.task.predicts_classes:
        return float(np.mean(np.argmax(outputs, axis=1) == y))
    error = y - outputs[:, 0]
    spread = y - y.mean()
    total = float(spread @ spread)
    return 1.0 - float(error @ error) / total if total > 0 else float("nan")


def oob_permutation_importance(forest: ForestModel, table: pa.Table, bag: BagSpec, *, n_repeats: int = 5,
                               random_state: int = 0) -> dict:
    """The permutation importances of ``forest``'s features on the out-of-bag rows of ``table``.

    Parameters
    ----------
    forest : ForestModel
    table : pyarrow.Table
        The rows the forest was fit on: its features and target (and ``bag.key``'s column).
    bag : BagSpec
        The forest's bags, hashing the columns the fit hashed (:meth:`BagSpec.hashing`).
    n_repeats : int
        Shuffles per feature.
    random_state : int
        Seed of the shuffles.

    Returns
    -------
    dict
        ``importances`` (n_features, n_repeats), ``importances_mean``, ``importances_std`` (n_features,),
        as lists; ``baseline`` (the out-of-bag score), ``scoring`` ("accuracy" or "r2"), ``rows`` (the
        out-of-bag rows scored), ``n_repeats``, ``random_state``.
    """
    if not isinstance(n_repeats, (int, np.integer)) or isinstance(n_repeats, bool) or n_repeats < 1:
        raise ParameterError(f"n_repeats must be an int >= 1, got {n_repeats!r}")
    if not isinstance(random_state, (int, np.integer)) or isinstance(random_state, bool) or random_state < 0:
        raise ParameterError(f"random_state must be an int >= 0, got {random_state!r}")
    if not bag.bootstrap:
        raise ParameterError("the forest was grown without bootstrap: no row is out of a member's bag")
    codes = encode_features(table, forest.spec)
    hashes = bag.row_hashes(table)
    left_out = multiplicities(hashes, bag.seed, bag.n_members, bag.mean) == 0  # (members, rows)
    y, labelled = _targets(forest, table)
    n_out = left_out.sum(axis=0)
    scored = labelled & (n_out > 0)
    codes, left_out, y, n_out, hashes = (codes[:, scored], left_out[:, scored], y[scored], n_out[scored],
                                         hashes[scored])
    order = np.lexsort((y, *codes[::-1], hashes))  # the canonical order: hash first, then values, target
    codes, y, n_out = np.ascontiguousarray(codes[:, order]), y[order], n_out[order]
    left_out = np.ascontiguousarray(left_out[:, order]).astype(np.float64)
    rows = int(y.size)
    if rows == 0:
        raise InputError("no row is out of a member's bag: no out-of-bag score to permute")
    baseline = _score(forest, _oob_outputs(forest, codes, left_out, n_out), y)
    permutations = [np.random.default_rng([int(random_state), r]).permutation(rows) for r in range(n_repeats)]
    importances = np.zeros((codes.shape[0], n_repeats))
    for j in range(codes.shape[0]):
        shuffled = codes.copy()
        for r, p in enumerate(permutations):
            shuffled[j] = codes[j][p]
            importances[j, r] = baseline - _score(forest, _oob_outputs(forest, shuffled, left_out, n_out), y)
    return {"scoring": "accuracy" if forest.task.predicts_classes else "r2", "baseline": baseline, "rows": rows,
            "n_repeats": int(n_repeats), "random_state": int(random_state),
            "importances_mean": importances.mean(axis=1).tolist(), "importances_std": importances.std(axis=1).tolist(),
            "importances": importances.tolist()}
