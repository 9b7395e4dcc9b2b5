"""dasktree: decision trees learned one level pass at a time over partitioned Parquet or CSV, on Dask.

>>> from dasktree import DaskTreeClassifier
>>> clf = DaskTreeClassifier(max_depth=8).fit("data/*.parquet", target="label")  # doctest: +SKIP
>>> clf.save("model.json")                                                        # doctest: +SKIP
"""

from .kernel_cache import ensure_cache_dir

ensure_cache_dir()  # before numba compiles anything: a writable kernel cache even on a read-only install

import sys as _sys  # noqa: E402
import types as _types  # noqa: E402

from .errors import DaskTreeError, DataError, InputError  # noqa: E402
from .model.text import export_dot, export_text  # noqa: E402
from .model.model import Model  # noqa: E402
from . import export as _exporters  # noqa: E402,F401  (Model.export's formats: dasktree.export fills them)
from .regress import task as _regression  # noqa: E402,F401  (a model file's "regression" task, registered)
from .version import __version__  # noqa: E402


class _Package(_types.ModuleType):
    """The package, whose ``fit`` is the function even once the submodule ``dasktree.fit`` is loaded:
    Python sets a package's attribute to each submodule it loads, which would hide the function."""

    def __setattr__(self, name, value):
        if name == "fit" and isinstance(value, _types.ModuleType):
            value = value.fit
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

_LAZY = {  # public names loaded on first use: `dasktree show` never imports the fit (Dask, numba) or
    # scikit-learn, and `dasktree fit` never imports scikit-learn
    "fit": "fit", "DaskTreeClassifier": "estimator", "load": "estimator", "Discretizer": "discretize.discretizer",
    "DaskTreeRegressor": "regressor", "fit_regression": "fit", "CSV": "io.csv_source",
    "DaskForestClassifier": "forest_estimator", "fit_forest": "forest_fit", "load_forest": "model.forest_model",
    "ForestModel": "model.forest_model", "DaskForestRegressor": "forest_regressor",
    "fit_forest_regression": "forest_fit",
}


def __getattr__(name: str):
    """``dasktree.fit``, ``dasktree.DaskTreeClassifier`` and the other public names, imported when first
    asked for (PEP 562): importing the package, as the command does, costs no import of the fit (Dask,
    distributed, numba: seconds) nor of scikit-learn (most of a second, with scipy behind it)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "CSV",
    "DaskForestClassifier",
    "DaskForestRegressor",
    "DaskTreeClassifier",
    "DaskTreeError",
    "DataError",
    "Discretizer",
    "ForestModel",
    "InputError",
    "Model",
    "export_dot",
    "export_text",
    "fit",
    "fit_forest",
    "fit_forest_regression",
    "load",
    "load_forest",
]
