"""The suite's own settings (tests/conftest.py): hypothesis asserts nothing about time, so a loaded
machine cannot fail a property."""

from hypothesis import HealthCheck, settings


def test_properties_have_no_deadline_and_slow_generation_is_no_failure():
    """The profile every property starts from (a test's own @settings keeps what it does not name):
    no deadline, and no too_slow health check (with no deadline it fails a property whose first ten
    inputs took over 30 s to generate: the row-hash tables' first draw alone took 86 s at a load of 22)."""
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
    assert settings(max_examples=3).suppress_health_check == settings.default.suppress_health_check
