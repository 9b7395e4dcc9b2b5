"""An S3-protocol store that fails under a fit: moto's server on 127.0.0.1 behind a fault-injecting
proxy (:mod:`dasktree.testing.faulty_store`).

Throttling and 5xx answers for a while are retried with backoff and the model is unchanged; a
store down past the retry budget is a transient error naming the file (exit 75); a file that
vanishes or changes between pass 0 and a later pass is a data error naming it (exit 1), never
a wrong model.
"""


import pytest

from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.engine.progress import Progress
from dasktree.errors import DataError, TransientError, exit_code
from dasktree.testing.faulty_store import FaultyProxy
from dasktree.testing.s3 import s3_server

pytestmark = pytest.mark.cluster
pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")

BUCKET = "dasktree-faults"
PARAMS = dict(max_depth=5)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """(upstream endpoint, local copy of the data): 4 files of Agrawal rows in s3://BUCKET/data."""
    with s3_server() as endpoint:
        local = tmp_path_factory.mktemp("store") / "data"
        agrawal.write_parquet(str(local), 20000, n_files=4, function=7, perturbation=0.05, seed=2)
        fs = s3fs.S3FileSystem(**_options(endpoint))
        fs.call_s3("create_bucket", Bucket=BUCKET)
        fs.put(str(local), f"{BUCKET}/data", recursive=True)
        yield endpoint, local


@pytest.fixture(scope="module")
def reference(store):
    return DaskTreeClassifier(scheduler="threads", **PARAMS).fit(str(store[1]), target="class").model_.dumps()


@pytest.fixture
def proxy(store):
    with FaultyProxy(store[0]) as p:
        yield p


def _options(endpoint: str) -> dict:
    return {"key": "testing", "secret": "testing", "skip_instance_cache": True,
            "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}


@pytest.mark.parametrize("status, code", [(503, "SlowDown"), (500, "InternalError")])
def test_a_store_failing_for_a_while_gives_the_same_model(store, reference, proxy, status, code):
    """More failures in a row than the S3 client retries itself (five attempts)."""
    proxy.fail(12, status, code)
    clf = DaskTreeClassifier(scheduler="threads", **PARAMS).fit(f"s3://{BUCKET}/data", target="class",
                                                                  storage_options=_options(proxy.endpoint))
    assert proxy.faulted == 12
    assert clf.model_.dumps() == reference


def test_a_store_down_past_the_retry_budget_is_transient_naming_the_file(store, proxy, monkeypatch):
    monkeypatch.setattr("dasktree.io.retries.RETRY_SECONDS", 3.0)
    proxy.down(match="part-00002")  # the listing answers; one file's reads do not
    with pytest.raises(TransientError, match=r"part-00002\.parquet: the store kept failing for 3 s") as caught:
        DaskTreeClassifier(scheduler="threads", **PARAMS).fit(f"s3://{BUCKET}/data", target="class",
                                                              storage_options=_options(proxy.endpoint))
    assert exit_code(caught.value) == 75


class ChangeAtLevel(Progress):
    """Changes a file of the store when level pass 1 starts: after pass 0 read it."""

    def __init__(self, change):
        super().__init__(enabled=False)
        self.change, self.changed = change, False

    def start(self, label, total):
        super().start(label, total)
        if "level 1" in label and not self.changed:
            self.change()
            self.changed = True


@pytest.mark.parametrize("how", ["vanishes", "changes"])
def test_a_file_changed_under_the_fit_is_a_data_error_naming_it(store, cluster_client, tmp_path, how):
    """Without the cache every pass reads the files anew (so does a pass redone after a lost worker)."""
    endpoint, local = store
    fs = s3fs.S3FileSystem(**_options(endpoint))
    fs.put(str(local), f"{BUCKET}/{how}", recursive=True)
    victim = f"{BUCKET}/{how}/part-00001.parquet"
    if how == "vanishes":
        change = lambda: fs.rm(victim)  # noqa: E731
    else:
        other = tmp_path / "other"
        agrawal.write_parquet(str(other), 20000, n_files=4, function=7, perturbation=0.05, seed=3)
        change = lambda: fs.put(str(other / "part-00001.parquet"), victim)  # noqa: E731
    progress = ChangeAtLevel(change)
    with pytest.raises(DataError, match=r"part-00001\.parquet: the file .* the data changed under the fit") as caught:
        DaskTreeClassifier(client=cluster_client, cache=False, progress=progress, **PARAMS).fit(
            f"s3://{BUCKET}/{how}", target="class", storage_options=_options(endpoint))
    assert progress.changed
    assert exit_code(caught.value) == 1
