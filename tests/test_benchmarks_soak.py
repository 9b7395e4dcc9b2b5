"""The soak's memory drift: a growth per fit shows, the configurations' different footprints do not."""

import random

from hypothesis import given, settings, strategies as st

from benchmarks.soak import MIN_READINGS, drift_of, warmed

FOOTPRINT = {"f7": 0.0, "f2-cv": 30e6, "wide": 12e6}  # what a worker holds after each configuration


def readings(n: int, growth: float, noise: float, seed: int) -> list:
    rng, names = random.Random(seed), list(FOOTPRINT)
    return [(i, names[i % 3], 150e6 + FOOTPRINT[names[i % 3]] + growth * i + rng.gauss(0, noise)) for i in range(n)]


def test_a_worker_whose_memory_does_not_grow_has_no_drift_whatever_it_served_last():
    flat = readings(61, 0.0, 0.0, 0)
    assert abs(drift_of(flat)["trend"]) < 1e-12 and drift_of(flat)["endpoints"] == 0.0
    # the last reading (after an f7 fit) against the third (after a wide one) would read as a fall of 7%
    assert flat[-1][2] / flat[2][2] - 1 < -0.07


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_a_growth_per_fit_shows_as_the_trend_noise_alone_does_not(seed):
    grown = drift_of(readings(60, 0.5e6, 3e6, seed))  # 0.5 MB a fit: about 30 MB over 60 fits, 18%
    assert 0.12 < grown["trend"] < 0.24
    assert abs(drift_of(readings(60, 0.0, 3e6, seed))["trend"]) < 0.05


def test_a_worker_read_too_few_times_says_nothing():
    assert drift_of(readings(MIN_READINGS + 1, 0.0, 0.0, 0)) is None  # its first two: before it served all three
    assert drift_of(readings(MIN_READINGS + 2, 0.0, 0.0, 0)) is not None


def test_a_new_workers_warm_up_is_no_drift():
    """A fresh worker's first reading (an F7 fit, before it loaded what the CV and wide fits need) is far
    below the rest: the readings count from the first taken once it has served every configuration."""
    flat = readings(30, 0.0, 0.0, 0)
    started = [(flat[0][0], flat[0][1], flat[0][2] * 0.45), *flat[1:]]
    assert warmed(started) == flat[2:]
    assert abs(drift_of(started)["trend"]) < 1e-12 and drift_of(started)["endpoints"] == 0.0
    grown = drift_of([*started[:2], *readings(60, 0.5e6, 0.0, 0)[2:]])
    assert 0.12 < grown["trend"] < 0.24  # a growth after the warm-up still shows
