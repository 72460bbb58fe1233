"""The effect report's statistics and verdicts: descriptive figures by hand, the interrupted time
series on series built to show each verdict, and autocorrelated noise that must not read as an
effect."""

from __future__ import annotations

import math
import random

import pytest

from analysis.effect import (
    compare_windows,
    describe,
    format_value,
    judge_change,
    materiality_floor,
    pages_flushed_per_redo_mb,
    percentile,
    slope_per_hour,
    spikiness,
    workload_moves,
)
from analysis.its import interrupted_time_series, newey_west_lags

CHANGE = 10_000.0
STEP = 10.0


def _series(level, slope_per_s=0.0, noise=0.0, start=-1800.0, end=0.0, seed=1, phi=0.0):
    """Points every 10 s from CHANGE+start to CHANGE+end: level + slope·t + AR(1) noise."""
    rng, e, out = random.Random(seed), 0.0, []
    t = start
    while t < end:
        e = phi * e + rng.gauss(0.0, noise)
        out.append((CHANGE + t, level + slope_per_s * t + e))
        t += STEP
    return out


def _after(level, slope_per_s=0.0, noise=0.0, seed=2, phi=0.0, length=1800.0):
    return _series(level, slope_per_s, noise, start=120.0, end=120.0 + length, seed=seed, phi=phi)


def test_describe_by_hand() -> None:
    s = describe([2, 4, 4, 4, 5, 5, 7, 9, None])
    assert s.n == 8
    assert s.mean == 5.0
    assert s.p50 == 4.5  # (4 + 5) / 2
    assert s.p95 == pytest.approx(8.3)  # position 7 × 0.95 = 6.65 → 7 + 0.65 × (9 - 7)
    assert s.max == 9.0
    assert s.stddev == pytest.approx(math.sqrt(32 / 7))  # Σ(x - 5)² = 32, n - 1 = 7
    assert s.cv == pytest.approx(math.sqrt(32 / 7) / 5)


def test_describe_edge_cases() -> None:
    assert describe([]).n == 0 and describe([None]).mean is None
    one = describe([3.0])
    assert one.mean == 3.0 and one.stddev is None and one.cv is None
    assert describe([0.0, 0.0]).cv is None


def test_percentile_linear_interpolation() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([10.0], 95) == 10.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_spikiness_is_cv_and_peak_over_median() -> None:
    cv, peak = spikiness([10, 10, 10, 100])
    # mean 32.5; Σ(x - 32.5)² = 3 × 506.25 + 4556.25 = 6075; sd = √(6075/3) = 45
    assert cv == pytest.approx(45 / 32.5)
    assert peak == 10.0
    cv0, peak0 = spikiness([0, 0, 5])  # median 0: peak/median undefined
    assert cv0 == pytest.approx(math.sqrt(25 / 3) / (5 / 3)) and peak0 is None
    assert spikiness([]) == (None, None)


def test_slope_per_hour_least_squares() -> None:
    assert slope_per_hour([0, 10, 20, 30], [0, 1, 2, 3]) == pytest.approx(360.0)
    assert slope_per_hour([0, 60, 120], [5, None, 7]) == pytest.approx(60.0)
    assert slope_per_hour([0], [1]) is None
    assert slope_per_hour([5, 5], [1, 2]) is None


def test_pages_flushed_per_redo_mb_pairs_samples_by_timestamp() -> None:
    pages = [(0.0, 100.0), (10.0, 200.0), (20.0, None)]
    redo = [(0.0, 2e6), (10.0, 0.0), (20.0, 1e6)]
    assert pages_flushed_per_redo_mb(pages, redo) == [(0.0, 50.0)]


def test_newey_west_lag_rule() -> None:
    assert newey_west_lags(10) == 2 and newey_west_lags(180) == 4 and newey_west_lags(1) == 1


def test_a_level_shift_after_a_flat_window_departs_from_the_prediction() -> None:
    fit = interrupted_time_series(_series(100.0, noise=2.0), _after(70.0, noise=2.0, seed=3), CHANGE, floor=5.0)
    assert fit.trend_per_s is None and fit.expected == pytest.approx(100.0, abs=1.0)
    assert fit.departure == pytest.approx(-30.0, abs=1.5) and fit.p_value < 1e-6


def test_a_steady_decline_is_carried_into_the_after_window_but_no_further_than_it_was_seen() -> None:
    before = _series(1000.0, slope_per_s=-0.2, noise=3.0)  # 1,000 at the change, falling 12/min
    fit = interrupted_time_series(before, _after(1000.0 - 0.2 * 600, noise=3.0, length=960), CHANGE, floor=20.0)
    assert fit.trend_per_s == pytest.approx(-0.2, rel=0.05)
    # after times 120..1080 s: the trend predicts 1000 − 0.2 × 600 on average, where it landed
    assert fit.expected == pytest.approx(880.0, abs=10) and abs(fit.departure) < 15
    long_after = _after(0.0, length=7200)
    clamped = interrupted_time_series(before, long_after, CHANGE, floor=20.0)
    assert clamped.expected >= 1000.0 - 0.2 * 1800 - 10  # not carried past the before window's length


def test_the_prediction_stays_in_the_metric_s_physical_range() -> None:
    fit = interrupted_time_series(_series(500.0, slope_per_s=-1.0, noise=1.0), _after(0.0), CHANGE,
                                  floor=50.0, lower=0.0)
    assert fit.expected >= 0.0


def test_materiality_floors_are_in_the_metric_s_own_terms() -> None:
    assert materiality_floor("history_list_length", 7.0, {}) == 1000.0
    assert materiality_floor("checkpoint_age_bytes", 20e6, {"async_point_bytes": 35e6}) == pytest.approx(1.75e6)
    assert materiality_floor("pages_flushed_per_s", 20.0, {}) == 5.0


def _flushing(age, flush, adaptive, trx=1000.0, after=False, age_slope=0.0, seed=1):
    make = (lambda lv, slope=0.0, noise=0.0, s=seed: _after(lv, slope, noise, seed=s)) if after else \
        (lambda lv, slope=0.0, noise=0.0, s=seed: _series(lv, slope, noise, seed=s))
    return {"checkpoint_age_bytes": make(age, age_slope, 3e5), "pages_flushed_per_s": make(flush, 0.0, 4.0, seed + 1),
            "flush_adaptive_pages_per_s": make(adaptive, 0.0, 0.0), "trx_per_s": make(trx, 0.0, 20.0, seed + 2),
            "redo_bytes_per_s": make(2e6, 0.0, 5e4, seed + 3)}


def test_adaptive_flushing_that_engaged_is_an_effect_with_units_in_the_summary() -> None:
    report = judge_change(_flushing(25e6, 100.0, 0.0), _flushing(8e6, 210.0, 110.0, after=True), change_at=CHANGE,
                          variable="innodb_adaptive_flushing", old="OFF", new="ON",
                          context={"async_point_bytes": 35e6})
    assert report.metrics["checkpoint_age_bytes"].verdict == "effect"
    assert report.metrics["pages_flushed_per_s"].verdict == "effect"
    assert report.mechanism["engaged"] is True
    assert report.summary.startswith("Effects: checkpoint age fell 68 % (25.0 MB → 8.0 MB)")
    assert "pages flushed rose" in report.summary and "pages/s" in report.summary


def test_a_move_while_the_adaptive_path_never_ran_is_not_attributable() -> None:
    report = judge_change(_flushing(34e6, 300.0, 0.0), _flushing(30e6, 200.0, 0.0, after=True), change_at=CHANGE,
                          variable="innodb_adaptive_flushing", old="OFF", new="ON",
                          context={"async_point_bytes": 35e6})
    assert report.mechanism["engaged"] is False
    assert report.metrics["pages_flushed_per_s"].verdict == "not_attributable"
    assert not any(m.verdict == "effect" for m in report.metrics.values())
    assert report.summary.startswith("No metric moved because of this change")


def test_a_metric_that_continues_its_trend_is_trend_not_effect() -> None:
    before = {"history_list_length": _series(80_000.0, slope_per_s=-20.0, noise=200.0)}
    after = {"history_list_length": _after(80_000.0 - 20.0 * 600, noise=200.0)}
    after["history_list_length"] = [(t, 80_000.0 - 20.0 * (t - CHANGE)) for t, _ in after["history_list_length"]]
    report = judge_change(before, after, change_at=CHANGE, variable="innodb_purge_threads", old="4", new="1")
    assert report.metrics["history_list_length"].verdict == "trend"
    assert "continues what it did before" in report.summary


def test_purge_threads_while_purge_keeps_up_engage_nothing() -> None:
    flat = {"history_list_length": _series(300.0, noise=50.0), "purge_undo_log_pages_per_s": _series(2000.0, noise=20)}
    later = {"history_list_length": _after(250.0, noise=50.0), "purge_undo_log_pages_per_s": _after(2000.0, noise=20)}
    report = judge_change(flat, later, change_at=CHANGE, variable="innodb_purge_threads", old="1", new="4")
    assert report.mechanism["engaged"] is False and "kept up" in report.mechanism["evidence"]
    assert report.metrics["history_list_length"].verdict == "no_effect"  # 300 → 250 entries is noise


def test_a_moved_load_makes_load_driven_metrics_not_attributable() -> None:
    before, after = _flushing(10e6, 100.0, 50.0), _flushing(20e6, 180.0, 90.0, trx=1600.0, after=True)
    report = judge_change(before, after, change_at=CHANGE, variable="innodb_io_capacity", old="200", new="400",
                          context={"async_point_bytes": 35e6})
    assert report.workload_changed and report.workload["trx_per_s"] == pytest.approx(60.0, abs=5)
    assert report.metrics["checkpoint_age_bytes"].verdict == "not_attributable"
    assert "workload changed" in report.metrics["checkpoint_age_bytes"].reason


def test_com_commit_at_zero_on_an_autocommit_load_is_not_a_workload_change() -> None:
    before = {"commits_per_s": _series(0.0), "trx_per_s": _series(5000.0, noise=50.0)}
    after = {"commits_per_s": _after(0.0), "trx_per_s": _after(5000.0, noise=50.0)}
    assert workload_moves(before, after) == {}
    assert not judge_change(before, after, change_at=CHANGE).workload_changed


def test_too_few_points_is_inconclusive() -> None:
    report = judge_change({"pages_dirty": _series(100.0)[:3]}, {"pages_dirty": _after(200.0)}, change_at=CHANGE)
    assert report.metrics["pages_dirty"].verdict == "inconclusive"


def test_an_unknown_variable_gets_the_generic_analysis() -> None:
    report = judge_change({"pages_dirty": _series(1000.0, noise=5.0)}, {"pages_dirty": _after(2000.0, noise=5.0)},
                          change_at=CHANGE, variable="innodb_some_new_knob", old="1", new="2")
    assert report.mechanism == {"engaged": None, "evidence": "mechanism unknown"}
    assert report.metrics["pages_dirty"].verdict == "effect"


def test_autocorrelated_noise_without_a_shift_is_rarely_an_effect() -> None:
    effects = 0
    for seed in range(200):
        before = {"pages_flushed_per_s": _series(200.0, noise=15.0, seed=seed, phi=0.8)}
        after = {"pages_flushed_per_s": _after(200.0, noise=15.0, seed=seed + 1000, phi=0.8)}
        effects += judge_change(before, after, change_at=CHANGE).metrics["pages_flushed_per_s"].verdict == "effect"
    assert effects / 200 < 0.10, effects


def test_compare_windows_without_a_change_says_nothing_moved() -> None:
    w = {"pages_flushed_per_s": _series(100.0, noise=3.0)}
    assert compare_windows(w, w).summary.startswith("No metric moved")


def test_format_value_units() -> None:
    assert format_value("checkpoint_age_bytes", 1.9e9) == "1.9 GB"
    assert format_value("checkpoint_age_bytes", 7e8, scale_to=1.9e9) == "0.7 GB"
    assert format_value("redo_bytes_per_s", 5e6) == "5.0 MB/s"
    assert format_value("commits_per_s", 1234.4) == "1,234"
    assert format_value("x", None) == "n/a"
