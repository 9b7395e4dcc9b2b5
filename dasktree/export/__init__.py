"""Exports that predict exactly as dasktree does: SQL, ONNX and PMML.

Every export reads the model's plain arrays through :mod:`dasktree.export.walk` (each test's
children as conditions on the column's own values, missing values and categories outside the
model's sent where prediction sends them) and writes one format:

* ``sql``: a ``SELECT`` with one ``CASE`` per output (:mod:`.sql`, :mod:`.sql_types`); the standard library;
* ``onnx``: an ``ai.onnx.ml`` ``TreeEnsemble`` graph (:mod:`.onnx_model`); the ``onnx`` package;
* ``pmml``: a PMML 4.4 ``TreeModel`` (:mod:`.pmml`); the standard library.

Each carries the dasktree and model format versions, the target, the classes and every
feature's name and kind, and refuses with one line what it cannot express. A forest
(:class:`~dasktree.model.forest_model.ForestModel`) has its own of each format (:mod:`.forest_sql`,
:mod:`.forest_onnx`, :mod:`.forest_pmml`), built of its members' tree exports.
"""

from __future__ import annotations

import os

from ..errors import ParameterError
from ..model.forest_model import ForestModel
from ..model.model import EXPORTERS, Model

__all__ = ["FORMATS", "export_model", "write_export"]

FORMATS = ("sql", "onnx", "pmml")


def export_model(model: Model | ForestModel, format: str, **options) -> str | bytes:
    """The model (a tree's or a forest's) in ``format``: SQL or PMML text, or ONNX bytes.

    Parameters
    ----------
    model : Model or ForestModel
    format : {"sql", "onnx", "pmml"}
    **options
        sql: ``table``, ``dialect``, ``keep``, ``indent``, ``types``, ``shape`` (:func:`.sql.sql_select`,
        :func:`.forest_sql.forest_sql_select`); onnx: none; pmml: none.
    """
    if format not in FORMATS:
        raise ParameterError(f"export format must be one of {list(FORMATS)}, got {format!r}")
    forest = isinstance(model, ForestModel)
    if format == "sql":
        from .forest_sql import forest_sql_select
        from .sql import sql_select

        return (forest_sql_select if forest else sql_select)(model, **options)
    if format == "onnx":
        from .forest_onnx import forest_onnx_bytes
        from .onnx_model import onnx_bytes

        return (forest_onnx_bytes if forest else onnx_bytes)(model, **options)
    from .forest_pmml import forest_pmml_text
    from .pmml import pmml_text

    return (forest_pmml_text if forest else pmml_text)(model, **options)


def write_export(model: Model | ForestModel, format: str, out: str | os.PathLike, *, overwrite: bool = False,
                 **options) -> str | bytes:
    """Write the export to ``out`` whole or not at all, and return it; an existing ``out`` is
    refused (checked before the export is made) unless ``overwrite``."""
    from ..io.outputs import atomic_file, check_file_out

    path = check_file_out(out, overwrite=overwrite)
    data = export_model(model, format, **options)
    with atomic_file(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return data


EXPORTERS.update(export=export_model, write=write_export)  # Model.export's formats
