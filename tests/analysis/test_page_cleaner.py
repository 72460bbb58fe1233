"""The page cleaner's decisions, against the arithmetic of buf0flu.cc, and redo sizing."""

from __future__ import annotations

from dataclasses import replace

from analysis import checkpoint
from analysis.page_cleaner import CleanerState, FlushSettings, Moment, mariadb, mysql, pct_for_lsn
from analysis.redo_sizing import busiest_hour, minutes_held, resize_rule, smallest_capacity

MB = 1 << 20


def _mariadb(**over) -> FlushSettings:
    th = checkpoint.checkpoint_thresholds("mariadb", "10.11.19", 48 * MB, status_checkpoint_max_age=40_050_893)
    base = dict(family="mariadb", io_capacity=100, io_capacity_max=2000, adaptive_flushing=True,
                async_bytes=th.async_bytes, max_bytes=th.max_bytes, log_capacity_bytes=th.log_capacity_bytes,
                pool_pages=64896, max_dirty_pages_pct_lwm=0.001)
    return FlushSettings(**{**base, **over})


def test_pct_for_lsn_is_the_servers_integer_formula():
    s = _mariadb()
    age = s.async_bytes // 2  # factor 50: 20 × 50 × √50 / 7.5
    assert int(pct_for_lsn(s, age)) == int(20 * 50 * 50 ** 0.5 / 7.5)
    assert pct_for_lsn(s, s.adaptive_lwm_bytes - 1) == 0
    percona = replace(s, family="mysql57", lsn_age_factor="high_checkpoint")
    assert int(pct_for_lsn(percona, age)) == int(20 * 50 * 50 * 50 ** 0.5 / 700.5)


def test_mariadb_below_the_adaptive_lwm_flushes_io_capacity_when_dirty_pages_pass_their_lwm():
    s = _mariadb()
    d = mariadb(s, CleanerState(), Moment(now_s=1e9, lsn=1e9, age_bytes=1 * MB, dirty_pages=5000, pages_for_lsn=100, dt_s=1))
    assert d.rates == {"adaptive": 100.0}


def test_mariadb_with_the_default_dirty_lwm_sleeps_until_the_async_point():
    s = _mariadb(max_dirty_pages_pct_lwm=0.0)
    state = CleanerState(sleeping=True)
    assert mariadb(s, state, Moment(1e9, 1e9, s.async_bytes * 0.9, 5000, 100, 1)).rates == {}
    d = mariadb(s, state, Moment(1e9, 1e9, s.async_bytes + 1, 5000, 100, 1))
    assert d.target_age_bytes == s.async_bytes and not d.stall and state.sleeping is False


def test_mariadb_adaptive_off_flushes_io_capacity_in_the_background():
    d = mariadb(_mariadb(adaptive_flushing=False), CleanerState(), Moment(1e9, 1e9, 20 * MB, 9000, 100, 1))
    assert d.rates == {"background": 100.0}


def test_past_the_max_checkpoint_age_users_wait():
    s = _mariadb()
    assert mariadb(s, CleanerState(), Moment(1e9, 1e9, s.max_bytes, 9000, 100, 1)).stall


def test_mysql_past_the_sync_point_flushes_back_to_it():
    th = checkpoint.checkpoint_thresholds("mysql", "8.0.36", 100 * MB)
    s = FlushSettings("mysql8", 200, 2000, True, th.async_bytes, th.max_bytes, th.log_capacity_bytes, 65536,
                      sync_bytes=th.sync_bytes)
    d = mysql(s, CleanerState(prev_lsn=1.0, prev_time_s=1e9 - 1), Moment(1e9, 1e9, th.sync_bytes + 1, 9000, 100, 1))
    assert d.target_age_bytes == th.sync_bytes


def test_redo_sizing_finds_the_smallest_size_below_async():
    # a peak of 60 MB against an async point of 0.73 × size: 84 MB is the first size that holds it
    ratio = lambda size: 60 * MB / (0.73 * size)  # noqa: E731
    size = smallest_capacity(ratio, 48 * MB)
    assert ratio(size) < 1 <= ratio(size - 16 * MB)
    assert round(minutes_held(96 * MB, 1 * MB / 60), 1) == 96.0
    assert minutes_held(96 * MB, 0) is None


def test_the_busiest_hour_is_the_one_with_the_most_redo():
    import numpy as np

    t = np.arange(0, 3 * 3600, 10.0)
    lsn = np.cumsum(np.where((t >= 3600) & (t < 7200), 5000.0, 100.0))
    start, rate = busiest_hour(t, lsn)
    assert 3500 <= start <= 3700 and 450 < rate <= 500  # 5,000 bytes per 10 s poll


def test_how_each_version_resizes_its_redo_log():
    assert resize_rule("mariadb", "10.11.19-MariaDB").startswith("dynamic")
    assert resize_rule("mariadb", "10.6.16-MariaDB").startswith("restart")
    assert resize_rule("mysql", "8.0.36").startswith("dynamic")
    assert resize_rule("percona", "5.7.44-48").startswith("restart")


def test_mariadb_averages_divide_pages_of_many_iterations_by_the_seconds_since_the_last_early_return():
    """prev_time is reset below the adaptive lwm, sum_pages and n_iterations are not: the next
    average is inflated and the batch after it is several times innodb_io_capacity."""
    s = _mariadb(flushing_avg_loops=30)
    state = CleanerState(avg_page_rate=100, lsn_avg_rate=300_000, prev_lsn=1.0, prev_time_s=0.0)
    above = s.adaptive_lwm_bytes * 1.05
    for second in range(1, 30):  # 29 iterations above the lwm, 100 pages each
        state.last_pages = 100
        mariadb(s, state, Moment(second, 1e9 + second, above, 5000, 600, 1))
    mariadb(s, state, Moment(30.0, 1e9 + 30, s.adaptive_lwm_bytes * 0.5, 5000, 600, 1))  # early return
    state.last_pages = 100
    d = mariadb(s, state, Moment(31.0, 1e9 + 31, above, 5000, 600, 1))
    assert state.avg_page_rate > 1000 and d.rates["adaptive"] > 3 * s.io_capacity
