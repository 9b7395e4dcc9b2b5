"""A forest's bags follow the rows: one Parquet file, seven files of other row groups (also streamed), a pandas frame,
a dask frame, the estimator's X, y and a real 2-process LocalCluster all give one model, byte for byte."""

import dask.dataframe as dd
import pytest

import dasktree
from dasktree import DaskForestClassifier
from dasktree.testing import mixed_frame, write_dataset

FRAME = mixed_frame(3000, seed=4)
PARAMS = dict(n_estimators=5, max_depth=6, random_state=2, oob_score=True)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("forest-rows")
    return {"one file": write_dataset(FRAME, root / "one", n_files=1, row_group_size=1000),
            "seven files": write_dataset(FRAME, root / "seven", n_files=7, row_group_size=317)}


def _models(datasets, **where) -> dict[str, str]:
    out = {name: dasktree.fit_forest(path, target="label", part_rows=700, **where, **PARAMS).dumps()
           for name, path in datasets.items()}
    out["dask frame"] = dasktree.fit_forest(dd.from_pandas(FRAME, npartitions=5), target="label", **where,
                                            **PARAMS).dumps()
    return out


def test_the_same_rows_in_every_form_give_one_forest(datasets):
    models = _models(datasets)
    models["pandas frame"] = dasktree.fit_forest(FRAME, target="label", **PARAMS).dumps()
    models["streamed, cache=False"] = dasktree.fit_forest(
        datasets["seven files"], target="label", cache=False, memory_limit="512MB", part_rows=700,
        **PARAMS).dumps()
    X, y = FRAME.drop(columns=["label"]), FRAME["label"]
    models["estimator X, y"] = DaskForestClassifier(**PARAMS).fit(X.assign(label=y), target="label").model_.dumps()
    assert len(set(models.values())) == 1, {name: hash(text) for name, text in models.items()}
    assert '"oob_score"' in models["one file"]


@pytest.mark.cluster
def test_on_a_cluster_the_forest_is_the_in_process_one(datasets, cluster_client):
    expected = dasktree.fit_forest(FRAME, target="label", **PARAMS).dumps()
    models = _models(datasets, client=cluster_client)
    assert set(models.values()) == {expected}, sorted(models)
