"""Pictures of a saved model: the tree, and the cross-validation results.

:func:`plot_tree` draws the tree with graphviz's ``dot`` where it is
installed (from :func:`dasktree.export.export_dot`), else with matplotlib:
each node a box (a test: its attribute and rows; a leaf: its class, rows and
probability), each edge labelled by its branch, leaves spread evenly in
depth-first order and every parent centred over its children, the leaves spaced so that
no two branch labels overlap (:func:`tree_figure`). SVG, PNG or PDF, by the name.
:func:`plot_cv` draws the accuracy of every fold tree and, when the model was
pruned with cross-validation (``report["prune"]["cp_table"]``), the CV error
against the tree size with one standard error bars and the 1-SE line, as
rpart's ``plotcp``. A regression tree's leaves show their value and are
coloured by it; its ``--cv`` picture is :func:`dasktree.model.plot_regression.plot_cv_regression`'s
(MSE per fold, and the CV MSE against alpha and leaves). matplotlib is the optional extra
``dasktree[plot]``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import numpy as np

from ..errors import DataError, InputError, ParameterError
from .model import Model

__all__ = ["plot_tree", "plot_cv", "tree_figure", "FORMATS"]

FORMATS = ("svg", "png", "pdf")


def _format(out: str) -> str:
    ext = os.path.splitext(os.fspath(out))[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise ParameterError(f"--out {out}: the image format comes from the name, .svg, .png or .pdf; "
                             f"got {ext or 'none'!r}")
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise InputError(f"--out {out}: directory {directory} does not exist")
    return ext


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("plots need matplotlib: pip install 'dasktree[plot]'") from None
    return plt


def _save(fig, out: str, ext: str) -> None:
    """Render to a temporary file beside ``out``, then rename: never a half-written image."""
    plt = _pyplot()
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=f".{ext}", dir=os.path.dirname(os.path.abspath(out)))
    os.close(fd)
    try:
        metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(ext)  # the same bytes every time
        fig.savefig(tmp, format=ext, bbox_inches="tight", metadata=metadata)
        _readable(tmp)
        os.replace(tmp, out)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)


def _readable(path: str) -> None:
    """The mode a plainly created file gets (a temporary file is private to its owner)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def plot_tree(model: Model, out: str, *, max_depth: int | None = None, engine: str = "auto") -> str:
    """Draw the model's tree to ``out`` (.svg, .png or .pdf); returns the engine used ("graphviz" or "matplotlib")."""
    ext = _format(out)
    dot = shutil.which("dot")
    if engine == "graphviz" and dot is None:
        raise ParameterError("--engine graphviz: graphviz's 'dot' is not installed (or use --engine matplotlib)")
    if engine in ("auto", "graphviz") and dot is not None and max_depth is None:
        from .text import export_dot

        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=f".{ext}", dir=os.path.dirname(os.path.abspath(out)))
        os.close(fd)
        try:
            subprocess.run([dot, f"-T{ext}", "-o", tmp], input=export_dot(model), text=True, check=True,
                           capture_output=True, timeout=300)
            _readable(tmp)
            os.replace(tmp, out)
        except subprocess.CalledProcessError as exc:
            raise DataError(f"graphviz's dot failed: {exc.stderr.strip().splitlines()[-1:]}") from None
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return "graphviz"
    _draw_tree(model, out, ext, max_depth)
    return "matplotlib"


def _layout(model: Model, max_depth: int | None) -> tuple[dict[int, tuple[float, int]], list[tuple[int, int, str]]]:
    """x (leaf order) and depth of each drawn node, and the edges with their branch labels."""
    from .text import branch_labels

    tree = model.tree
    pos: dict[int, tuple[float, int]] = {}
    edges: list[tuple[int, int, str]] = []
    next_x = [0.0]

    def visit(i: int, depth: int) -> float:
        test = tree.tests[i]
        if test is None or (max_depth is not None and depth >= max_depth):
            pos[i] = (next_x[0], depth)
            next_x[0] += 1
            return pos[i][0]
        xs = []
        for label, child in zip(branch_labels(test, model.spec), tree.children[i]):
            xs.append(visit(child, depth + 1))
            edges.append((i, child, label))
        pos[i] = (float(np.mean(xs)), depth)
        return pos[i][0]

    visit(0, 0)
    return pos, edges


def _node_texts(model: Model):
    """A function of (node, cut) giving the node's box text: a test's attribute and rows, a leaf's (or a
    cut subtree's) the task's text (every node's value computed once, by the task)."""
    tree = model.tree
    rows = model.task.node_rows(tree).tolist()
    leaf = model.task.box_texts(model)

    def text(i: int, cut: bool) -> str:
        test = tree.tests[i]
        if test is not None and not cut:
            return f"{model.spec.features[test.attribute].name}\nn={int(rows[i])}"
        return leaf(i) + ("\n(subtree)" if test is not None else "")

    return text


EDGE_FONT, NODE_FONT = 6.0, 7.0
"""Font sizes (points) of the edge labels and the node boxes, before any scaling down to fit."""
CHAR_INCHES = 0.62 / 72
"""A character's width per point of font size, an upper bound for helvetica / DejaVu Sans (inches)."""
ALONG = 0.7
"""Where a branch's label sits on its edge, from the parent (0) to the child (1)."""
MAX_INCHES = 200.0
"""The widest figure drawn; a wider tree is drawn smaller (fonts and all) to fit."""


def _edge_label(label: str, width: int = 28) -> str:
    """A branch label in lines of at most ``width`` characters (its ``or missing`` on a line of its own)."""
    import textwrap

    head, missing = (label[: -len(" or missing")], True) if label.endswith(" or missing") else (label, False)
    lines = textwrap.wrap(head, width, break_long_words=False, break_on_hyphens=False) or [head]
    return "\n".join(lines + (["or missing"] if missing else []))


def _text_inches(text: str, points: float) -> float:
    return max(len(line) for line in text.split("\n")) * points * CHAR_INCHES


def tree_figure(model: Model, max_depth: int | None = None):
    """The tree as a matplotlib figure: ``(fig, edge_texts, node_texts)``, the texts the artists drawn.

    Leaves are spread one slot apart in depth-first order and each parent centred over its
    children; a branch's label sits on its edge, :data:`ALONG` of the way to the child, so two labels
    of one level are ``ALONG`` slots apart at least (labels of different parents farther), and a slot
    is as wide as that takes for the widest label (long labels wrapped on two lines or more). A tree too wide for :data:`MAX_INCHES` is drawn smaller, fonts and all."""
    plt = _pyplot()
    pos, edges = _layout(model, max_depth)
    node_text = _node_texts(model)
    labels = [(parent, child, _edge_label(label)) for parent, child, label in edges]
    cut = {i: model.tree.tests[i] is None or (max_depth is not None and d >= max_depth) for i, (x, d) in pos.items()}
    texts = {i: node_text(i, cut[i]) for i in pos}
    # siblings' labels are ALONG of their children's distance apart (at least a slot): each fits in that
    slot = max([1.2] + [(_text_inches(t, EDGE_FONT) + 0.1) / ALONG for _, _, t in labels]
               + [_text_inches(t, NODE_FONT) + 0.3 for t in texts.values()])
    width = max(x for x, _ in pos.values()) + 1
    depth = max(d for _, d in pos.values()) + 1
    scale = min(1.0, (MAX_INCHES - 1) / (slot * width))
    level = 1.9
    fig, ax = plt.subplots(figsize=(slot * width * scale + 1, (level * depth + 0.6) * scale))
    edge_texts, node_texts = [], []
    for parent, child, label in labels:
        (x0, d0), (x1, d1) = pos[parent], pos[child]
        ax.plot([x0, x1], [-d0, -d1], color="0.6", linewidth=0.8, zorder=1)
        edge_texts.append(ax.text(x0 + ALONG * (x1 - x0), -(d0 + ALONG * (d1 - d0)), label, fontsize=EDGE_FONT * scale, ha="center", va="center",
                                  linespacing=1.0, bbox=dict(facecolor="white", edgecolor="none", pad=0.5), zorder=2))
    colour = model.task.leaf_colours(model, plt)
    for i, (x, d) in pos.items():
        leaf = cut[i]
        face = colour(i) if leaf else "white"
        node_texts.append(ax.text(x, -d, texts[i], fontsize=NODE_FONT * scale, ha="center", va="center", zorder=3,
                                  bbox=dict(boxstyle="round" if leaf else "square", facecolor=face,
                                            alpha=0.35 if leaf else 1.0, edgecolor="0.3")))
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(-depth + 0.6, 0.4)
    ax.axis("off")
    ax.set_title(f"{model.target}: {model.tree.n_leaves} leaves, depth {model.tree.max_depth}", fontsize=9 * scale)
    fig.subplots_adjust(left=0, right=1, bottom=0, top=1 - 0.3 / fig.get_figheight())
    return fig, edge_texts, node_texts


def _draw_tree(model: Model, out: str, ext: str, max_depth: int | None) -> None:
    fig, _, _ = tree_figure(model, max_depth)
    _save(fig, out, ext)


def plot_cv(model: Model, out: str) -> None:
    """The model's cross-validation as a picture (its task draws it) into ``out`` (SVG, PNG or PDF)."""
    model.task.plot_cv(model, out, _format(out))


def plot_cv_classification(model: Model, out: str, ext: str) -> None:
    """CV accuracy per fold tree, and (pruned models) CV error against leaves with the 1-SE line."""
    cv = model.report.get("cv")
    if not cv:
        raise InputError("--cv: the model has no cross-validation report: fit it with --cv K")
    table = (model.report.get("prune") or {}).get("cp_table") or []
    table = [row for row in table if row.get("cv_error") is not None]
    folds = cv.get("per_fold") or []  # none when re-pruned without fold trees (the cp table's estimate)
    panels = bool(folds) + bool(table)
    if not panels:
        raise InputError("--cv: the model keeps no per-fold accuracy nor CV errors in its cp table")
    plt = _pyplot()
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4), squeeze=False)
    if folds:
        _fold_panel(axes[0][0], cv, folds)
    if table:
        ax = axes[0][panels - 1]
        leaves = np.array([row["leaves"] for row in table])
        error = np.array([row["cv_error"] for row in table])
        se = np.array([row.get("cv_se") or 0.0 for row in table])
        ax.errorbar(leaves, error, yerr=se, marker="o", capsize=3, linewidth=1, gid="cv-error")
        best = int(np.argmin(error))
        ax.axhline(error[best] + se[best], color="black", linestyle=":", linewidth=1, label="min + 1 SE")
        chosen = (model.report.get("prune") or {}).get("alpha")
        for row in table:
            if chosen is not None and row["alpha"] == chosen:
                # drawn over the error bars and their markers, larger, so it is never hidden
                ax.plot([row["leaves"]], [row["cv_error"]], "o", color="tab:red", markersize=9,
                        markeredgecolor="black", zorder=10, label="chosen", gid="chosen")
        ax.set_xscale("log")
        ax.set_xlabel("leaves")
        ax.set_ylabel("CV error")
        ax.set_title("cost-complexity pruning")
        ax.legend(fontsize=8)
    _save(fig, out, ext)


def _fold_panel(ax, cv: dict, folds: list[dict]) -> None:
    accuracy = [f["accuracy"] if f["accuracy"] is not None else np.nan for f in folds]
    labels = [f"{f['repeat']}.{f['fold']}" if cv["repeats"] > 1 else str(f["fold"]) for f in folds]
    low = np.nanmin(accuracy) if np.isfinite(accuracy).any() else 0.0
    fold_panel(ax, accuracy, labels, cv["accuracy_mean"], f"mean {cv['accuracy_mean']:.4f} +/- {cv['accuracy_std']:.4f}",
               "fold" if cv["repeats"] == 1 else "repeat.fold", "held-out accuracy",
               f"{cv['repeats']} x {cv['folds']}-fold cross-validation", ylim=(max(0.0, low - 0.05), 1.0))


def fold_panel(ax, heights, labels: list[str], line: float, line_label: str, xlabel: str, ylabel: str, title: str,
               *, ylim=None, gid: str | None = None) -> None:
    """One bar per fold tree's held-out figure and the pooled (or mean) figure as a dashed line: the
    cross-validation panel of ``plot --cv`` for either task (its numbers given)."""
    ax.bar(range(len(labels)), heights, color="tab:blue", alpha=0.7, gid=gid)
    ax.axhline(line, color="black", linestyle="--", linewidth=1, label=line_label)
    ax.set_xticks(range(len(labels)), labels, fontsize=7)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower right")
