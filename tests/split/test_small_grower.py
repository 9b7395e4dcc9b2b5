"""The small-node grower's bins (:func:`dasktree.split.small_grower.grow_jobs`): a numeric attribute's cut
across empty bins up to the last bin is the level search's centred cut, read in place or moved, and bins
that do not fit their widths are refused rather than read past their end."""

import numpy as np
import pytest

from dasktree.split import small_grower as kernel
from dasktree.split.search import _centered_cut

# one numeric attribute of width 6 (bins 1..5), its values uneven: the middle of bins 1 and 5 is 5.0
VALUES = np.array([1.0, 2.0, 3.0, 4.0, 9.0])
UPPER = (VALUES[:-1] + VALUES[1:]) / 2  # 1.5 2.5 3.5 6.5


def grow(upper, values, own=0):
    # five rows of class 0 in bin 1, five of class 1 in the last bin (5): bins 2..4 empty
    codes = np.array([[1] * 5 + [5] * 5], dtype=np.uint8)
    y = np.array([0] * 5 + [1] * 5, dtype=np.int32)
    n = y.size
    return kernel.grow_jobs(kernel.CLASSIFY, codes, y, None, np.arange(n, dtype=np.int64), np.zeros(n, dtype=bool),
                            np.array([0, n], dtype=np.int64), np.zeros(1, dtype=np.int64), offsets=np.array([0]),
                            widths=np.array([6]), numeric=np.array([True]), upper=[upper], values=[values],
                            n_classes=2, criterion=kernel.GINI, own=own)


@pytest.mark.parametrize("own", [0, 1])
def test_a_cut_across_empty_bins_up_to_the_last_is_the_level_search_centred_cut(own):
    hist = np.zeros((5, 2), dtype=np.int64)
    hist[0, 0], hist[4, 1] = 5, 5
    want = _centered_cut(hist, 1, UPPER, VALUES)
    assert want == 3  # the largest edge at or below the middle, 5.0: 3.5, after bin 3
    nodes = grow(UPPER, VALUES, own)
    assert nodes["attribute"][0] == 0
    assert nodes["cut"][0] == want


@pytest.mark.parametrize("upper, values", [(UPPER, VALUES[:-1]), (UPPER[:-1], VALUES), (UPPER, None)])
def test_bins_that_do_not_fit_their_widths_are_refused(upper, values):
    """One value fewer than bins was read past its end by the centred cut (a memory read choosing among
    cuts of equal gain)."""
    with pytest.raises(ValueError, match="attribute 0 of width 6"):
        grow(upper, values)
