"""``dasktree plot`` of a saved regression model: the tree (leaves with their values) and ``--cv``
(MSE per fold, and rpart's plotcp: the CV MSE against alpha and leaves, the 1-SE line, the
chosen subtree on top)."""

import numpy as np
import pytest

from dasktree.cli import main
from dasktree.model.model import load
from dasktree import fit_regression
from dasktree.testing.data import mixed_frame

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    frame = mixed_frame(1500).drop(columns=["label"])
    frame["y"] = 2.0 * frame["x"].fillna(0.0) + (frame["colour"] == "red") * 3.0 + frame["k"] / 20.0
    out = {}
    for name, params in {"cv": {"max_depth": 5, "cv": 4, "prune": "cv"}, "plain": {"max_depth": 3}}.items():
        out[name] = str(root / f"{name}.json")
        fit_regression(frame, target="y", scheduler="inprocess", **params).save(out[name])
    return out


def test_cv_plot_draws_fold_mse_and_the_cp_table(models, tmp_path, capsys):
    out = tmp_path / "cv.svg"
    assert main(["plot", models["cv"], "--cv", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    svg = out.read_text()
    assert 'id="fold-mse"' in svg and 'id="cv-mse"' in svg
    assert svg.index('id="chosen"') > svg.index('id="cv-mse"')  # drawn over the error bars
    for words in ("held-out MSE", "CV MSE", "alpha", "leaves", "4-fold cross-validation", "min + 1 SE"):
        assert words in svg, words
    model = load(models["cv"])
    assert f"pooled MSE {model.report['cv']['mse']:.4g}" in svg
    png = tmp_path / "cv.png"
    assert main(["plot", models["cv"], "--cv", "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cv_plot_of_a_model_without_folds_is_refused_in_one_line(models, tmp_path, capsys):
    out = tmp_path / "cv.png"
    assert main(["plot", models["plain"], "--cv", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no cross-validation report" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_tree_plot_shows_the_leaves_values(models, tmp_path):
    model = load(models["plain"])
    out = tmp_path / "tree.svg"
    assert main(["plot", models["plain"], "--out", str(out), "--engine", "matplotlib"]) == 0
    svg = out.read_text()
    values = model.node_values()
    for i, test in enumerate(model.tree.tests):
        if test is None:
            assert f"{values[i]:.4g}" in svg
    assert "n=1500" in svg and "p=" not in svg


def test_tree_plot_with_graphviz(models, tmp_path):
    import shutil

    if shutil.which("dot") is None:
        pytest.skip("graphviz's dot is not installed")
    out = tmp_path / "tree.svg"
    assert main(["plot", models["plain"], "--out", str(out), "--engine", "graphviz"]) == 0
    assert "value: [" in out.read_text()


def test_cut_tree_plot_colours_by_value(models, tmp_path):
    out = tmp_path / "tree.png"
    assert main(["plot", models["cv"], "--out", str(out), "--max-depth", "2"]) == 0
    from matplotlib.image import imread

    pixels = imread(str(out))[..., :3].reshape(-1, 3)
    coloured = {tuple(np.round(p, 2)) for p in pixels if p.max() - p.min() > 0.1}
    assert len(coloured) > 3  # leaves on the viridis ramp, not one class colour


def test_cv_plot_of_a_model_repruned_without_fold_trees_draws_the_cp_table(models, tmp_path, capsys):
    """Re-pruned with no fold trees kept, the CV report is the cp table's row: no per-fold bars."""
    pruned = tmp_path / "pruned.json"
    assert main(["prune", models["cv"], "--mode", "cv-min", "--out", str(pruned)]) == 0
    assert "(the cp table's)" in capsys.readouterr().out
    out = tmp_path / "cv.svg"
    assert main(["plot", str(pruned), "--cv", "--out", str(out)]) == 0
    svg = out.read_text()
    assert 'id="cv-mse"' in svg and 'id="chosen"' in svg and 'id="fold-mse"' not in svg
    assert main(["show", str(pruned), "--format", "report"]) == 0
    assert "the cp table's CV MSE of this tree" in capsys.readouterr().out
