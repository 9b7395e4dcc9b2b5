"""``DaskTreeClassifier``: the scikit-learn-style face of :func:`dasktree.fit.fit`."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError as SklearnNotFittedError

from .errors import DataError, InputError, ParameterError
from .fit import fit as fit_model
from .fit import validate_params
from .engine.predict import predict_dataset
from .estimator_input import (
    check_fit_input,
    check_predict_input,
    dask_frame,
    dask_partitions,
    folds_of_splits,
    is_dask,
    is_dataset,
    join_dask,
    with_column,
)
from .model.export import export_dot, export_text
from .model.model import Model
from .model.model import load as load_model
from .model.predict import as_table, predict_table, prediction_columns

__all__ = ["DaskTreeClassifier", "NotFittedError", "load"]


class NotFittedError(InputError, SklearnNotFittedError):
    """Predicting before fitting: scikit-learn's error, and a dasktree input error (one line)."""


class DaskTreeClassifier(ClassifierMixin, BaseEstimator):
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
    cv : int, list of (train, test) splits, or None, default None
        Grow ``cv`` fold trees in the same passes as the main tree (Blockeel &
        Struyf's forest) and report their cross-validated accuracy in
        ``report_["cv"]``; no extra pass over the data. In-memory ``X, y``
        may give scikit-learn's splits instead (e.g. ``list(KFold(5).split(X))``)
        whose test sets partition the rows: test set ``i`` is fold ``i``.
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
    prune : {"auto", "cv", "cv-min", "pessimistic", "none", None}, default "auto"
        How the grown tree is pruned (:mod:`dasktree.model.prune`); no pass over the
        data either way. "cv": cost-complexity pruning (CART) with alpha chosen
        by the 1-SE rule from the ``cv`` fold trees' held-out counts; "cv-min":
        the alpha of least CV error; "pessimistic": C4.5's error-based pruning
        (subtree replacement, ``confidence``); None or "none": the grown tree.
        "auto" is "cv-min" when ``cv`` is given, else "pessimistic": CV pruning
        needs the fold trees, which cost ``cv`` more trees in every pass (see
        the README for the measurements behind this default). The model keeps
        the grown tree, so :meth:`prune_model` re-prunes it without a pass.
    ccp_alpha : float or None, default None
        Prune at this cost-complexity alpha instead (scikit-learn's ``ccp_alpha``).
    confidence : float, default 0.25
        C4.5's confidence factor CF for ``prune="pessimistic"``: smaller prunes more.
    class_weight : dict, "balanced" or None, default None
        Weights of the classes, multiplied into ``sample_weight``; "balanced"
        weighs class ``c`` by ``n_rows / (n_classes * count(c))``. Weights
        become whole-row counts as :mod:`dasktree.io.weights` says.
    keep_fold_trees : bool, default False
        Keep the ``cv`` fold trees in the model (``fold_trees_``, saved with
        it). Without them the model is the main tree and the CV report; a
        deep many-fold forest makes a model file many times larger.
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
    memory_limit : int or str, optional
        Bytes (or ``"1GB"``, ``"512MB"``) a fit in this process plans against (default: this
        machine's memory): a dataset whose codes do not fit in a quarter of it, or with
        ``cache=False``, streams its row groups every pass (:mod:`dasktree.engine.stream_runner`).
    """

    def __init__(self, *, criterion="gini", max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_leaf_nodes=None, max_bins=255, max_categories=255,
                 nominal_split="binary", max_histogram_mb=256.0, max_arity=2, selection="balanced_gain",
                 cv=None, repeats=1, seed=0, binning="quantile", postpone=None, prune="auto", ccp_alpha=None,
                 confidence=0.25, class_weight=None, keep_fold_trees=False,
                 client=None, scheduler=None, cache="auto", progress=False, memory_limit=None):
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
        self.prune = prune
        self.ccp_alpha = ccp_alpha
        self.confidence = confidence
        self.postpone = postpone
        self.class_weight = class_weight
        self.keep_fold_trees = keep_fold_trees
        self.client = client
        self.scheduler = scheduler
        self.cache = cache
        self.progress = progress
        self.memory_limit = memory_limit

    _RUNTIME = ("client", "scheduler", "cache", "progress", "keep_fold_trees", "memory_limit")
    _ESTIMATOR_ONLY = ("class_weight",)  # the functional core's fit(class_weight=), not a learning parameter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value follows the test's learned default child
        tags.input_tags.string = True  # a DataFrame's string columns are nominal attributes
        tags.input_tags.categorical = True
        return tags

    def __sklearn_clone__(self):
        """A clone shares the ``client`` (a connection, not a parameter to copy)."""
        from sklearn.base import clone

        params = self.get_params(deep=False)
        return type(self)(**{k: v if k == "client" else clone(v, safe=False) for k, v in params.items()})

    def _learning_params(self) -> dict:
        skip = (*self._RUNTIME, *self._ESTIMATOR_ONLY)
        return {k: v for k, v in self.get_params(deep=False).items() if k not in skip}

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, sample_weight=None, *, target: str | None = None,
            features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            key: str | None = None, folds: str | None = None, storage_options: dict | None = None,
            checkpoint: str | None = None) -> "DaskTreeClassifier":
        """Learn from ``X, y`` in memory or on dask, or from a dataset ``X`` with ``target=COLUMN``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features), DataFrame, dask collection, or dataset
            numpy / pandas (validated as scikit-learn does); a dask DataFrame or
            2-D dask array (with ``y`` a dask Series or array of the same
            partitions, or ``target=`` a column of the frame); or a Parquet file,
            directory, glob or fsspec URL (with ``storage_options``) and ``target=``.
        y : array-like of shape (n_rows,), optional
            Class labels.
        sample_weight : array-like of shape (n_rows,), dask Series or array, or str, optional
            Row weights, counted as whole rows (:mod:`dasktree.io.weights`: integer
            weights as they are, others in fixed point; weight 0 leaves a row out):
            an array beside in-memory ``X``; a dask Series or array of ``X``'s
            partitions beside dask ``X``; or the name of a column of ``X`` (a
            dataset's way).
        key, folds : str, optional
            With ``cv``: a column keying the rows for the fold hash, or a column
            of the user's own folds ``0..cv-1``.
        checkpoint : str or path, optional
            A Parquet dataset's fit saves what it needs to continue here after every
            level (:mod:`dasktree.engine.checkpoint`); the same fit started again
            goes on from the last complete level, with the same model.
        """
        params = self._learning_params()
        splits = params["cv"] is not None and not isinstance(params["cv"], (int, np.integer))
        # scikit-learn's habit: cv as (train, test) splits; their test sets become the folds
        validate_params({**params, "cv": None if splits else params["cv"]})
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        in_memory = not (is_dataset(X) or is_dask(X))
        data, labels = X, y
        if in_memory and target is None:
            data, labels = check_fit_input(self, X, y)
        if splits:
            if not (in_memory and target is None) or folds is not None:
                raise ParameterError("cv as a list of (train, test) splits is for in-memory X, y; with a dataset "
                                 "give cv=K and folds=COLUMN")
            params["cv"], fold = folds_of_splits(self.cv, len(labels))
            data, folds = with_column(data, fold, "fold")
        elif is_dask(X) and y is not None:
            data, target = join_dask(X, y, target)
            labels = None
        if is_dask(X) and sample_weight is not None and not isinstance(sample_weight, str):
            data, sample_weight = join_dask(data, sample_weight, "sample_weight", what="sample_weight")
        model = fit_model(
            data, labels, target=target, features=features, exclude=exclude, nominal=nominal, key=key,
            folds=folds, storage_options=storage_options, sample_weight=sample_weight,
            class_weight=self.class_weight, client=self.client,
            scheduler=self.scheduler, cache=self.cache, progress=self.progress,
            keep_fold_trees=self.keep_fold_trees, checkpoint=checkpoint, memory_limit=self.memory_limit,
            **params,
        )
        self._set_model(model, names=not (in_memory and target is None))
        self._sklearn_input = in_memory and target is None
        return self

    def _set_model(self, model: Model, names: bool = True) -> None:
        self.model_ = model
        self.classes_ = np.asarray(model.classes)
        if names:  # in-memory X: scikit-learn's validation set these from X itself
            self.n_features_in_ = len(model.features)
            self.feature_names_in_ = np.asarray(model.features, dtype=object)
        self.report_ = model.report
        self.run_ = model.run
        self.tree_ = model.tree

    @classmethod
    def from_model(cls, model: Model) -> "DaskTreeClassifier":
        names = set(cls._get_param_names())
        est = cls(**{k: v for k, v in model.params.items() if k in names})
        est._set_model(model)
        return est

    def _check_fitted(self) -> Model:
        if not hasattr(self, "model_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return self.model_

    def _table(self, X):
        model = self._check_fitted()
        if getattr(self, "_sklearn_input", False):
            X = check_predict_input(self, X, model.features)
        return as_table(model, X)

    # ---------------------------------------------------------------- predict
    def predict_proba(self, X):
        """Class probabilities, shape (n_rows, n_classes), columns in ``classes_`` order.

        On a dask DataFrame or array: a dask array, computed lazily partition by partition.
        """
        model = self._check_fitted()
        if is_dask(X):
            frame = dask_frame(X, model.features)
            return frame.map_partitions(_proba_frame, model=model,
                                        meta=np.zeros((0, len(model.classes)), dtype=np.float64))
        if is_dataset(X):
            from .io.sources import ParquetSource

            source = ParquetSource(X)
            parts = [model.predict_proba_table(source.read(p, model.features)) for p in source.parts]
            return np.concatenate(parts) if parts else np.zeros((0, len(model.classes)))
        return model.predict_proba_table(self._table(X))

    def predict(self, X, *, out: str | None = None, keep: Sequence[str] = (), overwrite: bool = False):
        """Predicted class labels.

        On a dask DataFrame or array: a dask Series of labels named
        ``prediction``, lazy, one partition per input partition (dask-ml's
        habit; :meth:`predict_columns` gives the probabilities too). On a
        dataset path with ``out``: writes Parquet (``prediction`` and one
        ``proba_<class>`` column per class, plus ``keep`` columns) into the
        directory ``out`` atomically and returns the files written.
        """
        model = self._check_fitted()
        if out is not None:
            if not is_dataset(X):
                raise InputError("out= is for dataset inputs (a Parquet path or URL)")
            return predict_dataset(model, X, out, keep=keep, overwrite=overwrite,
                                   client=self.client, scheduler=self.scheduler)
        if is_dask(X):
            return self.predict_columns(X)["prediction"]
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)] if len(proba) else self.classes_[:0]

    def predict_columns(self, X, *, keep: Sequence[str] = ()):
        """``prediction`` and ``proba_<class>`` columns (plus ``keep`` columns of ``X``), as the
        Parquet output of :meth:`predict`: a dask DataFrame for dask ``X`` (lazy), else pandas."""
        import pandas as pd

        model = self._check_fitted()
        if is_dask(X):
            frame = dask_frame(X, model.features)
            meta = pd.DataFrame({c: pd.Series(dtype=frame._meta[c].dtype) for c in keep})
            for c in prediction_columns(model):
                meta[c] = pd.Series(dtype="float64")
            meta["prediction"] = pd.Series(np.asarray(model.classes)[:0])
            return frame.map_partitions(_predict_frame, model=model, keep=tuple(keep), meta=meta)
        return predict_table(model, self._table(X) if not keep else as_table(model, X), keep).to_pandas()

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy on ``X, y`` (weighted by ``sample_weight``); on dask collections, computed
        on the cluster, partition by partition (``y`` and ``sample_weight`` of ``X``'s partitions)."""
        if is_dask(X):
            import dask

            predicted = self.predict(X).to_delayed()
            truth = dask_partitions(y, "y", len(predicted))
            weights = [None] * len(truth) if sample_weight is None else \
                dask_partitions(sample_weight, "sample_weight", len(predicted))
            hits = [dask.delayed(_hits)(p, t, w) for p, t, w in zip(predicted, truth, weights)]
            total = dask.delayed(np.sum)(hits, axis=0)  # in partition order: the same sum every time
            right, rows = self.client.compute(total).result() if self.client is not None else total.compute()
            return float(right / rows) if rows else float("nan")
        return super().score(X, y, sample_weight=sample_weight)

    # ---------------------------------------------------------------- pruning
    def prune_model(self, alpha: float | None = None, *, mode: str | None = None,
                    confidence: float | None = None) -> "DaskTreeClassifier":
        """Prune the grown tree again, without a pass: at ``alpha``, or by ``mode``
        ("cv", "cv-min", "pessimistic", "none"). The CV report and the cp table
        follow. Returns ``self``."""
        model = self._check_fitted()
        confidence = self.confidence if confidence is None else confidence
        from .model.pruning import prune_model

        self._set_model(prune_model(model, alpha, mode=mode, confidence=confidence))
        return self

    @property
    def cp_table_(self):
        """rpart's ``printcp`` as a DataFrame: per subtree of the weakest-link sequence,
        ``alpha``, ``leaves``, ``train_error``, ``cv_error``, ``cv_se`` (NaN without ``cv``)."""
        import pandas as pd

        from .model.pruning import cp_rows

        table = cp_rows(self._check_fitted())
        return pd.DataFrame(table, columns=["alpha", "leaves", "train_error", "cv_error", "cv_se"]).astype(
            {"cv_error": "float64", "cv_se": "float64"})

    @property
    def ccp_alpha_(self) -> float | None:
        """The alpha the tree was pruned at (None: pessimistic pruning or none)."""
        return (self._check_fitted().report.get("prune") or {}).get("alpha")

    # ---------------------------------------------------------------- model
    @property
    def fold_trees_(self) -> list["DaskTreeClassifier"]:
        """Each fold tree of the cross-validation forest as a fitted classifier (repeat-major),
        pruned as the main tree was (as the CV report counts it)."""
        from .model.pruning import pruned_fold_trees

        model = self._check_fitted()
        out = []
        for tree in pruned_fold_trees(model):
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

    out = predict_table(model, frame_to_table(frame.reset_index(drop=True)), keep).to_pandas()
    out.index = frame.index
    return out


def _hits(predicted, truth, weight=None) -> np.ndarray:
    """Correct predictions and rows of one partition (each weighted by ``weight``)."""
    truth = np.asarray(truth).ravel()
    if len(truth) != len(predicted):
        raise DataError(f"a partition has {len(predicted)} predictions but {len(truth)} labels")
    right = np.asarray(predicted) == truth
    if weight is None:
        return np.array([int(np.sum(right)), len(truth)])
    weight = np.asarray(weight, dtype=np.float64).ravel()
    if len(weight) != len(truth):
        raise DataError(f"a partition has {len(truth)} labels but {len(weight)} weights")
    return np.array([float(np.sum(weight[right])), float(np.sum(weight))])


def _proba_frame(frame, *, model: Model) -> np.ndarray:
    from .io.sources import frame_to_table

    return model.predict_proba_table(frame_to_table(frame.reset_index(drop=True)))


def load(path) -> DaskTreeClassifier:
    """A fitted :class:`DaskTreeClassifier` from a JSON model file."""
    return DaskTreeClassifier.from_model(load_model(path))
