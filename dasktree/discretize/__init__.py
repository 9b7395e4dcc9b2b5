"""Discretization of numeric attributes from class-count histograms.

:mod:`.methods` holds the kernels (pure numpy, one attribute's bins at a time),
:mod:`.jobs` runs them as one histogram pass with a task per attribute, and
:class:`Discretizer` is the scikit-learn-style face (``fit`` / ``transform``,
JSON save and load).
"""

from .discretizer import Discretizer
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
