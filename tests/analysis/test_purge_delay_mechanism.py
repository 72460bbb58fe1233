"""innodb_max_purge_lag delays DML by (history / limit - 0.5) x 10 ms per row operation, clamped to
innodb_max_purge_lag_delay (trx_purge_dml_delay, MySQL 5.6+ and MariaDB): at the cap's default of 0
no DML is delayed, so the limit's mechanism does not engage even with the history past it."""

from __future__ import annotations

from analysis.mechanisms import MECHANISMS

HOLD = {"history_list_length": [(float(t), 1_000.0 + 1_062.0 * t) for t in range(150)]}  # to ~159k, as held
FLAT = {"history_list_length": [(float(t), 500.0) for t in range(150)]}


def _judge(variable, old, new, context, before=FLAT, after=HOLD):
    return MECHANISMS[variable].evidence(before, after, old, new, context)


def test_a_limit_passed_with_the_delay_capped_at_zero_delays_nothing():
    engaged, words = _judge("innodb_max_purge_lag", "0", "100000", {"max_purge_lag_delay_us": 0.0})
    assert engaged is False and "caps the delay at 0 µs" in words


def test_a_limit_passed_with_a_cap_delays_dml():
    engaged, _ = _judge("innodb_max_purge_lag", "0", "100000", {"max_purge_lag_delay_us": 300000.0})
    assert engaged is True
    # Before 5.6 there is no cap variable: the limit alone decides.
    assert _judge("innodb_max_purge_lag", "0", "100000", {})[0] is True


def test_the_cap_is_judged_against_the_limit_in_force_not_its_own_value():
    assert _judge("innodb_max_purge_lag_delay", "0", "300000", {"max_purge_lag": 0.0})[0] is False
    assert _judge("innodb_max_purge_lag_delay", "0", "300000", {"max_purge_lag": 100000.0})[0] is True
    assert _judge("innodb_max_purge_lag_delay", "0", "300000", {"max_purge_lag": 500000.0})[0] is False
