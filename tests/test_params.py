"""The parameters declared once (dasktree.params): the estimator's signature and docstring, the
command's options and --help, validation, the grow loop's frozen parameters and the model report
all agree with the declaration, and a parameter declared in that one place appears in all of them."""

from __future__ import annotations

import inspect
import io
import sys
from contextlib import redirect_stdout
from numbers import Integral

import numpy as np
import pandas as pd
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.cli.parser import build_parser, learning_values
from dasktree.errors import ParameterError
from dasktree.model.show_report import format_report
from dasktree.params import Interval, Param, declared, declared_params, defaults, install_estimator_params, validate
from dasktree.params.param import SAVED_LAYERS

PARAMS = {p.name: p for p in declared_params()}
CHECKED = [p for p in declared_params() if p.constraints is not None]
ON_CLI = [p for p in declared_params() if p.group is not None]


def _help() -> str:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit), pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "1000")  # no wrapping (argparse breaks lines after hyphens too)
        build_parser().parse_args(["fit", "--help"])
    return " ".join(out.getvalue().split())


def _fit_args(*extra: str):
    return build_parser().parse_args(["fit", "data", "--target", "y", "--out", "m.json", *extra])


@pytest.mark.parametrize("name", list(PARAMS))
def test_the_estimator_takes_every_declared_parameter_with_its_default(name):
    param = PARAMS[name]
    signature = inspect.signature(DaskTreeClassifier.__init__).parameters[name]
    assert signature.kind is inspect.Parameter.KEYWORD_ONLY and signature.default == param.default
    assert DaskTreeClassifier().get_params()[name] == param.default
    assert f"\n    {name} : {param.type_text()}, default " in DaskTreeClassifier.__doc__
    assert " ".join(param.doc.split()[:6]) in " ".join(DaskTreeClassifier.__doc__.split())


def test_the_signature_is_the_declaration_in_order():
    assert list(inspect.signature(DaskTreeClassifier.__init__).parameters)[1:] == list(PARAMS)


@pytest.mark.parametrize("param", ON_CLI, ids=lambda p: p.name)
def test_the_command_has_an_option_per_declared_parameter(param):
    args = _fit_args()
    assert learning_values(args)[param.name] == param.default
    words = _help()
    assert param.flag in words and " ".join(param.help.split()) in words
    if param.default not in (None, False) and "(default" not in param.help:
        assert f"(default: {param.default})" in words


@pytest.mark.parametrize("param", CHECKED, ids=lambda p: p.name)
def test_every_declared_parameter_is_validated_with_a_message_naming_it(param):
    bad = next(c.counterexample() for c in param.constraints if c is not None)
    with pytest.raises(ParameterError) as info:
        validate({param.name: bad})
    message = str(info.value)
    assert message.startswith(f"{param.name} must be ") and message.endswith(f"got {bad!r}"), message
    validate({param.name: param.default})


def test_the_frozen_parameters_are_the_declared_layers():
    settings = validate({"max_depth": 7, "min_samples_leaf": 3, "postpone": "rank:0.5", "max_histogram_mb": 64})
    grow, split = settings.grow, settings.grow.split
    for param in CHECKED:
        if param.layer == "grow":
            assert getattr(grow, param.name) == param.for_layer(settings[param.name])
        elif param.layer == "split":
            assert getattr(split, param.name) == param.for_layer(settings[param.name])
        else:
            assert not hasattr(grow, param.name) and not hasattr(split, param.name)
    assert (grow.max_depth, split.min_samples_leaf, split.postpone) == (7, 3, ("rank", 0.5))
    assert type(grow.max_histogram_mb) is float
    assert list(settings.saved) == [p.name for p in CHECKED if p.layer in SAVED_LAYERS] == list(defaults())


def test_validation_runs_once_per_fit(monkeypatch):
    calls = []
    for module in (sys.modules["dasktree.fit"], sys.modules["dasktree.estimator"]):
        monkeypatch.setattr(module, "validate", lambda values, _v=validate: calls.append(1) or _v(values))
    frame = pd.DataFrame({"a": np.arange(40.0), "y": np.arange(40) % 2})
    DaskTreeClassifier(max_depth=2).fit(frame, target="y")
    dasktree.fit(frame, target="y", max_depth=2)
    assert len(calls) == 2


def test_the_report_lists_every_saved_parameter_and_marks_the_changed_ones():
    frame = pd.DataFrame({"a": np.arange(60.0), "y": (np.arange(60) > 30).astype(int)})
    model = dasktree.fit(frame, target="y", max_depth=2, criterion="entropy")
    text = format_report(model, "m", defaults())
    for name, default in defaults().items():
        mark = "*" if name in ("max_depth", "criterion") else " "
        assert f"  {mark} {name:<22} " in text


@pytest.fixture
def one_more_parameter(monkeypatch):
    """``exhaustive_categories`` of the split search (a real field of SplitParams), declared in the
    one place a parameter is declared; the estimator is made again from the declaration."""
    param = Param("exhaustive_categories", 10, [Interval(Integral, 1, None)], "split", declared.LEARNING,
                  metavar="N", help="nominal attributes with at most N categories: every subset tried",
                  doc="Nominal attributes with at most this many categories have every subset tried.")
    monkeypatch.setattr(declared, "PARAMS", (*declared.PARAMS, param))
    install_estimator_params(DaskTreeClassifier, dasktree.estimator._DOC)
    yield param
    monkeypatch.undo()
    install_estimator_params(DaskTreeClassifier, dasktree.estimator._DOC)


def test_a_parameter_declared_in_one_place_reaches_everything(one_more_parameter):
    assert inspect.signature(DaskTreeClassifier.__init__).parameters["exhaustive_categories"].default == 10
    assert DaskTreeClassifier(exhaustive_categories=3).get_params()["exhaustive_categories"] == 3
    assert "exhaustive_categories : int, default 10" in DaskTreeClassifier.__doc__
    words = _help()
    assert "--exhaustive-categories N nominal attributes with at most N categories" in words
    assert "(default: 10)" in words
    assert validate(learning_values(_fit_args("--exhaustive-categories", "4"))).grow.split.exhaustive_categories == 4
    with pytest.raises(ParameterError, match="exhaustive_categories must be an integer >= 1, got 0"):
        DaskTreeClassifier(exhaustive_categories=0).fit(pd.DataFrame({"a": [1, 2], "y": [0, 1]}), target="y")
    frame = pd.DataFrame({"c": list("abcdefab") * 10, "y": [0, 1, 0, 1, 1, 0, 0, 1] * 10})
    model = DaskTreeClassifier(max_depth=2, exhaustive_categories=3).fit(frame, target="y").model_
    assert model.params["exhaustive_categories"] == 3
    assert "  * exhaustive_categories  3" in format_report(model, "m", defaults())


def test_the_added_parameter_is_gone_with_its_declaration():
    assert "exhaustive_categories" not in inspect.signature(DaskTreeClassifier.__init__).parameters
    with pytest.raises(ValueError, match="Invalid parameter 'exhaustive_categories'"):
        DaskTreeClassifier().set_params(exhaustive_categories=3)
