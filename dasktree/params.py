"""The scikit-learn parameter contract shared by the estimators: ``__init__`` stores, these read."""

from __future__ import annotations

import inspect

from .errors import ParameterError

__all__ = ["ParamsMixin"]


class ParamsMixin:
    """``get_params`` / ``set_params`` / ``__repr__`` from the ``__init__`` signature.

    ``_RUNTIME`` names the parameters that say where to run, not what to learn.
    """

    _RUNTIME: tuple[str, ...] = ()
    _ALWAYS_SHOWN: tuple[str, ...] = ()

    @classmethod
    def _param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ParameterError(f"invalid parameter {name!r} for {type(self).__name__}; valid are {valid}")
            setattr(self, name, value)
        return self

    def _learning_params(self) -> dict:
        return {k: v for k, v in self.get_params().items() if k not in self._RUNTIME}

    def __repr__(self) -> str:
        defaults = inspect.signature(type(self).__init__).parameters
        changed = {k: v for k, v in self.get_params().items()
                   if k in self._ALWAYS_SHOWN or v != defaults[k].default}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"
