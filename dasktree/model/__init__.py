"""The fitted model as plain arrays and versioned JSON (``model``), prediction in memory
(``predict``), text and dot export (``export``) and the cross-validation report (``report``).
Nothing here knows the forest or Dask."""

from .model import FORMAT, VERSION, Model, TreeModel, load

__all__ = ["Model", "TreeModel", "load", "FORMAT", "VERSION"]
