"""A forest as SQL: each member's ``CASE`` expressions (:func:`dasktree.export.sql.sql_expressions`),
each class's probability their sum in member order divided by the members (as
:meth:`~dasktree.model.forest_model.ForestModel.predict_proba_codes` takes the mean; SQL adds left
to right), and the label the first class of the highest mean, in an outer ``SELECT``: equal to
``predict_proba`` and ``predict`` on every row (the tree export's dialects, types and shapes).
A regression forest's (its task predicts no classes): ``prediction`` the members' leaf values added
in member order and divided by the members, equal to ``predict_values`` on every row.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pyarrow as pa

from ..model.forest_model import ForestModel
from .sql import _dialect, _label, quote_identifier, sql_expressions
from .walk import describe, label_kind

__all__ = ["forest_sql_select"]


def forest_sql_select(forest: ForestModel, *, table: str = "data", dialect: str = "ansi",
                      keep: Sequence[str] | None = None, indent: str = "  ",
                      types: pa.Schema | Mapping[str, pa.DataType] | None = None, shape: str | None = None) -> str:
    """A ``SELECT`` of ``proba_<class>`` per class and ``prediction`` from ``table``, with a header
    comment naming the forest; ``keep`` (default all, ``*``), ``types`` and ``shape`` as for
    :func:`dasktree.export.sql.sql_select`."""
    d = _dialect(dialect)
    if not forest.task.predicts_classes:
        return _values_select(forest, table, dialect, keep, indent, types, shape)
    classes = list(forest.classes)
    kind = label_kind(forest.classes)
    per_member = [sql_expressions(forest.member_model(m), dialect=dialect, indent=indent, types=types, shape=shape)
                  for m in range(forest.n_members)]
    names = [quote_identifier(f"proba_{c}") for c in classes]
    inner = ["*"] if keep is None else [quote_identifier(c) for c in keep]
    for c, name in zip(classes, names):
        total = "\n + ".join(f"({expressions[f'proba_{c}']})" for expressions in per_member)
        inner.append(f"CAST(({total}) / CAST({forest.n_members} AS {d.double}) AS {d.double}) AS {name}")
    whens = []
    for k in range(len(classes) - 1):  # the first class of the highest mean, as numpy.argmax
        beats = " AND ".join(f"{names[k]} >= {names[j]}" for j in range(k + 1, len(classes)))
        whens.append(f"WHEN {beats} THEN {_label(classes[k], kind, d)}")
    label = f"CASE {' '.join(whens)} ELSE {_label(classes[-1], kind, d)} END"
    meta = describe(forest)
    head = [f"-- dasktree {meta['dasktree_version']} forest of {forest.n_members} trees, dialect {dialect}: "
            f"predicts {forest.target!r} with classes {meta['classes']!r}",
            "-- features (name: kind): " + ", ".join(f"{f['name']}: {f['kind']}" for f in meta["features"])]
    head = ["".join(" " if ch in "\r\n\x0b\x0c\x85\u2028\u2029" else ch for ch in line) for line in head]
    body = ",\n".join(inner)
    return ("\n".join(head) + f"\nSELECT *, {label} AS {quote_identifier('prediction')}\nFROM (\nSELECT\n{body}\n"
            f"FROM {table}\n) AS forest_probabilities\n")


def _values_select(forest: ForestModel, table: str, dialect: str, keep, indent: str, types, shape) -> str:
    """A regression forest's ``SELECT``: ``prediction`` the members' leaf values' mean (summed in member
    order, as :meth:`~dasktree.model.forest_model.ForestModel.predict_values` takes it)."""
    d = _dialect(dialect)
    per_member = [sql_expressions(forest.member_model(m), dialect=dialect, indent=indent, types=types,
                                  shape=shape)["prediction"] for m in range(forest.n_members)]
    total = "\n + ".join(f"({expression})" for expression in per_member)
    columns = ["*"] if keep is None else [quote_identifier(c) for c in keep]
    columns.append(f"CAST(({total}) / CAST({forest.n_members} AS {d.double}) AS {d.double}) "
                   f"AS {quote_identifier('prediction')}")
    meta = describe(forest)
    head = [f"-- dasktree {meta['dasktree_version']} forest of {forest.n_members} trees, dialect {dialect}: "
            f"predicts {forest.target!r} (regression: the members' mean leaf value)",
            "-- features (name: kind): " + ", ".join(f"{f['name']}: {f['kind']}" for f in meta["features"])]
    head = ["".join(" " if ch in "\r\n\x0b\x0c\x85\u2028\u2029" else ch for ch in line) for line in head]
    return "\n".join(head) + "\nSELECT\n" + ",\n".join(columns) + f"\nFROM {table}\n"
