"""Every parameter of a fit, declared once: :data:`PARAMS` (and the rules between them, :data:`RULES`).

A :class:`~dasktree.params.Param` gives the name, default, constraints, the
one-line help of the command's option, the numpydoc paragraph of the
estimator's docstring, and the layer that reads it:

======== ======================================================================
layer    read by
======== ======================================================================
grow     the grow loop: a field of :class:`dasktree.levels.grow.GrowParams`
split    the split search: a field of :class:`dasktree.split.search.SplitParams`
bins     pass 0's bin spec and global discretization (:mod:`dasktree.fit`)
folds    the fold hash (:class:`dasktree.io.folds.FoldSpec`)
prune    :func:`dasktree.model.pruning.apply_pruning`
weights  :func:`dasktree.io.weights.weighting`
model    what the fit keeps in the model (:mod:`dasktree.fit`)
runtime  where the passes run (:mod:`dasktree.engine.place`); not validated here
======== ======================================================================

The parameters of the layers grow, split, bins, folds and prune are saved in
the model (``Model.params``), in this order.
"""

from __future__ import annotations

from numbers import Integral, Real

from ..discretize.jobs import DISCRETIZERS
from ..io.weights import check_class_weight
from ..model.pruning import PRUNE_MODES
from ..split.api import (CRITERIA, MONOTONIC_WHAT, NOMINAL_SPLITS, SELECTIONS, check_monotonic_cst, check_postpone,
                         monotonic_layer, monotonic_text, parse_postpone, postpone_text)
from .constraints import Boolean, Check, Instance, Interval, Options
from .param import Param

__all__ = ["PARAMS", "RULES", "BINNINGS"]

BINNINGS = ("quantile", *DISCRETIZERS)
"""``binning=``: pass 0's exact / quantile bins, or a discretization method's intervals."""

LEARNING, PRUNING, CV = "learning", "pruning (no pass over the data)", "cross-validation (grown in the same passes as the tree)"


def _postpone(value):
    return postpone_text(parse_postpone(value))


def _class_weight_text(text):
    """``--class-weight``: "balanced", or ``LABEL=W,...`` as a dict (labels as text)."""
    if text is None or text == "balanced":
        return text
    out = {}
    for item in text.split(","):
        label, sep, weight = item.rpartition("=")
        try:
            if not sep or not label:
                raise ValueError
            out[label] = float(weight)
        except ValueError:
            from ..errors import ParameterError

            raise ParameterError(f"--class-weight must be 'balanced' or LABEL=WEIGHT,..., got {item!r}") from None
    return out


def _refit(value):
    """``refit``: True (the least rank, scikit-learn's default) or a callable of ``cv_results_``."""
    if value is not True and not callable(value):
        raise ValueError(f"refit must be True or a callable taking cv_results_ and returning an index, got {value!r}")


PARAMS: tuple[Param, ...] = (
    Param("criterion", "gain_ratio", [Options(CRITERIA)], "split", LEARNING,
          help="impurity whose decrease chooses the tests (gain_ratio: C4.5's rule; the default by the "
               "accuracy suite: benchmarks/results/accuracy.md)",
          doc="Impurity whose decrease chooses the tests: gini, entropy (information gain) or gain ratio "
              "(C4.5's rule: the largest ``gain / split information`` among the tests of at least the mean "
              "gain). Gain ratio is the default by measurement (``benchmarks/results/accuracy.md``, the "
              "same folds for every learner): it leads gini on the tuning suite the default was chosen on "
              "and again on the held-out report suite; entropy led the tuning suite narrowly and fell below "
              "gini on the report suite. Its fits grow small nodes in memory as gini's do, to the same "
              "model (:mod:`dasktree.levels.small`)."),
    Param("max_depth", None, [Interval(Integral, 1, None), None], "grow", LEARNING, metavar="D",
          help="deepest level; a tree of depth D reads the data D + 1 times (default: no limit)",
          doc="Deepest level of nodes; a tree of depth D reads the data D + 1 times."),
    Param("min_samples_split", 2, [Interval(Integral, 2, None)], "grow", LEARNING, metavar="N",
          help="fewest training rows a node must have to be split",
          doc="Fewest training rows a node must have to be split."),
    Param("min_samples_leaf", 1, [Interval(Integral, 1, None)], "split", LEARNING, metavar="N",
          help="fewest training rows each child of a split must have",
          doc="Fewest training rows each child of a split must have."),
    Param("min_weight_fraction_leaf", 0.0, [Interval(Real, 0, 0.5, closed="both")], "split", LEARNING, metavar="F",
          layer_value=float,
          help="fewest training rows each child of a split must have, as a fraction of the tree's (weighted) rows",
          doc="Fewest training rows each child of a split must have, as a fraction of its tree's training rows "
              "(scikit-learn's meaning: of the total sample weight; rows count as their whole-row weights, "
              ":mod:`dasktree.io.weights`): a child of ``n`` rows is allowed when ``n >= "
              "min_weight_fraction_leaf * total``, exactly. A fold tree's total is its own training rows. The "
              "larger of this and ``min_samples_leaf`` applies. Above 0, every level of the tree is a pass "
              "over the data (small nodes are not grown in memory)."),
    Param("min_impurity_decrease", 0.0, [Interval(Real, 0, None)], "grow", LEARNING, metavar="X", layer_value=float,
          help="split only when N_t / N * impurity decrease >= X",
          doc="Split only when ``N_t / N * impurity decrease >= min_impurity_decrease``."),
    Param("max_leaf_nodes", None, [Interval(Integral, 2, None), None], "grow", LEARNING, metavar="N",
          help="leaf budget, spent level by level on the best splits first (default: no limit)",
          doc="Leaf budget; level by level, the splits with the largest weighted impurity decrease are "
              "kept first."),
    Param("max_bins", 255, [Interval(Integral, 2, 65535, closed="both")], "bins", LEARNING, metavar="N",
          help="numeric columns with at most N distinct values get exact bins, others N quantile bins",
          doc="Numeric columns with at most this many distinct values get one bin per value (exact "
              "thresholds); larger ones get approximate quantile bins."),
    Param("max_categories", 255, [Interval(Integral, 2, 65535, closed="both")], "bins", LEARNING, metavar="N",
          help="nominal columns keep their N most frequent categories; the rest share '__other__'",
          doc="Nominal columns keep their most frequent categories up to this many; the rest share one "
              '"__other__" category.'),
    Param("nominal_split", "binary", [Options(NOMINAL_SPLITS)], "split", LEARNING,
          help="CART subset splits, or C4.5's one child per category",
          doc="CART subset splits, or C4.5's one child per category."),
    Param("max_histogram_mb", 256.0, [Interval(Real, 0, None, closed="neither")], "grow", LEARNING, metavar="MB",
          layer_value=float,
          help="histogram memory of one pass; wider frontiers take one pass per node group",
          doc="Histogram memory budget of one pass; a wider frontier is split into node groups, one extra "
              "pass each."),
    Param("max_arity", 2, [Interval(Integral, 2, 64, closed="both")], "split", LEARNING, metavar="K",
          help="numeric tests with up to K intervals: optimal splits by Block-Opt-P (2: binary)",
          doc="Largest number of children of a numeric test. Above 2, each numeric attribute gets the "
              "optimal k-interval split for every k up to it (Elomaa & Rousu's Block-Opt-P over the node's "
              "blocks), and ``selection`` picks the arity and the attribute."),
    Param("selection", "balanced_gain", [Options(SELECTIONS)], "split", LEARNING,
          help="with --max-arity > 2, what picks the arity and the attribute",
          doc="With ``max_arity > 2``: gain / log2(k), gain / split information, or 1 - López de Mántaras' "
              "normalized distance."),
    # no option of their own: the command's --max-features and --random-state (dasktree.cli.forest) are the
    # forest's, and a single tree's without --trees
    Param("max_features", None, [Options(("sqrt", "log2")), Interval(Integral, 1, None),
                                 Interval(Real, 0, 1, closed="right"), None], "split", None,
          type_doc='{"sqrt", "log2"}, int, float or None',
          doc='Attributes searched at each node, as scikit-learn\'s trees read it: "sqrt" or "log2" of the '
              "attributes, an int (at most all of them), a float fraction of them (at least one), or None (all). "
              "Drawn per node from ``random_state`` and the node's path from the root alone "
              "(:mod:`dasktree.levels.sampling`, the forests' draw: the tree is member 0 of a forest without "
              "bags), so the same attributes whatever the files, parts, runner or workers, and whether the "
              "node grows in a level pass or in memory. The ``cv`` fold trees search the main tree's draw at "
              "each node path: the draw never depends on a row, so no held-out row shapes what a fold tree "
              "searches, and the CV estimate (and CV pruning's alpha) is that of the trees this "
              "``random_state`` grows, the model itself; a draw of their own per fold tree would estimate an "
              "average over draws, another quantity, and split the shared nodes apart sooner."),
    Param("random_state", 0, [Interval(Integral, 0, 2**63 - 1)], "split", None,
          doc="Seed of ``max_features``' draws (an int: the same seed, the same tree; without "
              "``max_features`` it changes nothing: every attribute is searched and ties go to the lower "
              "attribute)."),
    Param("monotonic_cst", None, [None, Check(check_monotonic_cst, MONOTONIC_WHAT, "up")], "split", LEARNING,
          metavar="CST", from_text=monotonic_text, layer_value=monotonic_layer,
          type_doc="sequence of int, dict or None",
          help="monotonic constraints: FEATURE=1 (the prediction may only increase with it), FEATURE=-1 (only "
               "decrease), comma-separated; or one -1/0/1 per feature in order (regression and binary "
               "classification, numeric features, binary tests) (default: none)",
          doc="Monotonicity constraints, scikit-learn's meaning: per feature 1 (the prediction may only increase "
              "with it), -1 (only decrease) or 0 (none), a sequence in the order of the features, or a dict "
              "``{feature: constraint}`` (the others 0). A split on a constrained feature whose children's "
              "values are in the wrong order, or outside the bounds its node inherits, is not made; the "
              "children of such a split are bounded by the middle value (the mean of the children's values), "
              "and every node's value is clipped to its bounds (computed again from the tree's counts wherever "
              "the model is made or loaded), so ``predict``, the reports and the exports are monotone in each "
              "constrained feature. Classification: binary only, the probability of the second class of "
              "``classes_``. Refused (a ``ParameterError``, exit 2) with more than two classes, with a "
              "non-zero constraint on a nominal feature, with ``max_arity`` > 2, with ``param_grid`` and "
              "with ``postpone`` (:mod:`dasktree.split.monotonic`)."),
    Param("cv", None, [Interval(Integral, 2, None), None], "folds", CV, metavar="K",
          type_doc="int, list of (train, test) splits, or None",
          help="K-fold cross-validation: accuracy, precision, recall, F1, log-loss, ROC AUC in the report "
               "(default: none)",
          doc="Grow ``cv`` fold trees in the same passes as the main tree (Blockeel & Struyf's forest) and "
              "report their cross-validated accuracy in ``report_[\"cv\"]``; no extra pass over the data. "
              "In-memory ``X, y`` may give scikit-learn's splits instead (e.g. ``list(KFold(5).split(X))``) "
              "whose test sets partition the rows: test set ``i`` is fold ``i``. ``cv`` alone chooses no "
              "setting: the tree is the parameters' own, pruned by the fold trees (``prune=\"auto\"``: the "
              "least CV error); ``param_grid`` chooses among settings. Why no choice by default (the rules tried "
              "and their figures: ``benchmarks/results/partial/README.md``, \"cv=k that chooses\"): on the public "
              "tuning sets every rule that may choose CV pruning lost to the fit without ``cv`` (the fold trees' "
              "choice among settings is noisier on a few hundred rows than what it gains), while on larger and "
              "noisier data CV pruning is the more accurate (``benchmarks/results/prune.md``); the one rule that "
              "matched the default on both suites, the three criteria pruned pessimistically and kept by the 1-SE"
              " rule towards gain ratio, costs about 3x ``cv``'s time for a difference of a row or so per set. It"
              " is one argument away: ``param_grid={\"criterion\": [\"gain_ratio\", \"gini\", \"entropy\"], \"prune\": "
              "[\"pessimistic\"]}`` with ``refit=dasktree.model.grid.TowardsFirst(\"gain_ratio\")``."),
    Param("repeats", 1, [Interval(Integral, 1, None)], "folds", CV, metavar="R",
          help="R x K cross-validation (5x2cv: --cv 2 --repeats 5)",
          doc="Repetitions of ``cv``-fold cross-validation (5x2cv is ``cv=2, repeats=5``)."),
    Param("seed", 0, [Interval(Integral, 0, None)], "folds", CV,
          help="seed of the fold hash",
          doc="Seed of the fold hash; a row's fold depends only on its content (or key) and the seed."),
    Param("binning", "quantile", [Options(BINNINGS)], "bins", LEARNING, metavar="METHOD", type_doc="str",
          help="bins of the numeric attributes: 'quantile' (exact up to --max-bins distinct values, else "
               "quantile bins) or a discretization method (" + ", ".join(DISCRETIZERS) + ") whose intervals "
               "become the bins, at the cost of one more pass",
          doc='The bins of the numeric attributes. "quantile": pass 0\'s bins (one per distinct value up to '
              "``max_bins``, else quantile bins). Or a discretization method of "
              ":class:`dasktree.Discretizer` (" + ", ".join(f'"{m}"' for m in DISCRETIZERS) + ", each with "
              "its default parameters): one more histogram pass cuts the pass-0 bins into the method's "
              "intervals, and the tree grows on those (global discretization; thresholds are the method's "
              "cut points, the same as ``Discretizer(method, max_bins=max_bins)`` finds)."),
    Param("postpone", None, [None, Check(_postpone, "None, 'analytic' or (rule, t)", "bogus")], "split", LEARNING,
          metavar="RULE", layer_value=parse_postpone, type_doc='None, "analytic" or (rule, t)',
          help="skip, at a node, numeric attributes with many boundary points (reconsidered deeper): "
               "'analytic' (score bound below the best found: the same tree), 'ratio:T' (blocks/rows > T), "
               "'rank:T' (search the fraction T with the fewest blocks), 'relative:T' (more than 1/T times the "
               "fewest blocks); 0 < T <= 1 (default: none: every attribute searched)",
          doc="Skip, at a node, the numeric attributes with many boundary points (Elomaa & Rousu); a "
              "postponed attribute is considered again at every deeper node. \"analytic\": those whose score "
              "bound (from the blocks' counts) is below the best score found at the node, which never "
              "changes the tree (criterion gini / entropy; with ``max_arity > 2``, selection "
              'balanced_gain). ``("ratio", t)``: blocks / rows > t; ``("rank", t)``: search only the '
              'fraction t with the fewest blocks; ``("relative", t)``: those with more than ``1 / t`` times '
              "the fewest blocks. ``0 < t <= 1``; kept as its text (\"rank:0.5\"). ``run_[\"levels\"]`` gives "
              "per level the searches made and postponed and the search time "
              "(:mod:`dasktree.split.postpone`). A fit that postpones grows level-wise: small nodes are not "
              "grown in memory (their compiled search does not postpone), so with binary tests "
              "(``max_arity=2``) postponing costs more time than it saves; it pays with multi-way splits."),
    Param("prune", "auto", [Options(PRUNE_MODES), None], "prune", PRUNING,
          help="cv: cost-complexity pruning, alpha by the 1-SE rule over the --cv fold trees; cv-min: the "
               "least CV error; pessimistic: C4.5's error-based pruning; none: the grown tree "
               "(default auto: cv-min with --cv, else pessimistic)",
          doc="How the grown tree is pruned (:mod:`dasktree.model.prune`); no pass over the data either way. "
              '"cv": cost-complexity pruning (CART) with alpha chosen by the 1-SE rule from the ``cv`` fold '
              'trees\' held-out counts; "cv-min": the alpha of least CV error; "pessimistic": C4.5\'s '
              'error-based pruning (subtree replacement, ``confidence``); None or "none": the grown tree. '
              '"auto" is "cv-min" when ``cv`` is given, else "pessimistic": CV pruning needs the fold trees, '
              "which cost ``cv`` more trees in every pass (see docs/performance.md for the measurements behind this "
              "default). The model keeps the grown tree, so :meth:`prune_model` re-prunes it without a pass."),
    Param("ccp_alpha", None, [Interval(Real, 0, None), None], "prune", PRUNING, metavar="A",
          help="prune at this cost-complexity alpha instead (scikit-learn's ccp_alpha) (default: none)",
          doc="Prune at this cost-complexity alpha instead (scikit-learn's ``ccp_alpha``)."),
    Param("confidence", 0.25, [Interval(Real, 0, 1, closed="neither")], "prune", PRUNING, metavar="CF",
          help="C4.5's confidence factor for --prune pessimistic (smaller prunes more)",
          doc="C4.5's confidence factor CF for ``prune=\"pessimistic\"``: smaller prunes more."),
    Param("class_weight", None, [None, Check(check_class_weight, "None, 'balanced' or a dict", 5)], "weights",
          LEARNING, metavar="W", from_text=_class_weight_text, type_doc='dict, "balanced" or None',
          help="'balanced' (n / (classes x rows of the class)) or LABEL=W,LABEL=W,... multiplying the row "
               "weights of those classes (default: none)",
          doc='Weights of the classes, multiplied into ``sample_weight``; "balanced" weighs class ``c`` by '
              "``n_rows / (n_classes * count(c))``. Weights become whole-row counts as "
              ":mod:`dasktree.io.weights` says."),
    Param("keep_fold_trees", False, [Boolean()], "model", CV,
          help="save the K x R fold trees in the model too (many times its size); the CV report is saved "
               "either way",
          doc="Keep the ``cv`` fold trees in the model (``fold_trees_``, saved with it). Without them the "
              "model is the main tree and the CV report; a deep many-fold forest makes a model file many "
              "times larger."),
    Param("param_grid", None, [None, Instance((dict, list, tuple), "a dict of lists or a list of such dicts")],
          "model", type_doc="dict or list of dicts, optional",
          doc="With ``cv``: settings grown as one forest and chosen as scikit-learn's ``GridSearchCV`` "
              "chooses (:func:`dasktree.fit.fit`, :mod:`dasktree.levels.settings`): ``criterion``, "
              "``min_samples_leaf``, ``nominal_split``, ``max_arity`` and ``selection`` grow trees of their "
              "own in the same passes; ``prune``, ``confidence`` and ``ccp_alpha`` are read off the grown "
              "trees. Fitted, ``cv_results_``, ``best_params_``, ``best_score_`` and ``best_index_`` hold the "
              "table; the model is the chosen setting's."),
    Param("refit", True, [Check(_refit, "True or a callable", "yes")], "model", type_doc="True or callable",
          doc="How ``param_grid``'s setting is chosen: the least rank of the mean CV accuracy (True), or "
              "``refit(cv_results_)`` returning a setting's index, as in scikit-learn."),
    Param("client", None, None, "runtime", type_doc="distributed.Client, optional",
          doc="Run the passes on this client's cluster."),
    Param("scheduler", None, None, "runtime", type_doc='{"inprocess", "processes", "threads"} or address, optional',
          doc="Without ``client`` or ``scheduler``: on the ``distributed`` client already active in this "
              "process if there is one; else in this process on a thread per core, for in-memory data, "
              "dask collections and a dataset whose tables and codes fit in a quarter of this machine's "
              "memory; a larger dataset on a ``LocalCluster`` started for the fit "
              "(:mod:`dasktree.engine.place`)."),
    Param("cache", "auto", None, "runtime", type_doc='bool or "auto"',
          doc='Keep the encoded data on the workers between passes ("auto": when it takes at most a '
              "quarter of the cluster's memory); when the tables read in pass 0 fit too, they stay for the "
              "first level pass to encode, and Parquet is read once. Cached, the level passes are calls on "
              "one Dask actor per worker (:mod:`dasktree.engine.part_holders`), not task graphs; a "
              "``client`` made with ``direct_to_workers=True`` sends them to the workers without the "
              "scheduler in between."),
    Param("progress", False, None, "runtime", type_doc="bool",
          doc="A progress bar per pass on stderr."),
    Param("security", None, None, "runtime", type_doc="distributed.security.Security, str or dict, optional",
          doc="TLS for a ``scheduler`` at ``tls://``: a ``Security``, a directory of "
              "``deploy/make-certs.sh`` or ``{\"ca_file\", \"cert\", \"key\"}`` paths (default: dask's "
              "``distributed.comm.tls.*`` settings; :mod:`dasktree.engine.tls`)."),
    Param("memory_limit", None, None, "runtime", type_doc="int or str, optional",
          doc="Bytes (or ``\"1GB\"``, ``\"512MB\"``) a fit in this process plans against (default: this "
              "machine's memory): a dataset whose tables and codes do not fit in a quarter of it, or with "
              "``cache=False``, streams its pieces every pass (:mod:`dasktree.engine.stream_runner`; their codes "
              "spilled to ``$TMPDIR`` after the first, :mod:`dasktree.engine.spill`); either way its "
              "histograms are counted in node groups that fit what the data leaves of it "
              "(:mod:`dasktree.engine.memory_plan`)."),
)


def _needs_cv(p: dict) -> str | None:
    if p["prune"] in ("cv", "cv-min") and p["cv"] is None:
        return (f"prune={p['prune']!r} chooses alpha by cross-validation: give cv=k too "
                "(or prune='pessimistic', or ccp_alpha=)")
    if p["repeats"] > 1 and p["cv"] is None:
        return f"repeats={p['repeats']} needs cv: repeated cross-validation is cv=k, repeats=r"
    return None


def _one_pruning(p: dict) -> str | None:
    if p["ccp_alpha"] is not None and p["prune"] not in (None, "auto"):
        return f"give prune= or ccp_alpha=, not both (got prune={p['prune']!r}, ccp_alpha={p['ccp_alpha']!r})"
    return None


def _analytic_postpone(p: dict) -> str | None:
    try:
        check_postpone(parse_postpone(p["postpone"]), p["criterion"], p["max_arity"], p["selection"])
    except ValueError as e:
        return str(e)
    return None


def _sampled_postpone(p: dict) -> str | None:
    if p["max_features"] is not None and p["postpone"] is not None:
        return (f"give max_features= or postpone=, not both (got max_features={p['max_features']!r}, "
                f"postpone={p['postpone']!r}): a node searches its drawn attributes, none postponed")
    return None


def _monotonic_binary(p: dict) -> str | None:
    if p["monotonic_cst"] is None:
        return None
    if p["max_arity"] > 2:
        return (f"monotonic_cst needs binary tests: max_arity={p['max_arity']} splits a numeric attribute in "
                "intervals a constraint cannot bound (give max_arity=2)")
    if p["param_grid"] is not None:
        return "monotonic_cst is not for param_grid yet: fit each setting with it"
    if p["postpone"] is not None:
        return (f"give monotonic_cst= or postpone=, not both (got postpone={p['postpone']!r}): a postponed "
                "attribute's bound does not know the constraints")
    return None


RULES = (_analytic_postpone, _sampled_postpone, _monotonic_binary, _one_pruning, _needs_cv)
"""Rules between parameters, checked after each parameter's own: each returns the error's message or None."""
