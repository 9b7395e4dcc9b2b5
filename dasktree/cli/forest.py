"""``dasktree fit --trees N``: a forest of N trees grown in the same passes, saved as one model file
(with ``--task regression``, or ``auto`` on a float target, a regression forest); and what the other
verbs do with a forest file: ``show`` (a summary, ``--format report``, ``json``), ``predict``,
``evaluate`` and ``export`` take the whole forest; ``show --format text|dot`` and ``plot`` take one
tree, a member (``--member M``); ``prune`` refuses it (its members are grown in full), exit 2.

The forest's options come from its declared parameters (:data:`dasktree.params.forest.FOREST_PARAMS`);
the members take the tree's learning options, but cross-validation, grids and pruning (a forest's
members are grown in full), which are refused with --trees (exit 2).
"""

from __future__ import annotations

import argparse

from ..errors import ParameterError
from .say import progress as _progress, say as _say

__all__ = ["add_forest", "cmd_fit_forest", "load_model_or_forest", "member_or_tree", "refuse_forest_options", "sampling_values",
           "show_forest"]

GROUP = "forest (--trees N: N trees grown in the same passes; docs/guide/forests.md)"


def add_forest(p: argparse.ArgumentParser) -> None:
    """--trees and the forest's other options (their help from the declared parameters)."""
    from ..params.forest import FOREST_PARAMS

    by_name = {param.name: param for param in FOREST_PARAMS}
    g = p.add_argument_group(GROUP)
    g.add_argument("--trees", type=int, default=None, metavar="N",
                   help=f"grow a forest of N trees (scikit-learn's n_estimators): {by_name['n_estimators'].help} "
                        "(default: one tree)")
    g.add_argument("--max-features", default=None, metavar="F",
                   help=f"{by_name['max_features'].help}; without --trees, the single tree's (scikit-learn's "
                        "max_features: drawn per node from --random-state) (default: sqrt with --trees, 1.0, every "
                        "attribute, for --task regression; all without --trees)")
    g.add_argument("--no-bootstrap", action="store_true",
                   help="every row once in every tree (default: each tree counts each row its Poisson(1) "
                        "multiplicity drawn from the row's content)")
    g.add_argument("--max-samples", default=None, metavar="S", help=f"{by_name['max_samples'].help}")
    g.add_argument("--oob", action="store_true", help=by_name["oob_score"].help)
    g.add_argument("--random-state", type=int, default=None, metavar="SEED",
                   help=f"{by_name['random_state'].help} (without --trees: of the single tree's --max-features) "
                        "(default: 0)")
    g.add_argument("--oob-permutation", type=int, default=None, metavar="R",
                   help="after the fit, permutation importances on the out-of-bag rows: each feature's values "
                        "shuffled R times (seeded by --random-state), the out-of-bag score lost kept in the model "
                        "file ('dasktree show' lists them); reads the rows into memory (default: none)")


def _number(text: str | None, flag: str):
    """``--max-features`` / ``--max-samples``: an int, a float fraction, or a name (as given)."""
    if text is None:
        return None
    if text == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if flag == "--max-features":
        return text
    raise ParameterError(f"{flag} must be a number, got {text!r}")


def forest_values(args, task: str = "classification") -> dict:
    """The forest's parameters and its members' from the command line, the members' learning parameters
    those of ``task``'s fit; an option of the single tree's that forests refuse, given, is bad usage (exit 2).
    Without ``--max-features`` the task's forest takes its own default (scikit-learn's: ``sqrt`` for
    classification, every attribute for regression)."""
    from ..params import declared_params
    from ..params.forest import NOT_FOR_FORESTS
    from .task import task_command

    learning = task_command(task)[0](args)
    defaults = {p.name: p.default for p in declared_params()}
    out = {k: v for k, v in learning.items() if k not in NOT_FOR_FORESTS or v != defaults.get(k)}
    if getattr(args, "grid", None):
        raise ParameterError("--grid is not for forests: their members are grown in full (--oob gives an estimate)")
    if getattr(args, "folds", None) is not None:
        raise ParameterError("--folds is for cross-validation, which forests do not grow (--oob gives an estimate)")
    if args.max_features is not None:
        out["max_features"] = _number(args.max_features, "--max-features")
    out.update(n_estimators=args.trees, bootstrap=not args.no_bootstrap,
               max_samples=_number(args.max_samples, "--max-samples"), oob_score=args.oob,
               random_state=0 if args.random_state is None else args.random_state)
    return out


def refuse_forest_options(args) -> None:
    """A forest's option given without ``--trees`` is bad usage (exit 2), not silently a single tree's fit."""
    given = [flag for flag, value in (("--no-bootstrap", args.no_bootstrap or None),
                                      ("--max-samples", args.max_samples), ("--oob", args.oob or None),
                                      ("--oob-permutation", args.oob_permutation))
             if value is not None]
    if given:
        raise ParameterError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for forests: give --trees N too "
                             "(a single tree uses every row)")


def sampling_values(args) -> dict:
    """``--max-features`` and ``--random-state`` given, as a single tree's ``max_features`` and ``random_state``."""
    out = {}
    if getattr(args, "max_features", None) is not None:
        out["max_features"] = _number(args.max_features, "--max-features")
    if getattr(args, "random_state", None) is not None:
        out["random_state"] = args.random_state
    return out


def cmd_fit_forest(args, columns) -> dict:
    """``dasktree fit --trees N``; ``columns``: the command's comma-separated list reader."""
    from ..engine.memory_plan import parse_memory_limit
    from ..forest_fit import FORESTS, fit_forest
    from ..io.outputs import check_file_out
    from ..model.task import task_named
    from .commands import verify  # here: commands imports this module
    from .task import resolve_task

    task = resolve_task(args)
    params = forest_values(args, task)
    FORESTS[task_named(task)].validate(params)  # bad usage (exit 2) first
    if args.oob_permutation is not None and (args.oob_permutation < 1 or not params["bootstrap"]):
        raise ParameterError(f"--oob-permutation {args.oob_permutation}: " + (
            "give 1 or more shuffles per feature" if args.oob_permutation < 1 else
            "without bootstrap (--no-bootstrap) no row is out of a member's bag"))
    parse_memory_limit(args.memory_limit)
    check_file_out(args.out, overwrite=args.overwrite)
    verify(args, args.data)
    model = fit_forest(args.data, None, task=task, target=args.target, features=columns(args.features) or None,
                       exclude=columns(args.exclude), nominal=columns(args.nominal), key=args.key,
                       scheduler=args.scheduler, cache=not args.no_cache and "auto", progress=_progress(args, task),
                       sample_weight=args.weight, memory_limit=args.memory_limit, checkpoint=args.checkpoint,
                       **params)
    if args.oob_permutation is not None:
        from ..forest_base import oob_permutation_of
        from ..io.sources import open_path

        oob_permutation_of(model, open_path(args.data), key=args.key, n_repeats=args.oob_permutation,
                           random_state=0 if args.random_state is None else args.random_state)
    model.save(args.out)
    if args.checkpoint:  # the forest is safe: the checkpoint has served
        from ..engine.checkpoint import remove_checkpoint

        remove_checkpoint(args.checkpoint)
    r = model.report
    measure = "accuracy" if model.task.predicts_classes else "R^2"
    oob = f", out-of-bag {measure} {r['oob_score']:.4f} over {r['oob_rows']} rows" \
        if r.get("oob_score") is not None else ""
    permutation = r.get("oob_permutation_importance")
    if permutation:
        importances = permutation["importances_mean"]
        best = importances.index(max(importances))
        oob += (f"; by permutation {model.features[best]!r} matters most ({permutation['scoring']} "
                f"{permutation['importances_mean'][best]:.4f} lost)")
    _say(args, f"wrote {args.out}: a forest of {r['members']} trees, {r['leaves']} leaves, depth up to "
               f"{r['max_depth']}, {r['passes']} passes over {r['rows_used']} rows{oob} in "
               f"{model.run['seconds']['total']:.2f}s")
    return {"model": args.out, "report": model.report, "run": {k: v for k, v in model.run.items()
                                                               if k not in ("oob_decision_function",
                                                                            "oob_prediction")}}


def load_model_or_forest(path, *, lazy: bool = False):
    """A model file as its model: a forest's (``"kind": "forest"``) as a
    :class:`~dasktree.model.forest_model.ForestModel`, any other as :func:`dasktree.model.model.load` reads it
    (``lazy``: its grown tree and fold trees read when first used, :meth:`~dasktree.model.model.Model.from_json`)."""
    import os

    from ..gc_pause import collector_paused
    from ..io.outputs import read_json_file
    from ..model.forest_model import KIND, ForestModel
    from ..model.model import Model

    with collector_paused():  # many small objects, no cycle (dasktree.model.model.load)
        document = read_json_file(path, "model")
        if isinstance(document, dict) and document.get("kind") == KIND:
            return ForestModel.from_json(document, where=os.fspath(path))
        return Model.from_json(document, where=os.fspath(path), lazy=lazy)


def member_or_tree(args, model, verb: str):
    """The tree a verb that takes one tree works on: a tree file's tree; a forest's member ``--member M``.
    A forest without ``--member`` (or ``--member`` of a tree file, or out of range) is bad usage (exit 2),
    said in one line with what to give instead."""
    from ..model.forest_model import ForestModel

    member = getattr(args, "member", None)
    if not isinstance(model, ForestModel):
        if member is not None:
            raise ParameterError(f"--member {member}: {args.model} is a single tree, not a forest")
        return model
    if member is None:
        raise ParameterError(f"{args.model} is a forest of {model.n_members} trees: 'dasktree {verb}' takes one "
                             f"tree; give --member M (0 to {model.n_members - 1})")
    if not 0 <= member < model.n_members:
        raise ParameterError(f"--member {member}: {args.model} is a forest of {model.n_members} trees "
                             f"(members 0 to {model.n_members - 1})")
    return model.member_model(member)


FOREST_FORMATS = ("text", "report", "json")
"""What ``dasktree show`` prints of a whole forest."""

MEMBER_FORMATS = ("text", "dot", "json")
"""What ``dasktree show FOREST --member M`` prints of a member: its tree, as a tree's (json: a tree's model file)."""


def show_forest(args, forest) -> str:
    """``dasktree show FOREST``: the summary (text), the report, or the file indented (json); a tree's
    other formats are a member's (``--member M``) and refused with one line for the whole forest."""
    from ..forest_regressor import FOREST_REGRESSION_PARAMS
    from ..model.forest_show import format_forest_report, format_forest_summary
    from ..params import task_defaults
    from ..params.forest import FOREST_PARAMS

    if args.format not in FOREST_FORMATS:
        raise ParameterError(f"--format {args.format}: {args.model} is a forest of {forest.n_members} trees; "
                             f"show it as {', '.join(FOREST_FORMATS)}, or a member's tree with --member M")
    if args.format == "report":
        forest_params = FOREST_PARAMS if forest.task.predicts_classes else FOREST_REGRESSION_PARAMS
        defaults = {**task_defaults(forest.task), **{p.name: p.default for p in forest_params}}
        return format_forest_report(forest, args.model, defaults)
    if args.format == "json":
        return forest.dumps(indent=1) + "\n"
    return format_forest_summary(forest, args.model)
