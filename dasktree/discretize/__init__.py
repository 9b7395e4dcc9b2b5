"""Discretization of numeric attributes from class-count histograms.

:mod:`.methods` holds the kernels (pure numpy, one attribute's bins at a time),
:mod:`.jobs` runs them as one histogram pass with a task per attribute, and
:class:`Discretizer` is the scikit-learn-style face (``fit`` / ``transform``,
JSON save and load).
"""

from .jobs import DISCRETIZERS, cut_indices
from .methods import METHODS, chimerge, distance, equal_frequency, equal_width, mdlp

__all__ = [
    "DISCRETIZERS",
    "Discretizer",
    "METHODS",
    "chimerge",
    "cut_indices",
    "distance",
    "equal_frequency",
    "equal_width",
    "mdlp",
]


def __getattr__(name: str):
    """:class:`Discretizer` loads on first use (it is a scikit-learn transformer: importing the
    package for the learner's global discretization costs no scikit-learn import)."""
    if name == "Discretizer":
        from .discretizer import Discretizer

        return Discretizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
