"""A saved model evaluated on a labelled dataset: one pass (in process or on a cluster, as
:func:`dasktree.engine.place.open_parts` puts it), each part's statistic back, merged in the parts'
order.

The model says what a part gives and what the merge reports (``evaluate_part``, ``evaluate_merge``:
a tree's ask its task, :meth:`dasktree.model.task.Task.evaluate_part`; a forest's
:meth:`dasktree.model.forest_model.ForestModel.evaluate_part`). A classification model's part
routes its rows to the leaves and counts the true classes there (``counts[node, class]``, int64;
with a weight column float64 sums of the weights, as scikit-learn's metrics take
``sample_weight``); :func:`dasktree.model.metrics.leaf_metrics` turns the sum into precision, recall,
F1, balanced accuracy, log-loss and ROC AUC. A classification forest's part groups its rows by their
predicted probabilities (:func:`dasktree.model.metrics.proba_class_counts`), the groups standing for
leaves. A regression model's part gives its error sums
(:mod:`dasktree.regress.metrics`), merged into MSE, MAE, R^2 and the largest error. Rows whose
target is missing are skipped and counted; a label the model never saw is an error naming it.
"""

from __future__ import annotations

from ..errors import InputError
from ..io.sources import Part, Source, open_path
from ..model.metrics import leaf_class_counts
from ..model.forest_model import ForestModel
from ..model.model import Model

__all__ = ["evaluate_dataset", "leaf_class_counts"]


def _evaluate_part(part: Part, *, source: Source, model: Model | ForestModel, target: str, weight: str | None = None):
    table = source.read(part, [*model.features, target, *([weight] if weight else [])])
    return model.evaluate_part(table, target, f"{source.description} part {part.index}", weight)


def evaluate_dataset(model: Model | ForestModel, data, target: str, *, client=None, scheduler: str | None = None,
                     progress=None, storage_options: dict | None = None, weight: str | None = None,
                     security=None) -> dict:
    """Metrics of ``model`` on the labelled Parquet or CSV dataset ``data`` (target column ``target``), each
    row weighted by column ``weight`` when given; ``security``: TLS for a ``tls://`` scheduler
    (:mod:`dasktree.engine.tls`)."""
    from .place import open_parts

    source = data if isinstance(data, Source) else open_path(data, storage_options=storage_options)
    missing = [c for c in [*model.features, target, *([weight] if weight else [])] if c not in source.schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is missing from {source.description}")
    with open_parts(source, client=client, scheduler=scheduler, progress=progress, security=security) as parts:
        results = parts.map(_evaluate_part, "evaluate", model=model, target=target, weight=weight)
    return model.evaluate_merge(list(results), weight is not None)
