"""Rates from cumulative counters: restarts, gaps, zero Δt."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from analysis.rates import Rate, counter_rates, gauge_series, infer_interval_s


def test_rate_is_delta_over_delta_t_stamped_at_later_sample() -> None:
    rates = counter_rates([(0.0, 100), (10.0, 150), (20.0, 250)])
    assert rates == [Rate(10.0, 5.0), Rate(20.0, 10.0)]


def test_counter_going_down_starts_new_series_without_negative_rate_or_spike() -> None:
    samples = [(0.0, 1000), (10.0, 1100), (20.0, 5), (30.0, 25)]
    assert counter_rates(samples) == [Rate(10.0, 10.0), Rate(30.0, 2.0)]


def test_gap_longer_than_max_gap_yields_break_point() -> None:
    samples = [(0.0, 0), (10.0, 10), (100.0, 100), (110.0, 120)]
    rates = counter_rates(samples, max_gap_s=30)
    assert rates == [Rate(10.0, 1.0), Rate(100.0, None), Rate(110.0, 2.0)]


def test_zero_delta_t_is_skipped() -> None:
    samples = [(0.0, 0), (10.0, 10), (10.0, 11), (20.0, 30)]
    assert counter_rates(samples) == [Rate(10.0, 1.0), Rate(20.0, 2.0)]


def test_missing_values_are_bridged_when_gap_is_short() -> None:
    samples = [(0.0, 0), (10.0, None), (20.0, 40)]
    assert counter_rates(samples) == [Rate(20.0, 2.0)]
    assert counter_rates(samples, max_gap_s=15) == [Rate(20.0, None)]


def test_fewer_than_two_samples_give_no_rate() -> None:
    assert counter_rates([]) == []
    assert counter_rates([(0.0, 5)]) == []


def test_infer_interval_is_median_delta_t() -> None:
    assert infer_interval_s([0.0, 10.0, 20.0, 50.0, 60.0]) == 10.0
    assert infer_interval_s([0.0]) is None
    assert infer_interval_s([5.0, 5.0]) is None


def test_gauge_series_breaks_long_gaps() -> None:
    assert gauge_series([(0.0, 1.0), (10.0, None), (100.0, 3.0)], max_gap_s=30) == [
        (0.0, 1.0),
        (100.0, None),
        (100.0, 3.0),
    ]


@given(
    st.lists(
        st.tuples(
            st.floats(min_value=0.001, max_value=100), st.integers(min_value=-1000, max_value=1000)
        ),
        max_size=50,
    )
)
def test_rates_are_never_negative(steps: list[tuple[float, int]]) -> None:
    ts, value, samples = 0.0, 0, []
    for dt, dv in steps:
        ts += dt
        value = max(0, value + dv)
        samples.append((ts, value))
    for rate in counter_rates(samples, max_gap_s=50):
        assert rate.per_s is None or rate.per_s >= 0
