"""Live evaluation against the real PostgreSQL: lifecycle, derived metrics, grouping, silences."""

from __future__ import annotations

import pytest

from tests.alerting.alert_scenario import (
    ASYNC_BYTES,
    MAX_AGE_BYTES,
    T0,
    age_pct,
    at,
    install_builtin_rules,
    make_server,
    only_rules,
    store,
    tick,
    transitions,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def webhook_channel(db):
    from alerting.models import NotificationChannel

    return NotificationChannel.objects.create(name="hook", kind="webhook", target="http://127.0.0.1:9/none")


def deliveries():
    from alerting.models import NotificationDelivery

    return list(NotificationDelivery.objects.order_by("pk").values_list("kind", "payload"))


def test_builtin_rules_are_installed_and_name_known_metrics():
    from alerting.evaluation import metric_choices
    from alerting.models import AlertRule

    install_builtin_rules()

    builtin = {r.name: r for r in AlertRule.objects.filter(builtin=True)}
    assert {"checkpoint-age-near-async", "checkpoint-age-near-sync", "runway-short", "hll-high", "hll-growing",
            "semaphore-wait-long", "sync-flush-waits", "trx-old", "collection-failing",
            "collection-stale"} <= set(builtin)
    assert all(r.metric in metric_choices() for r in builtin.values())
    assert (builtin["checkpoint-age-near-async"].threshold, builtin["checkpoint-age-near-async"].severity) == (80, "warning")
    assert builtin["checkpoint-age-near-sync"].severity == "critical"


def test_checkpoint_age_is_compared_with_the_servers_own_async_and_stall_points():
    from alerting.evaluation import History

    server = make_server()
    store(server, [(0, {"checkpoint_age_bytes": 28_000_000})])
    values = History.load(server, T0.timestamp() - 900, T0.timestamp() + 5).values_at(T0.timestamp() + 5)
    assert values["checkpoint_age_pct_of_async"] == pytest.approx(100 * 28_000_000 / ASYNC_BYTES)
    # MariaDB 10.5+ has no sync point: user threads stall at max checkpoint age.
    assert values["checkpoint_age_pct_of_sync"] == pytest.approx(100 * 28_000_000 / MAX_AGE_BYTES)
    assert values["sample_age_s"] == 5


def test_runway_is_the_time_to_the_stall_point_at_the_current_redo_rate():
    from alerting.evaluation import History

    server = make_server()
    # Checkpoint age grows 10,000 bytes/s from 20 MB, sampled every 10 s for 5 minutes.
    store(server, [(t, {"checkpoint_age_bytes": 20_000_000 + 10_000 * t}) for t in range(0, 301, 10)])
    now = T0.timestamp() + 300
    values = History.load(server, now - 900, now).values_at(now)
    expected = (MAX_AGE_BYTES - (20_000_000 + 10_000 * 300)) / 10_000 / 60  # ≈ 28.4
    assert values["runway_minutes"] == pytest.approx(expected)


def test_runway_alert_fires_on_a_growing_age_and_resolves_when_it_stops_growing():
    server = make_server()
    only_rules({"name": "runway", "metric": "runway_minutes", "op": "<", "threshold": 15, "severity": "critical"})
    store(server, [(t, {"checkpoint_age_bytes": 10_000_000 + 50_000 * t}) for t in range(0, 301, 10)]
          + [(t, {"checkpoint_age_bytes": 25_000_000}) for t in range(310, 1000, 10)])
    for t in range(5, 1000, 10):
        tick(t)
    states = [(s, off) for _, s, off in transitions(server) if s in ("firing", "resolved")]
    assert [s for s, _ in states] == ["firing", "resolved"]
    assert states[1][1] > 310  # a flat age has no stall ahead


def test_alert_is_pending_for_its_for_duration_then_fires_then_keeps_firing_then_resolves():
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80, "for_s": 30,
                "keep_firing_s": 20})
    pct = {0: 70, 10: 90, 20: 90, 30: 90, 40: 90, 50: 70, 60: 90, 70: 70, 80: 70, 90: 70, 100: 70}
    store(server, [(t, age_pct(p)) for t, p in pct.items()])
    for t in pct:
        tick(t + 1)
    assert transitions(server) == [
        ("ckpt", "pending", 11), ("ckpt", "firing", 41), ("ckpt", "resolved", 91),
    ]


def test_a_pending_alert_that_clears_before_its_for_duration_never_notifies(webhook_channel):
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80, "for_s": 60})
    store(server, [(0, age_pct(90)), (10, age_pct(90)), (20, age_pct(60))])
    for t in (1, 11, 21):
        tick(t)
    assert [s for _, s, _ in transitions(server)] == ["pending", "inactive"]
    assert deliveries() == []


def test_a_flapping_series_sends_one_notification_per_state_change(webhook_channel):
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80, "keep_firing_s": 30})
    flapping = [(t, age_pct(90 if (t // 10) % 2 == 0 else 70)) for t in range(0, 200, 10)]
    calm = [(t, age_pct(60)) for t in range(200, 300, 10)]
    store(server, flapping + calm)
    for t in range(0, 300, 10):
        tick(t + 1)
    assert [kind for kind, _ in deliveries()] == ["firing", "resolved"]
    assert [s for _, s, _ in transitions(server)] == ["firing", "resolved"]


def test_alerts_firing_together_on_one_server_are_one_message(webhook_channel):
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80},
               {"name": "hll", "metric": "history_list_length", "threshold": 1000},
               {"name": "trx", "metric": "trx_oldest_active_s", "threshold": 3600})
    store(server, [(0, {**age_pct(90), "history_list_length": 5000, "trx_oldest_active_s": 10})])
    tick(1)
    [(kind, payload)] = deliveries()
    assert kind == "firing" and payload["server"] == "alert-db"
    assert sorted(a["rule"] for a in payload["alerts"]) == ["ckpt", "hll"]
    assert "ckpt" in payload["text"] and "hll" in payload["text"]


def test_rules_apply_only_to_their_servers_and_tags():
    from alerting.models import AlertState

    tagged, other = make_server("tagged", tags=["primary"]), make_server("other", tags=["replica"])
    [rule] = only_rules({"name": "hll", "metric": "history_list_length", "threshold": 10, "tags": ["primary"]})
    for server in (tagged, other):
        store(server, [(0, {"history_list_length": 100})])
    tick(1)
    assert set(AlertState.objects.filter(state="firing").values_list("server__name", flat=True)) == {"tagged"}
    rule.tags = []
    rule.save()
    rule.servers.set([other])
    tick(2)
    assert AlertState.objects.get(server=other, rule=rule).state == "firing"


def test_stale_collection_and_failing_polls_alert():
    from alerting.models import AlertState
    from servers.models import CollectorRun

    server = make_server()
    only_rules({"name": "stale", "metric": "sample_age_s", "threshold": 60},
               {"name": "failing", "metric": "poll_failing", "op": ">=", "threshold": 1})
    store(server, [(0, {"history_list_length": 1})])
    CollectorRun.objects.create(server=server, kind="innodb", started_at=at(30), status="failed", error_kind="unreachable")
    tick(31)
    assert AlertState.objects.get(rule__name="failing").state == "firing"
    assert AlertState.objects.get(rule__name="stale").state == "inactive"
    tick(61)
    assert AlertState.objects.get(rule__name="stale").state == "firing"


def test_a_silence_mutes_matching_alerts_and_a_late_firing_notice_follows_its_end(webhook_channel, admin_user):
    from alerting.models import AlertEvent, Silence

    server, other = make_server(), make_server("other-db", tags=["replica"])
    only_rules({"name": "hll", "metric": "history_list_length", "threshold": 10})
    Silence.objects.create(server=server, starts_at=at(0), ends_at=at(30), author=admin_user, comment="reindex")
    Silence.objects.create(rule_name="not-this-rule", starts_at=at(0), ends_at=at(300), author=admin_user, comment="x")
    for s in (server, other):
        store(s, [(t, {"history_list_length": 100}) for t in range(0, 60, 10)])
    tick(1)
    assert [p["server"] for _, p in deliveries()] == ["other-db"]
    assert AlertEvent.objects.get(server=server, state="firing").silenced
    tick(11)
    assert len(deliveries()) == 1
    tick(41)  # the silence ended while the alert still fires: tell now, once
    tick(51)
    assert [p["server"] for _, p in deliveries()] == ["other-db", "alert-db"]


def test_silence_matchers_on_tag_and_severity(admin_user):
    from alerting.evaluation import silence_matcher
    from alerting.models import Silence

    server = make_server(tags=["primary", "eu"])
    warn, crit = only_rules({"name": "w", "metric": "history_list_length", "threshold": 1},
                            {"name": "c", "metric": "history_list_length", "threshold": 1, "severity": "critical"})
    Silence.objects.create(tag="eu", severity="warning", starts_at=at(0), ends_at=at(60), author=admin_user, comment="eu")
    muted = silence_matcher(server, at(10))
    assert muted(warn) and not muted(crit)
    assert not silence_matcher(server, at(61))(warn)
    assert not silence_matcher(make_server("us", tags=["us"]), at(10))(warn)


def test_a_maintenance_annotation_silences_its_server_for_its_range(webhook_channel):
    from annotations.models import Annotation

    server, other = make_server(), make_server("other-db", tags=["replica"])
    only_rules({"name": "hll", "metric": "history_list_length", "threshold": 10})
    fields = {f.name for f in Annotation._meta.get_fields()}
    extra = {k: v for k, v in {"text": "maintenance window"}.items() if k in fields}
    Annotation.objects.create(time=at(0), time_end=at(100), server=server, kind="maintenance", **extra)
    for s in (server, other):
        store(s, [(0, {"history_list_length": 100})])
    tick(1)
    assert [p["server"] for _, p in deliveries()] == ["other-db"]


def test_acknowledging_records_who_and_why_and_annotates(admin_user):
    from alerting.evaluation import acknowledge
    from alerting.models import AlertState
    from annotations.models import Annotation

    server = make_server()
    only_rules({"name": "hll", "metric": "history_list_length", "threshold": 10})
    store(server, [(0, {"history_list_length": 100})])
    tick(1)
    state = AlertState.objects.get(rule__name="hll")
    acknowledge(state, admin_user, "purge threads raised", now=at(5))
    state.refresh_from_db()
    assert (state.acknowledged_by, state.ack_note) == (admin_user, "purge threads raised")
    assert Annotation.objects.filter(kind="alert", server=server).count() == 1


def test_synthetic_and_imported_servers_are_not_evaluated_live():
    from alerting.models import AlertState

    make_server("synth", synthetic=True)
    make_server("imported", imported=True)
    only_rules({"name": "stale", "metric": "sample_age_s", "threshold": 60})
    tick(1)
    assert not AlertState.objects.exists()


def test_beat_evaluates_alerts_every_10_s_and_drops_late_runs():
    from dashboard.celery import app

    entry = app.conf.beat_schedule["evaluate-alerts"]
    assert (entry["task"], entry["schedule"], entry["options"]["expires"]) == ("alerting.evaluate_alerts", 10.0, 10.0)
    app.loader.import_default_modules()  # what a worker does at start: autodiscovery
    assert "alerting.evaluate_alerts" in app.tasks and "alerting.deliver_notification" in app.tasks
