"""Downsampling: round widths, spikes survive, rollups merge exactly like raw points."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.downsample import (
    RollupRow,
    bucket_width_s,
    choose_resolution,
    downsample,
    merge_rollup_buckets,
    rollup,
)

DAY = 86400


def test_width_is_smallest_round_width_that_fits() -> None:
    assert bucket_width_s(0, 99, 100) == 1
    assert bucket_width_s(0, 100, 100) == 5  # 101 one-second buckets would be too many
    assert bucket_width_s(0, 3600, 100) == 60
    assert bucket_width_s(0, 30 * DAY, 1000) == 3600
    assert bucket_width_s(0, 365 * DAY, 100) == 4 * DAY


def test_buckets_are_aligned_to_round_boundaries() -> None:
    ts = [float(t) for t in range(7, 70)]
    b = downsample(ts, [1.0] * len(ts), start=7, end=69, points=10)
    assert b.width_s == 10
    assert b.t == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    assert b.count == [3, 10, 10, 10, 10, 10, 10]


def test_min_avg_max_count_per_bucket_and_none_ignored() -> None:
    ts = [0.0, 1.0, 2.0, 3.0, 10.0, 11.0]
    values = [1.0, 5.0, None, 3.0, 2.0, 4.0]
    b = downsample(ts, values, start=0, end=19, points=2)
    assert b.width_s == 10
    assert b.t == [0.0, 10.0]
    assert b.min == [1.0, 2.0]
    assert b.max == [5.0, 4.0]
    assert b.avg == [3.0, 3.0]
    assert b.count == [3, 2]


def test_empty_buckets_are_omitted_and_out_of_range_points_dropped() -> None:
    ts = [0.0, 5.0, 95.0, 200.0]
    b = downsample(ts, [1.0, 2.0, 3.0, 4.0], start=0, end=99, points=10)
    assert b.t == [0.0, 90.0]
    assert b.count == [2, 1]


def _thirty_days_with_one_spike() -> tuple[list[float], list[float | None], float]:
    start = 1_700_006_400.0  # a UTC midnight
    ts = [start + i * 10 for i in range(30 * DAY // 10)]
    values: list[float | None] = [100.0] * len(ts)
    values[123_457] = 99_999.0  # one sample, one second long, in 30 days
    return ts, values, start


def test_one_second_spike_survives_in_max_of_30_day_chart() -> None:
    ts, values, start = _thirty_days_with_one_spike()
    b = downsample(ts, values, start=start, end=ts[-1], points=1000)
    assert len(b.t) <= 1000
    assert max(b.max) == 99_999.0
    assert min(b.min) == 100.0


def test_one_second_spike_survives_through_rollups() -> None:
    ts, values, start = _thirty_days_with_one_spike()
    minute = rollup(ts, values, 60)
    hourly = merge_rollup_buckets(minute, start=start, end=ts[-1], points=1000, rollup_width_s=60)
    assert max(hourly.max) == 99_999.0


def test_rollup_merge_equals_raw_downsample() -> None:
    ts = [float(t) for t in range(0, 7200, 10)]
    values: list[float | None] = [float((t * 7) % 13) for t in range(len(ts))]
    values[5] = None
    raw = downsample(ts, values, start=0, end=7199, points=20)
    rows = rollup(ts, values, 60)
    merged = merge_rollup_buckets(rows, start=0, end=7199, points=20, rollup_width_s=60)
    assert merged == raw


def test_merge_never_uses_width_finer_than_rollup() -> None:
    rows = [RollupRow(0.0, 1.0, 10.0, 5.0, 4), RollupRow(3600.0, 2.0, 6.0, 4.0, 2)]
    b = merge_rollup_buckets(rows, start=0, end=3600, points=10_000, rollup_width_s=3600)
    assert b.width_s == 3600
    assert b.avg == [2.5, 3.0]
    assert b.count == [4, 2]


@settings(max_examples=50)
@given(
    st.lists(st.integers(min_value=-1000, max_value=1000), min_size=1, max_size=400),
    st.integers(min_value=1, max_value=50),
)
def test_rollup_merge_matches_raw_for_integer_series(vals: list[int], points: int) -> None:
    ts = [float(i * 7) for i in range(len(vals))]
    values: list[float | None] = [float(v) for v in vals]
    end = 3600.0 * 3 - 1
    raw = downsample(ts, values, start=0, end=end, points=points)
    rows = rollup(ts, values, 60)
    merged = merge_rollup_buckets(rows, start=0, end=end, points=points, rollup_width_s=60)
    if raw.width_s >= 60:
        assert merged == raw
    assert len(merged.t) <= points


def test_choose_resolution() -> None:
    assert choose_resolution(0, 3600, 1000, 10) == "raw"  # 3.6 s per bucket
    assert choose_resolution(0, 7 * DAY, 1000, 10) == "1m"  # 605 s per bucket
    assert choose_resolution(0, 30 * DAY, 1000, 10) == "15m"  # 2592 s
    assert choose_resolution(0, 30 * DAY, 1500, 10) == "15m"  # 1728 s: the 30-day chart
    assert choose_resolution(0, 10 * DAY, 1000, 10) == "1m"  # 864 s: under a quarter-hour
    assert choose_resolution(0, 90 * DAY, 1000, 10) == "1h"  # 7776 s
    assert choose_resolution(0, 7 * DAY, 1000, 900) == "raw"  # raw already sparse
