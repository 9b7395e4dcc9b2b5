import numpy as np
import pytest

from dasktree.testing.regression_data import regression_frame


@pytest.fixture
def frame():
    return regression_frame()


@pytest.fixture
def dataset(tmp_path, frame):
    """The frame as a Parquet dataset of 5 files."""
    path = tmp_path / "data"
    path.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 5)):
        part = frame.iloc[rows]
        part.to_parquet(path / f"part-{i}.parquet", index=False)
    return str(path)
