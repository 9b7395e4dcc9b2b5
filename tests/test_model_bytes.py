"""The models the learner grows on the Agrawal functions, byte for byte.

Each entry is the sha256 of a fit's bins and grown trees (the main tree before pruning and every fold
tree, as the model file writes them), in memory, on 4,000 rows of each Agrawal function (5% perturbation): a plain
binary gini forest with 3-fold CV, and a multi-way one (``max_arity=4``, entropy) with 2x2-fold CV. A
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
    "F1 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": 'dcef4191b2da87ef3b591115118d782666c3da681a361b1446adadde4427a72a',
    "F1 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": '69d028a1d5c6b5704fe052173132ee0125490d5d232eac28d928b097e41322ef',
    "F10 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '57e2e95e0f5b731bb5a5bef5b030528b42b05887a9980a2e7324e8433bdbe47e',
    "F10 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": 'e7ffe634a1769287f3d9c204e87ce0d9ed2fb6c5eb844df2e97553904a35ceea',
    "F2 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '7744108dcd813af40bf1c72d7e607374c0e13746cc24316d8100c1df71838503',
    "F2 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": 'ec7a138b2858cc40e0245b514b4340741ffccd2b66ecbbaaa3b8295de85f7001',
    "F3 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '34a4c550720915bc5d4c81b7b3d89244c28aa8612b420f1e2d5475feb793ecbc',
    "F3 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": 'b78191e0fd9bc64a112cffa9abac722cae291a6284ad1ad591602142f259c614',
    "F4 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '37ecac4443faea0ace596b524fddd3fae22d5931efcec9e6965d82a1c4983689',
    "F4 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": 'b0a716d50957cced1df758eadaf0483a807451a4ba66a70e1595fefae22763cd',
    "F5 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '3d4f4c5a2b62ef1ae3dcc3d90f7c68501c2cb752dc987ddcf2763460475031cd',
    "F5 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": '407b1568b9279529c34630ab4852da1a835e3037629f1d06cf1e4a20a60032f0',
    "F6 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": 'dc38a7219d5278654c4a68a4a31a93fa3a09829a3297370fe5a927397da61a03',
    "F6 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": '7f7e96f4bb5b3de8019c2d1f1f4d612a7ae0871423ddc413f8c0671d117a4c37',
    "F7 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": 'db261868736ea59228cdb430b0ef1405a8cf01b5ef738ed28751323976355ec9',
    "F7 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": '8f7a9d0987f3e754fd00cf7c2a443c4184ca4b1a2114326665e2a3d2f48eef5e',
    "F8 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '3c2c118ab44df00bdf0716e78c4fc5eaaf3b92159eafdf7f9ce45f37f88b96ef',
    "F8 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": '34e3db9200c6d7f96efb2c68ed147396ec94c6b15bfdda5ab51f4bb8d74f63c4',
    "F9 [('criterion', 'entropy'), ('cv', 2), ('max_arity', 4), ('max_depth', 4), ('repeats', 2)]": '423c80dd4f03c1c15f100b266f939d4cb43d989919ec8ba48d59e0c1f6fa7a9c',
    "F9 [('criterion', 'gini'), ('cv', 3), ('max_depth', 6)]": 'a0e30d5ff8fc579879a0024a9b0e2056b4068f4f6d6069e800fe156274df822f',
    "F1 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '668aaaf577f361cef63bb91dd385df7530edb7fbc4c4efa3b1b3cc5143a2cc80',
    "F2 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'b44f70819d6a1c297f1c56759214da11dcca34d957f6146246ea365135df0c52',
    "F3 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'e2f94e07b447a56011175e5d62cdcfd7a9523f7726b5248ae92ec366381197c9',
    "F4 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'b3094dd769eb30748b3b7d3daa7dc715d5b862895669a4c24be91b0de2fdac32',
    "F5 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '8a331701f13711af782c221d16dde43f4dd8e06297a81ecda1cddee8b56abfe6',
    "F6 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '53b894db4107e560fc2d5d59c824a2ee4c55d5e21839eee5f512645a39604eb7',
    "F7 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": '03d89f56f8bacac7300c6958bb4e9f4e8cc5caa5ae323926cd8f8f7eb3dfb8eb',
    "F8 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'dcc130866467fe09ca4cb463ce205ccd586b5d2c64d88a3c6f06929c7560db9f',
    "F9 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'dcde2ecf0f0d9b06b753f9557802e44d4dbbd6a32477d80d1d2670af3ce41c14',
    "F10 [('criterion', 'gain_ratio'), ('cv', 3), ('max_depth', 6)]": 'd58d5c1a7c707bb24bbf91f984295ddc8b5dc1bab767d59e371172d35b524d43',
}

CONFIGS = {"binary": dict(max_depth=6, cv=3, criterion="gini"),
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
