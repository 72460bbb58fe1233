"""Rollups agree with raw rows, and the series API gives the same answer from either."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from analysis.downsample import choose_resolution, downsample, rollup
from analysis.rates import counter_rates
from servers.models import Server
from timeseries import ingest, rollups
from timeseries.models import InnodbRollup1h, InnodbRollup1m, InnodbRollup15m
from timeseries.series import series_for

T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


@pytest.fixture
def server(db):
    return Server.objects.create(name="rollup-test", host="127.0.0.1", poll_interval_s=10)


def _history(server, hours: float, *, seed: int = 1, start: dt.datetime = T0) -> list[dict]:
    """10 s samples with noisy gauges and counters, one restart (counter reset) and one gap."""
    rng = random.Random(seed)
    rows, flushed, lsn = [], 0, 10**12
    for i in range(int(hours * 360)):
        if 700 <= i < 730:  # a 5-minute gap: no rate may span it
            continue
        if i == 1000:  # restart: counters start again from small values
            flushed = 0
        flushed += rng.randint(0, 500)
        lsn += rng.randint(0, 10**6)
        rows.append(ingest.sample_row(
            server.pk, start + dt.timedelta(seconds=10 * i),
            checkpoint_age_bytes=rng.randint(0, 2 * 10**9), history_list_length=rng.randint(0, 5000),
            innodb_buffer_pool_pages_flushed=flushed, lsn=lsn, com_commit=i * 7,
        ))
    ingest.save_innodb_samples(rows)
    return rows


def test_one_minute_rollups_hold_the_min_sum_max_and_count_of_the_raw_rows(server):
    rows = _history(server, 2)
    rollups.build_range("1m", T0, T0 + dt.timedelta(hours=2))
    expected = rollup([r["ts"].timestamp() for r in rows], [r["checkpoint_age_bytes"] for r in rows], 60)
    stored = InnodbRollup1m.objects.filter(server=server).order_by("ts")
    got = [(r.ts.timestamp(), r.checkpoint_age_bytes_min, r.checkpoint_age_bytes_sum,
            r.checkpoint_age_bytes_max, r.checkpoint_age_bytes_count) for r in stored]
    assert got == [(e.ts, e.min, e.sum, e.max, e.count) for e in expected]


def test_hour_rollups_equal_the_raw_rows_of_the_hour(server):
    rows = _history(server, 3)
    rollups.build_range("1m", T0, T0 + dt.timedelta(hours=3))
    rollups.build_range("1h", T0, T0 + dt.timedelta(hours=3))
    first = InnodbRollup1h.objects.get(server=server, ts=T0)
    hour = [r["history_list_length"] for r in rows if r["ts"] < T0 + dt.timedelta(hours=1)]
    assert (first.history_list_length_min, first.history_list_length_max) == (min(hour), max(hour))
    assert first.history_list_length_sum / first.history_list_length_count == pytest.approx(sum(hour) / len(hour))


def test_quarter_hour_rollups_equal_the_raw_rows_of_each_quarter_hour(server):
    rows = _history(server, 3)
    rollups.build_range("1m", T0, T0 + dt.timedelta(hours=3))
    rollups.build_range("15m", T0, T0 + dt.timedelta(hours=3))
    expected = rollup([r["ts"].timestamp() for r in rows], [r["checkpoint_age_bytes"] for r in rows], 900)
    stored = InnodbRollup15m.objects.filter(server=server).order_by("ts")
    got = [(r.ts.timestamp(), r.checkpoint_age_bytes_min, r.checkpoint_age_bytes_sum,
            r.checkpoint_age_bytes_max, r.checkpoint_age_bytes_count) for r in stored]
    assert got == [(e.ts, e.min, pytest.approx(e.sum, rel=1e-12), e.max, e.count) for e in expected]


def test_rebuilding_a_range_changes_nothing(server):
    _history(server, 1)
    rollups.build_range("1m", T0, T0 + dt.timedelta(hours=1))
    before = list(InnodbRollup1m.objects.filter(server=server).order_by("ts").values())
    rollups.build_range("1m", T0, T0 + dt.timedelta(hours=1))
    assert list(InnodbRollup1m.objects.filter(server=server).order_by("ts").values()) == before


NAMES = ["checkpoint_age_bytes", "history_list_length", "pages_flushed_per_s", "redo_bytes_per_s", "commits_per_s"]


def _assert_same_series(a: dict, b: dict) -> None:
    for name in NAMES:
        assert a[name]["t"] == b[name]["t"], name
        for key in ("min", "avg", "max"):
            # The API rounds to 3 decimals: sums equal to 1e-12 can still round the other way.
            assert a[name][key] == pytest.approx(b[name][key], rel=1e-9, abs=1.001e-3), (name, key)


def test_the_api_returns_the_same_buckets_from_raw_rows_and_from_rollups_for_an_aligned_range(server):
    _history(server, 6)
    end = T0 + dt.timedelta(hours=6)
    for resolution in rollups.LEVELS:
        rollups.build_range(resolution, T0, end)
    # hour buckets (readable from 1h rollups), half-hour buckets (15m) and 10-minute buckets (1m)
    for points, coarsest in ((6, "1h"), (12, "15m"), (72, "1m")):
        raw = series_for(server, NAMES, T0, end, points, resolution="raw")
        for resolution in rollups.LEVELS[: rollups.LEVELS.index(coarsest) + 1]:
            _assert_same_series(raw, series_for(server, NAMES, T0, end, points, resolution=resolution))
    assert len(raw["checkpoint_age_bytes"]["t"]) == 36


def test_rollup_reads_fill_the_unbuilt_tail_from_raw_rows(server):
    _history(server, 4)
    end = T0 + dt.timedelta(hours=4)
    rollups.build_range("1m", T0, T0 + dt.timedelta(hours=2))
    rollups.RollupState.objects.create(resolution="1m", built_until=T0 + dt.timedelta(hours=2))
    _assert_same_series(series_for(server, NAMES, T0, end, 48, resolution="raw"),
                        series_for(server, NAMES, T0, end, 48, resolution="1m"))


def test_quarter_hour_reads_fall_back_to_minutes_then_raw_rows_where_not_built(server):
    _history(server, 4)
    end = T0 + dt.timedelta(hours=4)
    rollups.build_range("1m", T0, T0 + dt.timedelta(hours=3))
    rollups.build_range("15m", T0, T0 + dt.timedelta(hours=2))
    rollups.RollupState.objects.create(resolution="1m", built_until=T0 + dt.timedelta(hours=3))
    rollups.RollupState.objects.create(resolution="15m", built_until=T0 + dt.timedelta(hours=2))
    _assert_same_series(series_for(server, NAMES, T0, end, 8, resolution="raw"),
                        series_for(server, NAMES, T0, end, 8, resolution="15m"))


def test_sql_rates_match_analysis_counter_rates_across_a_restart_and_a_gap(server):
    rows = _history(server, 4)
    end = T0 + dt.timedelta(hours=4)
    samples = [(r["ts"].timestamp(), r["innodb_buffer_pool_pages_flushed"]) for r in rows]
    rates = [r for r in counter_rates(samples, max_gap_s=30) if r.per_s is not None]
    assert all(r.per_s >= 0 for r in rates)
    expected = downsample([r.ts for r in rates], [r.per_s for r in rates],
                          start=T0.timestamp(), end=end.timestamp(), points=240)
    got = series_for(server, ["pages_flushed_per_s"], T0, end, 240, resolution="raw")["pages_flushed_per_s"]
    assert got["t"] == [int(t * 1000) for t in expected.t]
    assert got["max"] == pytest.approx(expected.max)
    assert got["avg"] == pytest.approx(expected.avg, abs=5e-4)  # the API rounds to 3 decimals


def test_a_one_second_spike_stays_in_the_max_of_a_30_day_chart(db):
    server = Server.objects.create(name="spiky", host="127.0.0.1", poll_interval_s=1)
    spike_at = T0 + dt.timedelta(days=17, hours=3, seconds=7)
    rows = [ingest.sample_row(server.pk, T0 + dt.timedelta(minutes=10 * i), checkpoint_age_bytes=1000,
                              innodb_buffer_pool_pages_flushed=100 * i) for i in range(30 * 144)]
    rows += [  # one second of flush storm: 50,000 pages flushed in 1 s, checkpoint age peaks
        ingest.sample_row(server.pk, spike_at, checkpoint_age_bytes=1000, innodb_buffer_pool_pages_flushed=10**6),
        ingest.sample_row(server.pk, spike_at + dt.timedelta(seconds=1), checkpoint_age_bytes=3 * 10**9,
                          innodb_buffer_pool_pages_flushed=10**6 + 50_000),
    ]
    ingest.save_innodb_samples(rows)
    end = T0 + dt.timedelta(days=30)
    for resolution in rollups.LEVELS:
        rollups.build_range(resolution, T0, end)
    assert choose_resolution(T0.timestamp(), end.timestamp(), 1500, 10) == "15m"
    for resolution in rollups.LEVELS:
        got = series_for(server, ["checkpoint_age_bytes", "pages_flushed_per_s"], T0, end, 1500, resolution=resolution)
        assert max(got["checkpoint_age_bytes"]["max"]) == 3 * 10**9
        assert max(got["pages_flushed_per_s"]["max"]) == 50_000
        assert len(got["checkpoint_age_bytes"]["t"]) <= 1500


def test_the_periodic_build_advances_from_its_high_water_mark_and_leaves_recent_minutes_for_late_rows(server):
    _history(server, 1)
    now = T0 + dt.timedelta(minutes=30, seconds=30)
    rollups.build_rollups_now(now)
    assert rollups.built_until("1m") == T0 + dt.timedelta(minutes=28)
    assert not InnodbRollup1m.objects.filter(ts__gte=T0 + dt.timedelta(minutes=28)).exists()
    assert rollups.built_until("15m") == T0 + dt.timedelta(minutes=15)
    assert rollups.build_rollups_now(now) == {"1m": 0, "15m": 0, "1h": 0}
    rollups.build_rollups_now(T0 + dt.timedelta(hours=1, minutes=5))
    assert rollups.built_until("1h") == T0 + dt.timedelta(hours=1)
    assert rollups.built_until("15m") == T0 + dt.timedelta(hours=1)
    assert InnodbRollup15m.objects.filter(server=server, ts=T0 + dt.timedelta(minutes=45)).exists()
    assert InnodbRollup1h.objects.filter(server=server, ts=T0).exists()
