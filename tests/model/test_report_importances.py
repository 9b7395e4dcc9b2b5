"""``dasktree show --format report`` lists the feature importances Python gives
(``feature_importances_``), largest first, for both tasks."""

import numpy as np
import pandas as pd
import pytest

from dasktree import DaskTreeClassifier
from dasktree.cli import main
from dasktree import DaskTreeRegressor


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_report_lists_the_importances(task, tmp_path, capsys):
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"strong": rng.normal(size=800), "weak": rng.normal(size=800),
                      "unused": np.zeros(800), "colour": rng.choice(["r", "g", "b"], size=800)})
    signal = 2 * X["strong"] + 0.4 * X["weak"] + (X["colour"] == "r") + rng.normal(scale=0.3, size=800)
    est = DaskTreeClassifier(max_depth=4).fit(X, signal > 0.5) if task == "classification" \
        else DaskTreeRegressor(max_depth=4).fit(X, signal)
    path = tmp_path / "m.json"
    est.save(path)
    assert main(["show", str(path), "--format", "report"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("feature importances"))
    shown = {}
    for line in lines[start + 1:]:
        if not line.strip() or not line.startswith("  ") or line.strip().startswith("("):
            break
        name, value = line.split()
        shown[name] = float(value)
    importances = dict(zip(est.model_.features, est.feature_importances_))
    assert shown == {k: pytest.approx(round(v, 4), abs=5e-5) for k, v in importances.items() if v > 0}
    assert list(shown) == sorted(shown, key=lambda k: -importances[k]) and list(shown)[0] == "strong"
    assert "unused" not in shown
    assert lines[start + 1 + len(shown)] == f"  ({4 - len(shown)} of 4 features in no test)"
