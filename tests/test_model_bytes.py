"""The models the learner grows on the Agrawal functions, byte for byte.

Each entry is the sha256 of a fit's bins and grown trees (the main tree before pruning and every fold
tree, as the model file writes them), in memory, on 4,000 rows of each Agrawal function (5% perturbation): a plain
binary forest with 3-fold CV, and a multi-way one (``max_arity=4``, entropy) with 2x2-fold CV. A
change of layout, names or speed must leave every hash as it is; a change meant to make the learner
choose differently changes them, and says so in its commit.
"""

from __future__ import annotations

import hashlib
import json

import pytest

import dasktree
from dasktree.datasets import agrawal

EXPECTED = {
    "F1 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '1468516057170b45d07e48d9d304b9fe1ddb62d3f54d1acd51c3378cc67ba8c7',
    "F1 [('cv', 3), ('max_depth', 6)]": 'd3cc1a83d4f39ef41d122c8068afc95dbe17b2d982d5e8ec67c8a706a69f4907',
    "F10 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": 'c4fcee3a872fa86a982ffe2a165bb961f096dd07d699b7897bc1b0b9b98bb569',
    "F10 [('cv', 3), ('max_depth', 6)]": '638c21995bbb8855184e880b48243f1e836cb7288a71e616aba63bbf57b7956f',
    "F2 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '056dd65613c875121d1d020b0f40ad4455d143ae75bb5b302bbfcbcb921fd8fc',
    "F2 [('cv', 3), ('max_depth', 6)]": '376c97de9ffc2f2c7e21e112b35d2cbd5b15b1385979a10a891b9e43c56fb3e8',
    "F3 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '7f39632c54c412119127c74b5ff52cd0b1ac8d84f5f64de09a535dee5f2c7e19',
    "F3 [('cv', 3), ('max_depth', 6)]": '4a23a0462d065db390fbd8c610db545bdadfaf19962a032f1144dbfc7150966f',
    "F4 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '12e6697f8b341774bb1e64e69646ede55c2a3e807c2c77dae6987b2b132317c7',
    "F4 [('cv', 3), ('max_depth', 6)]": '2f6676114412fc9e61daada6b555af5432cfb605b10b2e15ed8915640efb1f8c',
    "F5 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '74fda61eafd2611ddd4e802ef7770cee74f251e1836b1e5ac8dc9be7ed663ac5',
    "F5 [('cv', 3), ('max_depth', 6)]": '346b4ac4fe2d21eefd0572a5787cc331fe3b598f579ba49aeaa6f56a74bc4411',
    "F6 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": 'e99eaa90d4580becfecdbe9ff232ad7877a115e14ba1d29c9af09c5e174e111d',
    "F6 [('cv', 3), ('max_depth', 6)]": 'ff03bd1bb4ebffc305cc3e6390d6fe41f4946b6d98e0240433f5ede4eb66dd8e',
    "F7 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": 'bf5f8f8ba41b1497792848da4d9ec378d8bb11dc496b13e9bf831624d69d5346',
    "F7 [('cv', 3), ('max_depth', 6)]": 'ac548959803e7c163754a9fe26b27d20de324264b5e057b2cbd5e099dc7cab9c',
    "F8 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": 'ae9f1e6a33f8fe5be561256390247a4c7a90be82441a85db77344f37cd3d9240',
    "F8 [('cv', 3), ('max_depth', 6)]": 'cf014afe79f605507d87906d811e921e7baa516f51aa206211b993fb5144d491',
    "F9 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '71f03324e71c8c5cc3c966b3a283c270bdf839371c17c8d1ba7045fa13539618',
    "F9 [('cv', 3), ('max_depth', 6)]": '4cf9779b7d763b3ddb9c1abc1f5719a22922ba1e9e5eb48f120a66449e9df415',
    "F1 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'c7db4060e27b0517687b4ee92c922c4a11f9cfd8694a3b416977f2ef3804e7d8',
    "F2 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '9e939c3ffae53f7dccb8f8a89a04d4fb7f1d33530e75b23d5095d74dd00dc087',
    "F3 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'e18270fb65b31d7d45ea1fa19bedc9fa23758b3648d3e389dd8617b28418efed',
    "F4 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'f166906fe384ee6c4369272e125a5297e7e24e19ff13ab7ae99160136d83c08c',
    "F5 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '249fba95be9ba0c45daa2e7ce77345dac8d44bd401c765749fe9edc80ca97e28',
    "F6 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '62b7b7ebbd741bfac1ab839af122fb93e01cda29ddd536db5e5211fa3fc30f89',
    "F7 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'e410b516d394dc1c6a94c7c759ced997087967692fad1d9f695881c5addd38ab',
    "F8 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '2356abdfcb8268f26060021c8e0fd9f4f4fc763bd61aa69d66bf0dc099c2bf82',
    "F9 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '3e2358891c297ff9621a056c32ee66cc18c521a6c14fa0b7e31bf67bd6406deb',
    "F10 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '41d419ccea32fb3db09071e42405072a6f44650ff6d1f3a80840d6f8c41fde5f',
}

CONFIGS = {"binary": dict(max_depth=6, cv=3),
           "gain ratio": dict(max_depth=6, cv=3, criterion="gain_ratio"),
           "multiway": dict(max_depth=4, max_arity=4, criterion="entropy", cv=2, repeats=2)}


def _key(function: int, params: dict) -> str:
    return f"F{function} {sorted(params.items())}"


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("function", range(1, 11))
def test_agrawal_models_are_unchanged(function, config):
    params = CONFIGS[config]
    frame = agrawal.generate(4000, function=function, perturbation=0.05, seed=function)
    model = dasktree.fit(frame, target=agrawal.TARGET, nominal=["car", "zipcode"], keep_fold_trees=True, **params)
    trees = [model.grown_tree.to_json()] + [t.to_json() for t in model.fold_trees]  # as grown, before pruning
    text = json.dumps({"bins": model.spec.to_json(), "trees": trees}, sort_keys=True)
    assert hashlib.sha256(text.encode()).hexdigest() == EXPECTED[_key(function, params)]
