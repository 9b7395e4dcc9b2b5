"""The tree picture: no branch label overlaps another, nor a node's box, at any depth (they did
from depth 3: ``pixel_2_5 <= 0pixel_2_5 > 0.5 or missing``), for both tasks, also when the tree is
too wide and is drawn smaller; PDF is written as SVG and PNG are."""

import dataclasses

import pytest

from dasktree.cli import main
from dasktree.testing.exports import full_binary_model

pytest.importorskip("matplotlib")

from dasktree.model.plot import tree_figure  # noqa: E402


def _long_names(model, prefix="a_rather_long_feature_name_"):
    features = tuple(dataclasses.replace(f, name=f"{prefix}{j}") for j, f in enumerate(model.spec.features))
    return dataclasses.replace(model, spec=dataclasses.replace(model.spec, features=features))


def _boxes(fig, texts):
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    return [t.get_bbox_patch().get_window_extent(renderer) if t.get_bbox_patch() else t.get_window_extent(renderer)
            for t in texts]


def _overlaps(a, b):
    """Pairs (i, j) of the boxes ``a`` and ``b`` (lists of extents) that overlap; ``b`` None: within ``a``."""
    import numpy as np

    A = np.array([[e.x0, e.x1, e.y0, e.y1] for e in a])
    B = A if b is None else np.array([[e.x0, e.x1, e.y0, e.y1] for e in b])
    hit = ((A[:, None, 0] < B[None, :, 1]) & (B[None, :, 0] < A[:, None, 1])
           & (A[:, None, 2] < B[None, :, 3]) & (B[None, :, 2] < A[:, None, 3]))
    if b is None:
        hit = np.triu(hit, 1)
    return list(zip(*np.nonzero(hit)))


@pytest.mark.parametrize("task, depth, max_depth", [("classification", 5, None), ("regression", 5, None),
                                                    ("classification", 7, None), ("classification", 7, 4)])
def test_no_label_overlaps_another_or_a_box(task, depth, max_depth):
    """Depth 7 (128 leaves) is wider than the widest figure: drawn smaller, still apart."""
    import matplotlib.pyplot as plt

    model = _long_names(full_binary_model(depth, task=task))
    fig, edges, nodes = tree_figure(model, max_depth)
    try:
        labels, boxes = _boxes(fig, edges), _boxes(fig, nodes)
        shown = 2 ** ((max_depth if max_depth is not None else depth) + 1) - 1
        assert len(boxes) == shown and len(labels) == shown - 1
        assert any("\nor missing" in t.get_text() for t in edges)
        assert _overlaps(labels, None) == []
        assert _overlaps(labels, boxes) == []
        assert _overlaps(boxes, None) == []
        assert (0, 0) in _overlaps(boxes[:2], boxes[:2])  # the check sees an overlap where there is one
    finally:
        plt.close(fig)


def test_plot_writes_pdf(tmp_path, capsys):
    path = tmp_path / "m.json"
    full_binary_model(3).save(path)
    out = tmp_path / "tree.pdf"
    assert main(["plot", str(path), "--out", str(out), "--engine", "matplotlib"]) == 0
    first = out.read_bytes()
    assert first[:5] == b"%PDF-"
    assert main(["plot", str(path), "--out", str(out), "--engine", "matplotlib", "--overwrite"]) == 0
    assert out.read_bytes() == first  # no creation date: the same bytes every time
    assert main(["plot", str(path), "--out", str(tmp_path / "tree.jpg")]) == 2
    assert ".svg, .png or .pdf" in capsys.readouterr().err
