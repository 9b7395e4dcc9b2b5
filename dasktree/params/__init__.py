"""The parameters of a fit, declared once (:data:`~dasktree.params.declared.PARAMS`), and what
comes from the declaration.

- :func:`validate`: every parameter checked once per fit, then the rules between
  them; the message names the parameter, what it must be and what it got. It
  returns :class:`Settings`: the values in canonical form and the frozen
  :class:`~dasktree.levels.grow.GrowParams` (with its
  :class:`~dasktree.split.search.SplitParams`) the grow loop and the search read.
- :func:`install_estimator_params`: ``DaskTreeClassifier.__init__`` (keyword-only,
  a real signature, which scikit-learn's ``get_params`` reads) and the
  Parameters section of its docstring.
- :func:`dasktree.cli.parser.add_learning`: the command's options and ``--help``.
- :func:`defaults`: the defaults the model report marks changed parameters against.

To add a parameter: declare it in :mod:`dasktree.params.declared` (and, for the
layers grow or split, add the field it names to ``GrowParams`` or ``SplitParams``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import ParameterError
from ..levels.grow import GrowParams
from ..split.search import SplitParams
from . import declared
from .constraints import Boolean, Check, Instance, Interval, Options, describe
from .param import LAYERS, SAVED_LAYERS, Param, check_values, saved_defaults

__all__ = ["Param", "Settings", "validate", "declared_params", "defaults", "task_defaults", "install_estimator_params",
           "parameters_doc", "Interval", "Options", "Boolean", "Instance", "Check", "describe", "LAYERS",
           "SAVED_LAYERS"]


def declared_params() -> tuple[Param, ...]:
    """Every declared parameter, in the order of the estimator's signature."""
    return declared.PARAMS


def _checked() -> dict[str, Param]:
    return {p.name: p for p in declared.PARAMS if p.layer != "runtime"}


def defaults(saved_only: bool = True) -> dict[str, Any]:
    """``{name: default}`` of the parameters the model keeps (all validated ones with ``saved_only=False``)."""
    return saved_defaults(declared.PARAMS, saved_only)


def task_defaults(task) -> dict[str, Any]:
    """The defaults of the parameters a model of ``task`` (:mod:`dasktree.model.task`) keeps: what its
    report marks changed parameters against: its own declared ones (``task.params``), else those
    declared here."""
    return saved_defaults(task.params or declared.PARAMS)


@dataclass(frozen=True)
class Settings:
    """A fit's validated parameters: ``values`` (canonical, every validated parameter, declaration
    order) and ``grow``, what the grow loop and the split search read."""

    values: dict
    grow: GrowParams

    def __getitem__(self, name: str):
        return self.values[name]

    @property
    def saved(self) -> dict:
        """What the model keeps as ``Model.params``: the parameters of the layers that shape the tree."""
        declared_ = _checked()
        return {k: v for k, v in self.values.items() if declared_[k].saved}


def validate(values: Mapping[str, Any]) -> Settings:
    """Check the parameters given (the others take their defaults), then the rules between them.

    Raises :class:`~dasktree.errors.ParameterError` on the first bad value: one line naming it, what
    it must be and what it got."""
    out = check_values(declared.PARAMS, values, declared.RULES)
    return Settings(out, _frozen(out, _checked()))


def _frozen(values: dict, known: dict[str, Param]) -> GrowParams:
    """The grow loop's and the search's frozen parameters, in one step from the validated values."""
    def of(layer: str) -> dict:
        return {name: p.for_layer(values[name]) for name, p in known.items() if p.layer == layer}

    return GrowParams(split=SplitParams(**of("split")), **of("grow"))


def parameters_doc(params: tuple[Param, ...] | None = None) -> str:
    """The numpydoc Parameters section (without its heading) of every declared parameter."""
    return "\n".join(p.docstring() for p in (declared.PARAMS if params is None else params))


def install_estimator_params(cls, template: str, params: tuple[Param, ...] | None = None) -> None:
    """Give ``cls`` an ``__init__`` taking every declared parameter (keyword-only, with its default)
    that only stores them, as scikit-learn's estimators do, and the docstring ``template`` with
    ``{parameters}`` replaced by :func:`parameters_doc` (indented for a class docstring)."""
    params = declared.PARAMS if params is None else params
    names = [p.name for p in params]
    source = ("def __init__(self, *, " + ", ".join(f"{n}=_defaults[{n!r}]" for n in names) + "):\n"
              + "".join(f"    self.{n} = {n}\n" for n in names) + ("    pass\n" if not names else ""))
    scope: dict = {"_defaults": {p.name: p.default for p in params}}
    exec(compile(source, f"<{cls.__name__}.__init__ from dasktree.params>", "exec"), scope)  # noqa: S102
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__name__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = "Store the parameters (see the class's Parameters); ``fit`` validates them."
    cls.__init__ = init
    section = "\n".join("    " + line if line else line for line in parameters_doc(params).split("\n"))
    cls.__doc__ = template.replace("{parameters}", section.lstrip())
