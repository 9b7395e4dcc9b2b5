"""A forest of trees as one model: its members' :class:`~dasktree.model.model.TreeModel` s in one file.

The model file is versioned JSON (the tree's ``format``, ``"kind": "forest"``), with the bins and
classes once and each member's flat tree (training counts: each row its multiplicity in the
member's bag). Prediction averages the members' leaf class probabilities, as scikit-learn's
forests do (``predict_proba``), or for a regression forest (``task``, :mod:`dasktree.model.task`)
the members' leaf means (``predict_values``); all members are walked in one compiled call over one routing plan
of all of them (:func:`forest_routing`), a block of rows at a time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from ..binning.spec import BinSpec
from ..errors import DataError
from ..io.outputs import atomic_write_text, read_json_file
from .model import FORMAT, Model, TreeModel
from .task import CLASSIFICATION, Task, task_named

if TYPE_CHECKING:  # prediction's imports are made there: reading and showing a forest loads neither
    import pyarrow as pa

    from ..kernels.plans import RoutingPlan

__all__ = ["ForestModel", "FOREST_VERSION", "forest_routing", "load_forest"]

FOREST_VERSION = 1
KIND = "forest"
BLOCK_ROWS = 1 << 16  # rows walked through every member at a time: (members, rows) entries in memory


def forest_routing(members: list[TreeModel], widths: np.ndarray) -> tuple[RoutingPlan, np.ndarray]:
    """One routing plan of every member (root ``m``: member ``m``'s first entry) and each member's
    first entry: entry ``first[m] + i`` is member ``m``'s node ``i``."""
    from ..kernels.plans import RoutingPlan  # here: showing a forest file loads no compiled kernel

    plans = [m.routing_plan(widths) for m in members]
    sizes = np.asarray([p.entry_attribute.size for p in plans], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    table_first = np.concatenate([[0], np.cumsum([p.table.size for p in plans])[:-1]]).astype(np.int64)
    plan = RoutingPlan(
        root_entry=first.copy(),
        entry_attribute=np.concatenate([p.entry_attribute for p in plans]),
        entry_offset=np.concatenate([p.entry_offset + t for p, t in zip(plans, table_first)]),
        slot_of_entry=np.concatenate([p.slot_of_entry for p in plans]),
        table=np.concatenate([p.table.astype(np.int64) + f for p, f in zip(plans, first)]).astype(np.int32),
        depth=max((p.depth for p in plans), default=0),
        n_slots=int(sizes.sum()),
    )
    return plan, first


@dataclass
class ForestModel:
    """A fitted forest: what :func:`dasktree.fit_forest` returns and :func:`load_forest` reads."""

    spec: BinSpec
    target: str
    members: list[TreeModel]
    params: dict = field(default_factory=dict)
    report: dict = field(default_factory=dict)
    run: dict = field(default_factory=dict)  # timings of the fit that made it; not saved
    task: Task = CLASSIFICATION  # what its members predict (dasktree.model.task)

    def __post_init__(self):
        """Under ``monotonic_cst`` (in ``params``), every member's constraints per attribute, as a single tree's
        (:meth:`dasktree.model.model.Model.__post_init__`): each member predicts its nodes' values clipped to
        their bounds, so the forest's average of monotone members is monotone, in Python and in the exports."""
        value = self.params.get("monotonic_cst") if isinstance(self.params, dict) else None
        if value is None:
            return
        from ..split.api import monotonic_of

        cst = monotonic_of(value, self.spec)
        for member in self.members:
            member.monotonic = cst

    @property
    def classes(self) -> tuple:
        return self.spec.classes

    @property
    def features(self) -> list[str]:
        return [f.name for f in self.spec.features]

    @property
    def n_members(self) -> int:
        return len(self.members)

    # ---------------------------------------------------------------- predict
    def _routing(self):
        cached = getattr(self, "_routing_cache", None)
        if cached is None:
            plan, first = forest_routing(self.members, self.spec.widths)
            values = (np.concatenate([self._node_values(m) for m in self.members]) if self.members
                      else np.zeros((0, 1)))
            cached = self._routing_cache = (plan, first, values)
        return cached

    def _node_values(self, member: TreeModel) -> np.ndarray:
        """A member's nodes' predictions as (nodes, k): class probabilities, or (nodes, 1) means."""
        values = np.asarray(self.task.node_values(self, member), dtype=np.float64)
        return values.reshape(values.shape[0], -1)

    def member_leaves_codes(self, codes: np.ndarray) -> np.ndarray:
        """The node each row reaches in each member, from encoded rows: (n_members, n_rows) int64."""
        from ..kernels.histogram import route

        plan, first, _ = self._routing()
        return route(codes, plan) - first[:, None]

    def member_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        """Each member's class probabilities of each encoded row: (n_members, n_rows, n_classes)."""
        from ..kernels.histogram import route

        plan, _, values = self._routing()
        return values[route(codes, plan)]

    def predict_proba_codes(self, codes: np.ndarray) -> np.ndarray:
        """The members' mean class probabilities of encoded rows, a block of rows at a time."""
        from ..kernels.histogram import route

        plan, _, values = self._routing()
        out = np.empty((codes.shape[1], values.shape[1]), dtype=np.float64)  # a regression forest's: 1 column
        for lo in range(0, codes.shape[1], BLOCK_ROWS):
            entries = route(np.ascontiguousarray(codes[:, lo:lo + BLOCK_ROWS]), plan)
            out[lo:lo + BLOCK_ROWS] = values[entries].mean(axis=0)
        return out

    def predict_proba_table(self, table: pa.Table) -> np.ndarray:
        from ..binning.encode import encode_features

        return self.predict_proba_codes(encode_features(table, self.spec))

    def predict_values(self, table: pa.Table) -> np.ndarray:
        """A regression forest's predictions: the members' mean leaf mean of each row (n_rows,)."""
        from ..binning.encode import encode_features

        return self.predict_proba_codes(encode_features(table, self.spec))[:, 0]

    def predict_codes(self, table: pa.Table) -> np.ndarray:
        return np.argmax(self.predict_proba_table(table), axis=1)

    def member_model(self, m: int) -> Model:
        """Member ``m`` as a single tree's :class:`~dasktree.model.model.Model` (the forest's bins, target,
        task and parameters): what the tree's exports, text and picture take."""
        if not 0 <= m < self.n_members:
            raise IndexError(f"member {m} of a forest of {self.n_members} trees (0 to {self.n_members - 1})")
        return Model(spec=self.spec, target=self.target, tree=self.members[m], params=self.params, task=self.task)

    # ---------------------------------------------------------------- evaluate
    def evaluate_part(self, table: pa.Table, target: str, where: str, weight: str | None = None):
        """One part's mergeable statistic of an evaluation and its rows without a target: a regression
        forest's its task's (error sums of ``predict_values``); a classification forest's the part's rows
        grouped by their predicted probabilities (:func:`~dasktree.model.metrics.proba_class_counts`)."""
        if not self.task.predicts_classes:
            return self.task.evaluate_part(self, table, target, where, weight)
        from .metrics import labelled_rows, proba_class_counts

        codes, keep, w = labelled_rows(self, table, target, where, weight)
        import pyarrow as pa

        labelled = table.filter(pa.array(keep)) if not keep.all() else table
        groups = proba_class_counts(self.predict_proba_table(labelled), codes[keep], len(self.classes),
                                    None if w is None else w[keep])
        return groups, int((~keep).sum())

    def evaluate_merge(self, results: list, weighted: bool) -> dict:
        """The metrics of the parts' statistics (:meth:`evaluate_part`), as a tree's task reports them;
        the same whatever the parts (equal probabilities' counts are added, groups sorted)."""
        if not self.task.predicts_classes:
            return self.task.evaluate_merge(self, results, weighted)
        from .metrics import class_report, merge_proba_counts

        proba, counts = merge_proba_counts([groups for groups, _ in results], len(self.classes), weighted)
        return class_report(counts, proba, np.argmax(proba, axis=1), self.classes,
                            sum(skipped for _, skipped in results))

    # ---------------------------------------------------------------- importances
    def feature_importances(self) -> np.ndarray:
        """scikit-learn's impurity importances: each member's total weighted impurity decrease per
        feature normalised to sum 1 (its task's, as a single tree's), averaged over the members
        (those with a split), normalised again."""
        per_member = []
        for tree in self.members:
            out = self.task.feature_importances(SimpleNamespace(tree=tree, spec=self.spec, params=self.params))
            if out.sum() > 0:
                per_member.append(out)
        if not per_member:
            return np.zeros(self.spec.n_features)
        mean = np.mean(per_member, axis=0)
        return mean / mean.sum()

    # ---------------------------------------------------------------- JSON
    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "kind": KIND,
            "version": FOREST_VERSION,
            "target": self.target,
            "classes": [v.item() if isinstance(v, np.generic) else v for v in self.classes],
            "bins": self.spec.to_json()["features"],
            "params": self.params,
            **self.task.file_fields(self),
            "members": [m.to_json() for m in self.members],
            "report": self.report,
        }

    @classmethod
    def from_json(cls, d: dict, where: str = "model") -> "ForestModel":
        from .check import check_model_parts

        if not isinstance(d, dict) or d.get("format") != FORMAT or d.get("kind") != KIND:
            raise DataError(f"{where}: not a dasktree forest (no \"format\": \"{FORMAT}\", \"kind\": \"{KIND}\")")
        version = d.get("version")
        if version != FOREST_VERSION:
            raise DataError(f"{where}: forest format version {version!r}; this dasktree reads [{FOREST_VERSION}]")
        try:
            spec = BinSpec.from_json({"classes": d["classes"], "features": d["bins"], "target": d.get("target_scale")})
            model = cls(spec=spec, target=d["target"], members=[TreeModel.from_json(t) for t in d["members"]],
                        params=d.get("params", {}), report=d.get("report", {}),
                        task=task_named(d.get("task", CLASSIFICATION.name)))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
            raise DataError(f"{where}: malformed model: {type(exc).__name__}: {exc}") from None
        if not model.members:
            raise DataError(f"{where}: malformed model: a forest of no members")
        check_model_parts(model.spec, {f"member {i}": t for i, t in enumerate(model.members)}, where)
        if not isinstance(model.target, str) or not isinstance(model.params, dict) \
                or not isinstance(model.report, dict):
            raise DataError(f"{where}: malformed model: its target, params or report is of the wrong type")
        return model

    def dumps(self, indent: int | None = None) -> str:
        compact = {"separators": (",", ":")} if indent is None else {"indent": indent}
        return json.dumps(self.to_json(), sort_keys=True, allow_nan=False, **compact)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model as JSON to a temporary name, then rename: never half-written."""
        atomic_write_text(path, self.dumps())


def load_forest(path: str | os.PathLike) -> ForestModel:
    """Read a forest saved by :meth:`ForestModel.save` (JSON; runs no code)."""
    return ForestModel.from_json(read_json_file(path, "model"), where=os.fspath(path))
