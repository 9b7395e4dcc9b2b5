"""An S3 object store over its real protocol: a moto server on 127.0.0.1, read through s3fs."""

import numpy as np
import pytest

from dasktree import DaskTreeClassifier
from dasktree.testing import mixed_frame
from dasktree.testing.s3 import s3_server

pytestmark = pytest.mark.cluster
pytest.importorskip("moto.server")
s3fs = pytest.importorskip("s3fs")


@pytest.fixture(scope="module")
def s3_endpoint():
    with s3_server() as endpoint:
        yield endpoint


def test_fit_from_s3_url_equals_local_fit(tmp_path, s3_endpoint, cluster_client):
    options = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": s3_endpoint,
                                                                           "region_name": "us-east-1"}}
    fs = s3fs.S3FileSystem(**options)
    fs.call_s3("create_bucket", Bucket="dasktree-test")
    frame = mixed_frame(2000, seed=4)
    from dasktree.testing import write_dataset

    local = write_dataset(frame, tmp_path / "data", n_files=3)
    fs.put(local, "dasktree-test/data", recursive=True)
    assert len(fs.ls("dasktree-test/data")) == 3
    remote = DaskTreeClassifier(client=cluster_client, max_depth=4).fit(
        "s3://dasktree-test/data", target="label", storage_options=options)
    reference = DaskTreeClassifier(max_depth=4).fit(frame.drop(columns=["label"]), frame["label"])
    assert remote.model_.dumps() == reference.model_.dumps()
    np.testing.assert_array_equal(remote.predict(frame), reference.predict(frame))
