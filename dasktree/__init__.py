"""dasktree: decision trees learned one level pass at a time over partitioned Parquet, on Dask.

>>> from dasktree import DaskTreeClassifier
>>> clf = DaskTreeClassifier(max_depth=8).fit("data/*.parquet", target="label")  # doctest: +SKIP
>>> clf.save("model.json")                                                        # doctest: +SKIP
"""

from .kernel_cache import ensure_cache_dir

ensure_cache_dir()  # before numba compiles anything: a writable kernel cache even on a read-only install

from .discretize import Discretizer  # noqa: E402
from .errors import DaskTreeError, DataError, InputError
from .estimator import DaskTreeClassifier, load
from .fit import fit
from .model.export import export_dot, export_text
from .model.model import Model

__version__ = "0.1.0"

__all__ = [
    "DaskTreeClassifier",
    "DaskTreeError",
    "DataError",
    "Discretizer",
    "InputError",
    "Model",
    "export_dot",
    "export_text",
    "fit",
    "load",
]
