"""Checkpoint thresholds per flavour, against values the servers print or export."""

from __future__ import annotations

import math

import pytest

from analysis.checkpoint import (
    adaptive_flush_pct,
    adaptive_flushing_lwm_bytes,
    checkpoint_thresholds,
    detect_flavor,
    parse_version,
    redo_capacity_bytes,
    runway_minutes,
)

MiB = 1024 * 1024
GiB = 1024 * MiB


def test_parse_version_handles_distribution_suffixes() -> None:
    assert parse_version("10.11.19-MariaDB-0+deb12u1") == (10, 11, 19)
    assert parse_version("8.0.32-24") == (8, 0, 32)
    assert parse_version("5.7.44-log") == (5, 7, 44)
    assert parse_version("9.1.0") == (9, 1, 0)
    with pytest.raises(ValueError):
        parse_version("garbage")


def test_detect_flavor_reads_version_and_comment() -> None:
    assert detect_flavor("10.11.19-MariaDB-0+deb12u1") == "mariadb"
    assert detect_flavor("8.0.32-24", "Percona Server (GPL), Release 24") == "percona"
    assert detect_flavor("8.4.3", "MySQL Community Server - GPL") == "mysql"


def test_redo_capacity_is_file_size_times_files_before_8030() -> None:
    variables = {"innodb_log_file_size": str(48 * MiB), "innodb_log_files_in_group": "2"}
    assert redo_capacity_bytes("mysql", "5.7.44-log", variables) == 96 * MiB
    assert redo_capacity_bytes("mysql", "8.0.29", variables) == 96 * MiB


def test_redo_capacity_uses_innodb_redo_log_capacity_on_8030_and_9x() -> None:
    variables = {"innodb_redo_log_capacity": str(8 * GiB)}
    assert redo_capacity_bytes("mysql", "8.0.30", variables) == 8 * GiB
    assert redo_capacity_bytes("mysql", "9.1.0", variables) == 8 * GiB
    assert redo_capacity_bytes("percona", "8.4.2-2", variables) == 8 * GiB


def test_redo_capacity_is_one_file_on_mariadb_105_plus() -> None:
    variables = {"innodb_log_file_size": str(48 * MiB), "innodb_log_files_in_group": "2"}
    assert redo_capacity_bytes("mariadb", "10.11.19-MariaDB", variables) == 48 * MiB
    assert redo_capacity_bytes("mariadb", "10.4.34-MariaDB", variables) == 96 * MiB


def test_redo_capacity_is_none_when_variables_missing() -> None:
    assert redo_capacity_bytes("mysql", "5.7.44", {}) is None
    assert redo_capacity_bytes("mysql", "8.0.36", {"innodb_log_file_size": "x"}) is None


def test_mysql_57_two_48mib_files_give_percona_max_checkpoint_age() -> None:
    t = checkpoint_thresholds("mysql", "5.7.44-log", 2 * 48 * MiB)
    assert t is not None and t.source == "formula"
    assert t.max_bytes == 80_826_164
    margin = 80_826_164
    assert t.checkpoint_target_bytes == margin - margin // 32 == 78_300_347
    assert t.async_bytes == margin - margin // 8
    assert t.sync_bytes == margin - margin // 16
    assert t.log_capacity_bytes == 90_593_280  # (48 MiB - 2048) * 2 * 0.9


def test_mariadb_104_and_percona_57_use_the_same_legacy_formula() -> None:
    for flavor, version in (("mariadb", "10.4.34-MariaDB"), ("percona", "5.6.51-91.0")):
        t = checkpoint_thresholds(flavor, version, 2 * 48 * MiB)  # type: ignore[arg-type]
        assert t is not None and t.max_bytes == 80_826_164


def test_percona_printed_values_win_over_formula() -> None:
    t = checkpoint_thresholds(
        "percona",
        "5.7.44-48",
        2 * 48 * MiB,
        printed_max_checkpoint_age=1_000_000,
        printed_checkpoint_age_target=968_750,
    )
    assert t is not None and t.source == "printed"
    assert t.max_bytes == 1_000_000
    assert t.checkpoint_target_bytes == 968_750
    assert t.async_bytes == 1_000_000 - 1_000_000 // 8
    assert t.sync_bytes == 1_000_000 - 1_000_000 // 16


def test_mariadb_1011_status_max_age_wins_and_gives_35mb_async_point() -> None:
    t = checkpoint_thresholds(
        "mariadb", "10.11.19-MariaDB-0+deb12u1", None, status_checkpoint_max_age=40_050_893
    )
    assert t is not None and t.source == "status"
    assert t.max_bytes == 40_050_893
    assert t.async_bytes == 35_044_532  # ≈ 35.0 MB
    assert t.sync_bytes is None and t.checkpoint_target_bytes is None


def test_mariadb_1011_formula_reproduces_exported_max_age() -> None:
    t = checkpoint_thresholds("mariadb", "10.11.19-MariaDB", 48 * MiB)
    assert t is not None and t.max_bytes == 40_050_893 and t.sync_bytes is None


def test_mysql_8030_plus_ratios_of_capacity() -> None:
    capacity = 8 * GiB
    t = checkpoint_thresholds("mysql", "8.0.36", capacity)
    assert t is not None and t.sync_bytes is not None and t.checkpoint_target_bytes is not None
    assert t.async_bytes / capacity == pytest.approx(0.78, abs=0.01)
    assert t.sync_bytes / capacity == pytest.approx(0.83, abs=0.01)
    assert t.checkpoint_target_bytes / capacity == pytest.approx(0.86, abs=0.01)
    assert t.async_bytes < t.sync_bytes < t.checkpoint_target_bytes
    assert all(v % 512 == 0 for v in (t.async_bytes, t.sync_bytes, t.max_bytes))


def test_mysql_9x_without_log_files_in_group() -> None:
    variables = {"innodb_redo_log_capacity": str(100 * MiB)}
    capacity = redo_capacity_bytes("mysql", "9.1.0", variables)
    t = checkpoint_thresholds("mysql", "9.1.0", capacity)
    assert t is not None and t == checkpoint_thresholds("mysql", "8.4.3", 100 * MiB)
    assert t.async_bytes / (100 * MiB) == pytest.approx(0.78, abs=0.01)


def test_mysql_80_before_8030_subtracts_headers_and_margins() -> None:
    t = checkpoint_thresholds("mysql", "8.0.28", 2 * 48 * MiB)
    assert t is not None and t.sync_bytes is not None
    assert t.async_bytes < t.sync_bytes < t.max_bytes < 2 * 48 * MiB


def test_no_capacity_and_no_stated_value_gives_none() -> None:
    assert checkpoint_thresholds("mysql", "5.7.44", None) is None


def test_adaptive_lwm_is_percent_of_innodb_log_capacity() -> None:
    assert adaptive_flushing_lwm_bytes(90_593_280, 10) == 9_059_328
    t = checkpoint_thresholds("mysql", "5.7.44", 2 * 48 * MiB, adaptive_flushing_lwm_pct=10)
    assert t is not None and t.adaptive_lwm_bytes == 9_059_328


def test_adaptive_flush_pct_follows_af_get_pct_for_lsn() -> None:
    # f = 100 * 50 / 100 = 50; (2000 // 200) * 50 * sqrt(50) / 7.5 = 471.4 -> 471
    assert adaptive_flush_pct(50, 100, 200, 2000) == int(10 * 50 * math.sqrt(50) / 7.5)
    assert adaptive_flush_pct(50, 100, 200, 2000, lwm_bytes=60) == 0
    assert adaptive_flush_pct(50, 100, 200, 2000, adaptive_flushing=False) == 0
    assert adaptive_flush_pct(50, 0, 200, 2000) == 0


def test_runway_on_linear_growth() -> None:
    # age grows 1 MB/s from 10 MB; sync at 70 MB → 60 MB left → 1 minute.
    samples = [(1000.0 + i, 10e6 + i * 1e6) for i in range(0, 61, 10)]
    last = samples[-1][1]
    assert runway_minutes(samples, int(last + 60e6)) == pytest.approx(1.0)


def test_runway_uses_only_recent_window() -> None:
    old = [(float(t), 0.0) for t in range(0, 1000, 10)]
    recent = [(1000.0 + i, 1000.0 * i) for i in range(0, 301, 10)]
    # slope of last 300 s = 1000 B/s; 600,000 B left → 10 minutes
    assert runway_minutes(old + recent, 900_000, window_s=300) == pytest.approx(10.0)


def test_runway_none_when_not_growing_and_zero_when_past() -> None:
    flat = [(float(i), 5.0) for i in range(10)]
    falling = [(float(i), 100.0 - i) for i in range(10)]
    assert runway_minutes(flat, 100) is None
    assert runway_minutes(falling, 1000) is None
    assert runway_minutes([(0.0, 50.0), (1.0, 200.0)], 100) == 0.0
    assert runway_minutes([], 100) is None
    assert runway_minutes([(0.0, 1.0)], 100) is None
    assert runway_minutes([(0.0, 1.0), (0.0, 2.0)], 100) is None


def test_lwm_from_status_only_uses_estimated_capacity() -> None:
    t = checkpoint_thresholds(
        "mariadb",
        "10.11.6-MariaDB",
        None,
        status_checkpoint_max_age=40_050_893,
        adaptive_flushing_lwm_pct=10,
    )
    assert t is not None and t.log_capacity_bytes is None
    # capacity ≈ margin / 0.9 = 44,500,992; the real one is 45,287,424 (2% off)
    assert t.adaptive_lwm_bytes == 4_450_099


def test_printed_target_alone_overrides_only_the_target() -> None:
    t = checkpoint_thresholds(
        "percona", "5.7.44-48", 2 * 48 * MiB, printed_checkpoint_age_target=78_000_000
    )
    assert t is not None and t.source == "formula"
    assert t.checkpoint_target_bytes == 78_000_000 and t.max_bytes == 80_826_164
