"""``DaskTreeClassifier``: the scikit-learn-style face of :func:`dasktree.fit.fit`."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from .engine.predict import predict_dataset
from .errors import InputError
from .fit import fit as fit_model
from .fit import validate_params
from .io.sources import is_dask_frame
from .model.export import export_dot, export_text
from .model.model import Model
from .model.model import load as load_model
from .model.predict import as_table, predict_table
from .params import ParamsMixin

__all__ = ["DaskTreeClassifier", "load"]


class DaskTreeClassifier(ParamsMixin):
    """A decision tree grown one level pass at a time, on Dask or in process.

    Parameters
    ----------
    criterion : {"gini", "entropy", "gain_ratio"}, default "gini"
        Impurity whose decrease chooses the tests (gain ratio: C4.5's rule).
    max_depth : int or None, default None
        Deepest level of nodes; a tree of depth D reads the data D + 1 times.
    min_samples_split, min_samples_leaf : int, default 2 and 1
        Fewest training rows a node must have to be split, and each child must have.
    min_impurity_decrease : float, default 0.0
        Split only when ``N_t / N * impurity decrease >= min_impurity_decrease``.
    max_leaf_nodes : int or None
        Leaf budget; level by level, the splits with the largest weighted
        impurity decrease are kept first.
    max_bins : int, default 255
        Numeric columns with at most this many distinct values get one bin per
        value (exact thresholds); larger ones get approximate quantile bins.
    max_categories : int, default 255
        Nominal columns keep their most frequent categories up to this many;
        the rest share one "__other__" category.
    nominal_split : {"binary", "multiway"}, default "binary"
        CART subset splits, or C4.5's one child per category.
    max_histogram_mb : float, default 256
        Histogram memory budget of one pass; a wider frontier is split into
        node groups, one extra pass each.
    max_arity : int, default 2
        Largest number of children of a numeric test. Above 2, each numeric
        attribute gets the optimal k-interval split for every k up to it
        (Elomaa & Rousu's Block-Opt-P over the node's blocks), and
        ``selection`` picks the arity and the attribute.
    selection : {"balanced_gain", "gain_ratio", "distance"}, default "balanced_gain"
        With ``max_arity > 2``: gain / log2(k), gain / split information, or
        1 - López de Mántaras' normalized distance.
    cv : int or None, default None
        Grow ``cv`` fold trees in the same passes as the main tree (Blockeel &
        Struyf's forest) and report their cross-validated accuracy in
        ``report_["cv"]``; no extra pass over the data.
    repeats : int, default 1
        Repetitions of ``cv``-fold cross-validation (5x2cv is ``cv=2, repeats=5``).
    seed : int, default 0
        Seed of the fold hash; a row's fold depends only on its key and the seed.
    binning : str, default "quantile"
        The bins of the numeric attributes. "quantile": pass 0's bins (one per
        distinct value up to ``max_bins``, else quantile bins). Or a
        discretization method of :class:`dasktree.Discretizer` ("mdlp",
        "distance", "chimerge", "equal_width", "equal_frequency", "optimal",
        each with its default parameters): one more histogram pass cuts the
        pass-0 bins into the method's intervals, and the tree grows on those
        (global discretization; thresholds are the method's cut points, the
        same as ``Discretizer(method, max_bins=max_bins)`` finds).
    postpone : None, "analytic" or (rule, t), default None
        Skip, at a node, the numeric attributes with many boundary points
        (Elomaa & Rousu); a postponed attribute is considered again at every
        deeper node. "analytic": those whose score bound (from the blocks'
        counts) is below the best score found at the node, which never changes
        the tree (criterion gini / entropy; with ``max_arity > 2``, selection
        balanced_gain). ``("ratio", t)``: blocks / rows > t; ``("rank", t)``:
        search only the fraction t with the fewest blocks; ``("relative", t)``:
        those with more than ``1 / t`` times the fewest blocks. ``0 < t <= 1``.
        ``run_["levels"]`` gives per level the searches made and postponed and
        the search time (:mod:`dasktree.split.postpone`).
    client : distributed.Client, optional
    scheduler : {"inprocess", "processes", "threads"} or address, optional
        Without ``client`` or ``scheduler``, in-memory data, and a dataset
        whose tables and codes fit in a quarter of this machine's memory, are
        learned (and datasets predicted) in this process on a thread per core;
        a larger dataset on a ``LocalCluster`` started for the fit.
    cache : bool or "auto", default "auto"
        Keep the encoded data on the workers between passes ("auto": when it
        takes at most a quarter of the cluster's memory); when the tables read
        in pass 0 fit too, they stay for the first level pass to encode, and
        Parquet is read once. Cached, the level passes are calls on one Dask
        actor per worker (:mod:`dasktree.engine.part_holders`), not task graphs; a
        ``client`` made with ``direct_to_workers=True`` sends them to the
        workers without the scheduler in between.
    progress : bool, default False
        A progress bar per pass on stderr.
    """

    def __init__(self, *, criterion="gini", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_leaf_nodes=None, max_bins=255, max_categories=255,
                 nominal_split="binary", max_histogram_mb=256.0, max_arity=2, selection="balanced_gain",
                 cv=None, repeats=1, seed=0, binning="quantile", postpone=None,
                 client=None, scheduler=None, cache="auto", progress=False):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.max_bins = max_bins
        self.max_categories = max_categories
        self.nominal_split = nominal_split
        self.max_histogram_mb = max_histogram_mb
        self.max_arity = max_arity
        self.selection = selection
        self.cv = cv
        self.repeats = repeats
        self.seed = seed
        self.binning = binning
        self.postpone = postpone
        self.client = client
        self.scheduler = scheduler
        self.cache = cache
        self.progress = progress

    _RUNTIME = ("client", "scheduler", "cache", "progress")

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, *, target: str | None = None, features: Sequence[str] | None = None,
            exclude: Sequence[str] = (), nominal: Sequence[str] = (), key: str | None = None,
            folds: str | None = None, storage_options: dict | None = None) -> "DaskTreeClassifier":
        """Learn from ``X, y`` in memory, or from a dataset ``X`` with ``target=COLUMN``.

        ``X`` may be a Parquet file, directory, glob or fsspec URL (with
        ``storage_options`` for fsspec), a pandas or dask DataFrame, or a 2-D array.
        With ``cv``, ``key`` names a column that keys the rows for the fold
        hash, or ``folds`` a column of the user's own folds ``0..cv-1``.
        """
        validate_params(self._learning_params())
        model = fit_model(
            X, y, target=target, features=features, exclude=exclude, nominal=nominal, key=key, folds=folds,
            storage_options=storage_options, client=self.client, scheduler=self.scheduler, cache=self.cache, progress=self.progress,
            **self._learning_params(),
        )
        self._set_model(model)
        return self

    def _set_model(self, model: Model) -> None:
        self.model_ = model
        self.classes_ = np.asarray(model.classes)
        self.n_features_in_ = len(model.features)
        self.feature_names_in_ = np.asarray(model.features, dtype=object)
        self.report_ = model.report
        self.run_ = model.run
        self.tree_ = model.tree

    @classmethod
    def from_model(cls, model: Model) -> "DaskTreeClassifier":
        names = set(cls._param_names())
        est = cls(**{k: v for k, v in model.params.items() if k in names})
        est._set_model(model)
        return est

    def _check_fitted(self) -> Model:
        if not hasattr(self, "model_"):
            raise InputError("this DaskTreeClassifier is not fitted yet: call fit first")
        return self.model_

    # ---------------------------------------------------------------- predict
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n_rows, n_classes), columns in ``classes_`` order."""
        model = self._check_fitted()
        if is_dask_frame(X):
            raise InputError("predict_proba on a dask DataFrame: use predict(ddf), which returns one")
        if isinstance(X, (str, os.PathLike)):
            from .io.sources import ParquetSource

            source = ParquetSource(X)
            parts = [model.predict_proba_table(source.read(p, model.features)) for p in source.parts]
            return np.concatenate(parts) if parts else np.zeros((0, len(model.classes)))
        return model.predict_proba_table(as_table(model, X))

    def predict(self, X, *, out: str | None = None, keep: Sequence[str] = (), overwrite: bool = False):
        """Predicted class labels.

        On a dataset path with ``out``, writes Parquet (``prediction`` and one
        ``proba_<class>`` column per class, plus ``keep`` columns) into the
        directory ``out`` atomically and returns the files written. On a dask
        DataFrame, returns a dask DataFrame of those columns (lazy).
        """
        model = self._check_fitted()
        if out is not None:
            if not isinstance(X, (str, os.PathLike, list)):
                raise InputError("out= is for dataset inputs (a Parquet path or URL)")
            return predict_dataset(model, X, out, keep=keep, overwrite=overwrite,
                                   client=self.client, scheduler=self.scheduler)
        if is_dask_frame(X):
            import pandas as pd

            from .model.predict import prediction_columns

            meta = pd.DataFrame({c: pd.Series(dtype="float64") for c in prediction_columns(model)})
            meta["prediction"] = pd.Series(np.asarray(model.classes)[:0])
            return X.map_partitions(_predict_frame, model=model, keep=tuple(keep), meta=meta)
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)] if len(proba) else self.classes_[:0]

    def score(self, X, y) -> float:
        """Mean accuracy on ``X, y``."""
        return float(np.mean(self.predict(X) == np.asarray(y)))

    # ---------------------------------------------------------------- model
    @property
    def fold_trees_(self) -> list["DaskTreeClassifier"]:
        """Each fold tree of the cross-validation forest as a fitted classifier (repeat-major)."""
        model = self._check_fitted()
        out = []
        for tree in model.fold_trees:
            fold = Model(spec=model.spec, target=model.target, tree=tree, params=model.params)
            out.append(DaskTreeClassifier.from_model(fold))
        return out

    @property
    def cv_report_(self) -> dict | None:
        """The cross-validation report (accuracy mean and std, per fold, confusion matrix), or None."""
        return self._check_fitted().report.get("cv")

    @property
    def feature_importances_(self) -> np.ndarray:
        return self._check_fitted().feature_importances()

    def export_text(self, max_depth: int | None = None) -> str:
        return export_text(self._check_fitted(), max_depth=max_depth)

    def export_dot(self) -> str:
        return export_dot(self._check_fitted())

    def save(self, path) -> None:
        """Save the model as versioned JSON (atomically)."""
        self._check_fitted().save(path)


def _predict_frame(frame, *, model: Model, keep: tuple):
    from .io.sources import frame_to_table

    return predict_table(model, frame_to_table(frame.reset_index(drop=True)), keep).to_pandas()


def load(path) -> DaskTreeClassifier:
    """A fitted :class:`DaskTreeClassifier` from a JSON model file."""
    return DaskTreeClassifier.from_model(load_model(path))
