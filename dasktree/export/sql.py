"""The tree as SQL: one ``CASE`` expression per output, over the model's columns by name.

Outputs are dasktree's prediction columns (:func:`dasktree.model.predict.prediction_columns`):
``prediction`` (the class label) and ``proba_<class>`` per class, as ``dasktree predict`` writes
them; for a regression tree ``prediction`` alone, the leaf's value as a double literal that
reads back as the very double dasktree predicts. Each internal node is one ``CASE`` whose
``WHEN`` arms are its children's conditions (:mod:`dasktree.export.walk`), the child that takes missing values first (``col IS NULL OR ...``,
and NaN where the dialect has it) unless it is the last arm; the last child is the ``ELSE``. A
numeric arm is ``lo < col AND col <= hi`` with the bin edges written as shortest round-trip
doubles (``repr``), so a value at a threshold goes where dasktree sends it; a nominal arm is
``col IN ('a', 'b')``, and values outside the model's categories fall to the child dasktree
sends them to (the ``ELSE``, or the missing child's arm).

Dialects differ only where they must: NaN (DuckDB: ``isnan``; PostgreSQL: ``= 'NaN'``; SQLite
stores NaN as NULL; ANSI assumes NULL only) and the name of the double type. SQLite's parser
overflows on about 25 nested ``CASE``, so its default shape is *flat*: one ``WHEN`` per leaf whose
condition is its path's branch conditions, each written alone (the missing child's with
``IS NULL OR``, the others rejecting NaN where they reach +inf; the child of unseen categories
``NOT IN`` its siblings' categories).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from ..errors import InputError, ParameterError
from ..io.schema import NUMERIC
from ..model.model import Model, TreeModel
from .sql_types import column_types, literal_writer
from .walk import Branch, branches, check_tree, describe, label_kind, leaf_outputs, leaf_values, regression

__all__ = ["DIALECTS", "Dialect", "sql_expressions", "sql_select", "quote_identifier"]


@dataclass(frozen=True)
class Dialect:
    name: str
    double: str  # the type a probability is cast to
    nan: str | None  # format of a NaN test of column {c}, or None when NaN is NULL

    def missing(self, column: str, numeric: bool) -> str:
        if numeric and self.nan is not None:
            return f"{column} IS NULL OR {self.nan.format(c=column)}"
        return f"{column} IS NULL"


DIALECTS = {
    "duckdb": Dialect("duckdb", "DOUBLE", "isnan({c})"),
    "postgres": Dialect("postgres", "DOUBLE PRECISION", "{c} = CAST('NaN' AS DOUBLE PRECISION)"),
    "sqlite": Dialect("sqlite", "REAL", None),
    "ansi": Dialect("ansi", "DOUBLE PRECISION", None),
}


SHAPES = ("nested", "flat")


def _dialect(name: str) -> Dialect:
    if name not in DIALECTS:
        raise ParameterError(f"dialect must be one of {sorted(DIALECTS)}, got {name!r}")
    return DIALECTS[name]


def quote_identifier(name: str) -> str:
    """A name as a double-quoted SQL identifier (every dialect here reads them)."""
    if "\x00" in name:
        raise InputError(f"cannot write column name {name!r} in SQL: it holds a NUL character")
    return '"' + name.replace('"', '""') + '"'


def _string(value: str) -> str:
    if "\x00" in value:
        raise InputError(f"cannot write category {value!r} in SQL: it holds a NUL character")
    return "'" + value.replace("'", "''") + "'"


def _double(x: float, dialect: Dialect | None = None) -> str:
    """A double as a literal the dialect reads back as the same double: shortest round-trip
    digits with an exponent (DuckDB reads a literal with an exponent as DOUBLE, not DECIMAL).
    SQLite's reader is off by an ulp for some values near the ends of the range (1e-297): for the
    sqlite dialect each literal is read back by the stdlib's SQLite and, when it differs, the
    digits of a neighbouring double that SQLite reads as ``x`` are written instead."""
    x = float(x)
    if not math.isfinite(x):
        raise InputError(f"cannot write {x} as an SQL number")
    text = _exp(x)
    if dialect is None or dialect.name != "sqlite" or _sqlite_reads(text) == x:
        return text
    for k in range(1, 9):
        for y in (_step(x, k, math.inf), _step(x, k, -math.inf)):
            if _sqlite_reads(_exp(y)) == x:
                return _exp(y)
    raise InputError(f"SQLite does not read any literal near {x!r} back as that number; "
                     "use another dialect")


def _exp(x: float) -> str:
    text = repr(x)
    return text if "e" in text else f"{text}e0"


def _step(x: float, k: int, toward: float) -> float:
    for _ in range(k):
        x = math.nextafter(x, toward)
    return x


@functools.lru_cache(maxsize=None)
def _sqlite() -> Any:
    import sqlite3

    return sqlite3.connect(":memory:", check_same_thread=False)


def _sqlite_reads(text: str) -> float:
    return float(_sqlite().execute(f"SELECT {text}").fetchone()[0])


def _label(value: Any, kind: str, dialect: Dialect) -> str:
    if kind == "string":
        return _string(value)
    if kind == "boolean":
        return "TRUE" if value else "FALSE"
    if kind == "integer":
        return str(int(value))
    return _double(value, dialect)


def _arm(branch: Branch, column: str, numeric: bool, dialect: Dialect, with_missing: bool,
         literal: Callable[[float], str], nan: bool) -> str:
    parts = []
    if with_missing:
        parts.append(dialect.missing(column, nan))
    if numeric:
        for lo, hi in branch.intervals:
            bounds = ([f"{column} > {literal(lo)}"] if lo > -math.inf else []) + \
                     ([f"{column} <= {literal(hi)}"] if hi < math.inf else [])
            parts.append(" AND ".join(bounds) if bounds else f"{column} IS NOT NULL")
    elif branch.categories:
        parts.append(f"{column} IN ({', '.join(_string(c) for c in branch.categories)})")
    if not parts:
        return "FALSE"
    if len(parts) == 1:
        return parts[0]
    return " OR ".join(f"({p})" if " AND " in p else p for p in parts)


def _order(arms: list[Branch], numeric: bool) -> tuple[list[Branch], Branch]:
    """``WHEN`` arms in order and the ``ELSE`` child. Nominal: the child of values outside the
    categories is the ELSE. Numeric: the last interval's child. The missing child comes first
    with ``IS NULL OR`` unless it is the ELSE: a NULL (and NaN, which a bounded-above arm rejects)
    then passes every arm."""
    arms = [b for b in arms if not b.empty]
    if numeric:
        last = max(arms, key=lambda b: b.intervals[-1][1] if b.intervals else -math.inf)
    else:
        last = next(b for b in arms if b.rest)
    rest = [b for b in arms if b is not last]
    rest.sort(key=lambda b: not b.missing)
    return rest, last


class _Writer:
    def __init__(self, model: Model, tree: TreeModel, dialect: Dialect, indent: str, types: dict):
        self.model, self.tree, self.dialect, self.indent = model, tree, dialect, indent
        self.columns = [quote_identifier(f.name) for f in model.spec.features]
        self.kinds = [f.kind for f in model.spec.features]
        number = functools.partial(_double, dialect=dialect)
        self.literals = [literal_writer(f.name, types.get(f.name), dialect.name, number) if f.kind == NUMERIC
                         else number for f in model.spec.features]
        self.nan = [f.kind == NUMERIC and literal is number for f, literal in zip(model.spec.features, self.literals)]  # dates hold no NaN

    def expression(self, leaf: Callable[[int], str]) -> str:
        return self._node(0, leaf, 1)

    def _node(self, i: int, leaf, depth: int) -> str:
        test = self.tree.tests[i]
        if test is None:
            return leaf(i)
        numeric = self.kinds[test.attribute] == NUMERIC
        column = self.columns[test.attribute]
        arms, last = _order(branches(test, self.tree.children[i], self.model.spec.features[test.attribute]), numeric)
        if not arms:  # every value, missing or not, goes to one child
            return self._node(last.child, leaf, depth)
        pad = "\n" + self.indent * depth
        out = ["CASE"]
        for b in arms:
            cond = _arm(b, column, numeric, self.dialect, b.missing, self.literals[test.attribute],
                        self.nan[test.attribute])
            out.append(f"{pad}WHEN {cond} THEN {self._node(b.child, leaf, depth + 1)}")
        out.append(f"{pad}ELSE {self._node(last.child, leaf, depth + 1)}")
        out.append(f"{pad[:-len(self.indent)] if self.indent else pad}END")
        return "".join(out)

    # ------------------------------------------------------------ flat: one WHEN per leaf
    def paths(self) -> list[tuple[int, str]]:
        """Each reachable leaf and the conjunction of the conditions on its path (root first)."""
        out: list[tuple[int, str]] = []
        stack: list[tuple[int, tuple[str, ...]]] = [(0, ())]
        while stack:
            i, conds = stack.pop()
            test = self.tree.tests[i]
            if test is None:
                out.append((i, " AND ".join(conds) or "TRUE"))
                continue
            arms = [b for b in branches(test, self.tree.children[i], self.model.spec.features[test.attribute])
                    if not b.empty]
            for b in reversed(arms):  # popped in child order
                stack.append((b.child, conds + (self._edge(test.attribute, b, arms),)))
        return out

    def _edge(self, a: int, b: Branch, arms: list[Branch]) -> str:
        """The condition of one branch alone (no sibling tested before it)."""
        column, literal = self.columns[a], self.literals[a]
        nan = self.nan[a] and self.dialect.nan is not None
        if self.kinds[a] == NUMERIC:
            pieces = []
            for lo, hi in b.intervals:
                bounds = ([f"{column} > {literal(lo)}"] if lo > -math.inf else []) + \
                         ([f"{column} <= {literal(hi)}"] if hi < math.inf else [])
                pieces.append(" AND ".join(bounds) or f"{column} IS NOT NULL")
            part = " OR ".join(f"({p})" for p in pieces) if len(pieces) > 1 else (pieces[0] if pieces else "")
            if b.missing:
                return f"({self.dialect.missing(column, self.nan[a])}{' OR ' + part if part else ''})"
            if nan and any(hi == math.inf for _, hi in b.intervals):  # NaN is above every number there
                return f"(NOT {self.dialect.nan.format(c=column)} AND ({part}))"
            return f"({part})"
        if b.rest:
            others = [c for o in arms if not o.rest for c in o.categories]
            part = f"{column} NOT IN ({', '.join(_string(c) for c in others)})" if others else f"{column} IS NOT NULL"
        else:
            part = f"{column} IN ({', '.join(_string(c) for c in b.categories)})" if b.categories else ""
        if b.missing:
            return f"({column} IS NULL{' OR ' + part if part else ''})"
        return f"({part})"


def sql_expressions(model: Model, *, dialect: str = "ansi", indent: str = "  ",
                    types: pa.Schema | Mapping[str, pa.DataType] | None = None,
                    shape: str | None = None) -> dict[str, str]:
    """One SQL expression per output column, by name: ``prediction``, then ``proba_<class>`` (a
    regression model: ``prediction``, its value as a double).

    Parameters
    ----------
    model : Model
    dialect : {"ansi", "duckdb", "postgres", "sqlite"}
        Where NaN and the double type's name differ (see the module).
    indent : str
        Indentation of nested ``CASE`` arms ("" for one line per output).
    types : pyarrow.Schema or mapping of column name to Arrow type, optional
        The columns' types where the SQL runs: date and timestamp columns are then compared with
        ``DATE`` / ``TIMESTAMP`` literals (:mod:`dasktree.export.sql_types`); without, every
        numeric column is compared as a number (dates as days since the epoch, timestamps as
        their unit since the epoch).
    shape : {"nested", "flat"}, optional
        nested: a ``CASE`` per node, as deep as the tree (a row is tested along its path only);
        flat: one ``WHEN`` per leaf, its path's conditions joined by ``AND`` (no nesting: SQLite's
        parser overflows on about 25 nested ``CASE``; a row may be tested against every leaf).
        Default: flat for sqlite, else nested.
    """
    d = _dialect(dialect)
    tree = check_tree(model)
    shape = shape or ("flat" if d.name == "sqlite" else "nested")
    if shape not in SHAPES:
        raise ParameterError(f"shape must be one of {list(SHAPES)}, got {shape!r}")
    writer = _Writer(model, tree, d, indent, column_types(types))
    if shape == "flat":
        paths = writer.paths()
        pad = "\n" + indent

        def expression(leaf):
            if len(paths) == 1:
                return leaf(paths[0][0])
            whens = "".join(f"{pad}WHEN {cond} THEN {leaf(i)}" for i, cond in paths[:-1])
            return f"CASE{whens}{pad}ELSE {leaf(paths[-1][0])}\nEND"
    else:
        expression = writer.expression
    if regression(model):
        values = leaf_values(model, tree)
        return {"prediction": f"CAST({expression(lambda i: _double(values[i], d))} AS {d.double})"}
    kind = label_kind(model.classes)
    outputs = leaf_outputs(tree)
    classes = list(model.classes)
    out = {"prediction": expression(lambda i: _label(classes[int(outputs.label[i])], kind, d))}
    for k, c in enumerate(classes):
        expr = expression(lambda i, k=k: _double(outputs.proba[i, k], d))
        out[f"proba_{c}"] = f"CAST({expr} AS {d.double})"
    return out


def sql_select(model: Model, *, table: str = "data", dialect: str = "ansi", keep: Sequence[str] | None = None,
               indent: str = "  ", types: pa.Schema | Mapping[str, pa.DataType] | None = None,
               shape: str | None = None) -> str:
    """A ``SELECT`` of the outputs from ``table``, with a header comment naming the model.

    ``keep``: input columns to select beside the outputs (default: all, ``*``; ``()``: none).
    ``table`` is written as given (it may be ``schema.table`` or ``read_parquet('f.parquet')``).
    ``types``, ``shape``: as for :func:`sql_expressions`.
    """
    meta = describe(model)
    what = "(regression: each leaf's value)" if regression(model) else f"with classes {meta['classes']!r}"
    head = [f"-- dasktree {meta['dasktree_version']} model (format version {meta['model_format_version']}), "
            f"dialect {dialect}: predicts {model.target!r} {what}",
            "-- features (name: kind): " + ", ".join(f"{f['name']}: {f['kind']}" for f in meta["features"]),
            "-- null (and NaN where the dialect has it) is missing; categories outside the model's go where "
            "dasktree sends them"]
    selected = ["*"] if keep is None else [quote_identifier(c) for c in keep]
    selected += [f"{expr} AS {quote_identifier(name)}"
                 for name, expr in sql_expressions(model, dialect=dialect, indent=indent, types=types, shape=shape).items()]
    body = ",\n".join(selected)
    head = ["".join(" " if ch in "\r\n\x0b\x0c\x85\u2028\u2029" else ch for ch in line) for line in head]  # names stay in the comment
    return "\n".join(head) + f"\nSELECT\n{body}\nFROM {table}\n"
