"""What keeps a pass over thousands of servers cheap must not change what it decides: the
thresholds from the few variables they need, the values at a sample computed once, and inactive
rules not rewritten at every tick."""

from __future__ import annotations

import pytest

from alerting.evaluation import History, server_thresholds, with_threshold_variables
from alerting.models import AlertState
from servers.models import Server
from tests.alerting.alert_scenario import ASYNC_BYTES, age_pct, at, make_server, only_rules, store, tick

pytestmark = pytest.mark.django_db


def test_thresholds_from_the_variables_they_need_equal_those_from_all_of_them(local_server):
    from collectors import polling

    run, _, _ = polling.poll(local_server, {}, force_variables=True)  # stores the real variables
    assert run.status == "ok", run.error
    full = Server.objects.get(pk=local_server.pk)
    few = with_threshold_variables(Server.objects.filter(pk=local_server.pk)).get()
    assert len(full.variables) > 300 and "variables" in few.get_deferred_fields()
    limits = server_thresholds(few, None, None)
    assert limits is not None and limits == server_thresholds(full, None, None)
    mysql = Server.objects.create(name="mysql-8", host="db.example.net", flavor="mysql", version="8.0.36",
                                  variables={"innodb_redo_log_capacity": "104857600", "innodb_log_file_size": "50331648",
                                             "innodb_log_files_in_group": "2", "innodb_page_size": "16384"})
    few = with_threshold_variables(Server.objects.filter(pk=mysql.pk)).get()
    assert server_thresholds(few, None, None).log_capacity_bytes == server_thresholds(mysql, None, None).log_capacity_bytes


def test_inactive_rules_are_not_rewritten_at_every_tick_and_a_change_of_state_is():
    server = make_server()
    (rule,) = only_rules({"name": "near-async", "metric": "checkpoint_age_pct_of_async", "threshold": 80,
                          "for_s": 15})
    store(server, [(k * 10, age_pct(40 + k)) for k in range(4)])  # 40 % .. 43 %: quiet
    tick(20)
    tick(30)
    state = AlertState.objects.get(server=server, rule=rule)
    # as created: both ticks changed only its time and value, which no page shows for a quiet rule
    assert (state.state, state.last_ts, state.last_value) == ("inactive", None, None)
    store(server, [(40, age_pct(90)), (50, age_pct(91)), (60, age_pct(92))])
    tick(40)
    state.refresh_from_db()
    assert (state.state, state.active_since, state.last_ts, round(state.last_value)) == (
        "pending", at(40).timestamp(), at(40).timestamp(), 90)
    tick(50)
    state.refresh_from_db()
    assert (state.state, round(state.last_value)) == ("pending", 91)  # a pending value is shown: written
    tick(60)
    state.refresh_from_db()
    assert (state.state, state.firing_since, round(state.last_value)) == ("firing", at(60).timestamp(), 92)


def test_the_values_at_a_sample_are_the_same_whenever_they_are_asked_for():
    server = make_server()
    store(server, [(k * 10, {**age_pct(50 + k), "history_list_length": 1000 + 50 * k}) for k in range(60)])
    history = History.load(server, at(0).timestamp() - 1, at(600).timestamp())
    last_ts = at(590).timestamp()
    now = history.values_at(last_ts + 7)
    at_sample = History.load(server, at(0).timestamp() - 1, at(600).timestamp()).values_at(last_ts)
    assert now.pop("sample_age_s") == 7 and at_sample.pop("sample_age_s") == 0
    assert now == at_sample
    assert now["checkpoint_age_pct_of_async"] == pytest.approx(100 * int(ASYNC_BYTES * 1.09) / ASYNC_BYTES)
    assert now["hll_growth_per_h"] == pytest.approx(5 * 3600)


def test_a_server_polled_every_ten_minutes_has_values_between_its_polls():
    """Its last sample is older than the evaluation's 15-minute window at times, yet not stale
    (three intervals): the window is the one ending at that sample."""
    server = make_server()
    Server.objects.filter(pk=server.pk).update(poll_interval_s=600)
    server.refresh_from_db()
    store(server, [(0, age_pct(50)), (600, age_pct(60))])
    values = History.load(server, at(1550).timestamp() - 900, at(1550).timestamp()).values_at(at(1550).timestamp())
    assert values["sample_age_s"] == 950
    assert values["checkpoint_age_pct_of_async"] == pytest.approx(100 * int(ASYNC_BYTES * 0.6) / ASYNC_BYTES)
    tick(1550)  # and the evaluation of its batch goes through
    from alerting import health

    assert health.last_evaluation()["servers"] == 1


def test_every_metric_is_the_same_from_its_own_columns_as_from_all_of_them():
    from alerting.evaluation import metric_choices, metric_columns
    from timeseries.models import InnodbSample

    server = make_server()
    numeric = [f.column for f in InnodbSample._meta.concrete_fields
               if f.get_internal_type() in ("BigIntegerField", "IntegerField", "FloatField", "PositiveIntegerField")
               and f.column not in ("server_id", "status_checkpoint_max_age")]  # store() states it
    # every column set, growing (counters advance, the history list and checkpoint age climb)
    store(server, [(k * 10, {c: 1000 * (n + 1) + k * (n + 7) for n, c in enumerate(numeric)}) for k in range(6)])
    start, now = at(-1).timestamp(), at(55).timestamp()
    every_column = [*numeric, "status_checkpoint_max_age"]
    everything = History.load_many([server], start, now, every_column)[server.pk].values_at(now)
    assert everything == History.load(server, start, now).values_at(now)
    assert sum(v is not None for v in everything.values()) > 30
    for name in metric_choices():
        narrow = History.load_many([server], start, now, metric_columns([name]))[server.pk]
        assert narrow.values_at(now)[name] == everything[name], name


def test_the_burst_triggers_read_their_metrics_from_an_evaluation_that_loads_only_what_rules_need():
    from incidents.models import Burst

    server = make_server()
    only_rules({"name": "near-async", "metric": "checkpoint_age_pct_of_async", "threshold": 80})
    store(server, [(k * 10, {**age_pct(30), "threads_running": 80}) for k in range(3)])  # trigger: > 50, 2 polls
    tick(25)
    burst = Burst.objects.get(server=server)
    assert burst.trigger == "threads_running" and "80 threads running" in burst.reason
