"""One declared parameter: :class:`Param`."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..errors import ParameterError
from .constraints import Check, Options, describe

__all__ = ["Param", "LAYERS", "SAVED_LAYERS", "check_values", "saved_defaults"]

LAYERS = ("grow", "split", "bins", "folds", "prune", "weights", "model", "runtime")
"""Who reads a parameter (see :mod:`dasktree.params.declared`)."""

SAVED_LAYERS = ("grow", "split", "bins", "folds", "prune")
"""The layers whose parameters the model keeps (``Model.params``): they say how its tree was learned."""


@dataclass(frozen=True)
class Param:
    """A parameter of a fit, declared once.

    ``constraints`` (None: not validated here, a runtime parameter) are the
    accepted kinds of value (:mod:`dasktree.params.constraints`); ``layer`` is
    who reads it (:data:`LAYERS`); ``group`` the command's option group
    (None: no option); ``help`` the option's one line, ``doc`` the docstring's
    paragraph; ``metavar`` and ``from_text`` (the option's text to a value)
    shape the option; ``layer_value`` turns the validated value into the form
    its layer reads (``postpone``'s text into its rule).
    """

    name: str
    default: Any
    constraints: Sequence | None
    layer: str
    group: str | None = None
    help: str = ""
    doc: str = ""
    metavar: str | None = None
    type_doc: str | None = None
    from_text: Callable[[str], Any] | None = None
    layer_value: Callable[[Any], Any] | None = None

    def __post_init__(self):
        if self.layer not in LAYERS:
            raise ValueError(f"parameter {self.name!r}: layer must be one of {list(LAYERS)}, got {self.layer!r}")

    @property
    def saved(self) -> bool:
        """Whether the model keeps it in ``Model.params``."""
        return self.layer in SAVED_LAYERS

    @property
    def flag(self) -> str | None:
        """The command's option, ``--max-depth`` (None: no option)."""
        return None if self.group is None else "--" + self.name.replace("_", "-")

    @property
    def choices(self) -> tuple | None:
        """The values an :class:`Options` constraint lists (None stays out: the command says "none")."""
        for c in self.constraints or ():
            if isinstance(c, Options):
                return c.values
        return None

    def check(self, value):
        """``value`` in its canonical form, or :class:`ParameterError`: the parameter, what it must be,
        what it got (a :class:`Check`'s own message when it has one)."""
        if self.constraints is None:
            return value
        message = None
        for c in self.constraints:
            if c is None:
                if value is None:
                    return None
            elif isinstance(c, Check):
                try:
                    out = c.check(value)
                except ValueError as e:
                    message = message or str(e)
                else:
                    return value if out is None else out
            elif c.holds(value):
                return value
        raise ParameterError(message or f"{self.name} must be {describe(self.constraints)}, got {value!r}")

    def for_layer(self, value):
        """The validated ``value`` as its layer reads it."""
        return value if self.layer_value is None or value is None else self.layer_value(value)

    def type_text(self) -> str:
        """The docstring's type: ``{"gini", "entropy"}``, ``int or None``..."""
        if self.type_doc is not None:
            return self.type_doc
        parts = []
        for c in self.constraints or ():
            if c is None:
                parts.append("None")
            elif isinstance(c, Options):
                parts.append("{" + ", ".join(_literal(v) for v in c.values) + "}")
            else:
                parts.append({"Interval": "int" if "integer" in c.text() else "float",
                              "Boolean": "bool"}.get(type(c).__name__, "object"))
        return " or ".join(parts) or "object"

    def docstring(self) -> str:
        """The numpydoc entry: ``name : type, default value`` and the indented paragraph."""
        head = f"{self.name} : {self.type_text()}, default {_literal(self.default)}"
        body = textwrap.fill(self.doc, width=88, initial_indent="    ", subsequent_indent="    ")
        return head + ("\n" + body if self.doc else "")


def _literal(value) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def check_values(params: Sequence["Param"], values, rules: Sequence[Callable[[dict], str | None]] = (),
                 whose: str = "") -> dict[str, Any]:
    """Every parameter of ``params`` but the runtime ones checked once (those not in ``values`` take their
    defaults), then ``rules`` (each gives an error's message or None); the first bad one raises
    :class:`~dasktree.errors.ParameterError`, one line naming it. ``whose``: said after an unknown name
    (``" for a regression tree"``). The one validation loop of both tasks' parameters."""
    known = {p.name: p for p in params if p.layer != "runtime"}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ParameterError(f"unknown parameter {unknown[0]!r}{whose}; known are {sorted(known)}")
    out = {name: p.check(values.get(name, p.default)) for name, p in known.items()}
    for rule in rules:
        message = rule(out)
        if message:
            raise ParameterError(message)
    return out


def saved_defaults(params: Sequence["Param"], saved_only: bool = True) -> dict[str, Any]:
    """``{name: default}`` of the parameters of ``params`` a model keeps (every checked one with
    ``saved_only=False``)."""
    return {p.name: p.default for p in params if p.layer != "runtime" and (p.saved or not saved_only)}
