"""``dasktree prune`` of a regression model (:func:`dasktree.regress.reprune.reprune`): the model pruned
anew from its grown tree and cp table, no pass; written atomically, a line with the leaves and the
cross-validated MSE."""

from __future__ import annotations

__all__ = ["cmd_prune_regression"]


def cmd_prune_regression(args, model) -> dict:
    """``args``: the ``prune`` verb's (``--out`` already checked); ``model``: the loaded regression model."""
    from ..errors import DaskTreeError, DataError
    from ..io.outputs import atomic_write_text
    from ..regress.reprune import reprune

    try:  # the trees are checked when loaded; the report's cp table and CV section are read only here
        pruned = reprune(model, args.alpha, mode=args.mode)
    except DaskTreeError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise DataError(f"{args.model}: the model's report is damaged ({type(exc).__name__}: {exc})") from None
    atomic_write_text(args.out, pruned.dumps())
    r = pruned.report
    cv = r.get("cv")
    said = ""
    if cv:
        source = " (the cp table's)" if cv.get("estimated_from") == "cp table" else ""
        said = f", cross-validated MSE {cv['mse']:.6g}, R^2 {cv['r2']:.4f}{source}"
    if not args.json:
        print(f"wrote {args.out}: {r['prune']['mode']} pruning at alpha {r['prune']['alpha']:.6g}, "
              f"{r['prune']['leaves_grown']} -> {r['prune']['leaves']} leaves{said}")
    return {"model": args.out, "prune": {k: v for k, v in r["prune"].items() if k != "cp_table"},
            "leaves": r["prune"]["leaves"], "cv": None if not cv else cv["mse"]}
