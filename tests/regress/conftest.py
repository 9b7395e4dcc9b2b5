import pytest

from dasktree.testing.data import regression_frame, write_dataset


@pytest.fixture
def frame():
    return regression_frame()


@pytest.fixture
def dataset(tmp_path, frame):
    """The frame as a Parquet dataset of 5 files."""
    return write_dataset(frame, tmp_path / "data", n_files=5)
