"""Tuning-change reports and the checkpoint-age alert on a real capture of the local MariaDB 10.11
(see tests/fixtures/captures/PROVENANCE.md): sysbench oltp_write_only at a steady rate, adaptive
flushing OFF, then switched ON mid-run.

The effect report: the detected `innodb_adaptive_flushing: OFF → ON` annotation's effect report moves the
same way, by about as much, as the captured SHOW GLOBAL STATUS counters computed here by hand.
The alert: evaluated tick by tick over the imported samples, the checkpoint-age alert fires before the
max checkpoint age (the stall point on 10.5+) and resolves after the switch, with exactly one
firing and one resolved webhook."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest

from tests.alerting.alert_scenario import install_builtin_rules
from tests.alerting.test_alerting_delivery import Receiver

CAPTURE = Path(__file__).parent.parent / "fixtures" / "captures" / "mariadb-10.11--adaptive-flushing-on.jsonl.gz"
# The capture: 290 s OFF, then 200 s ON. The last 45 s before the switch (all workers at their rate)
# against 45 s after the first minute ON.
WINDOW_S, SETTLE_S = 45, 60
# The beat evaluates every 10 s; the age stayed above 80 % of the async point for about 20 s before
# the switch, so with `for` 15 s a 10 s tick fires or not depending on its phase. Tick every 5 s.
EVALUATION_STEP_S = 5


def captured_status() -> list[tuple[dt.datetime, dict[str, str]]]:
    rows = []
    with gzip.open(CAPTURE, "rt", encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if item["kind"] == "global_status":
                rows.append((dt.datetime.fromisoformat(item["ts"]), dict(item["rows"])))
    return sorted(rows, key=lambda r: r[0])


def counter_rate(rows, name: str) -> float:
    """Δcounter/Δt across the window: the mean of the per-interval rates, weighted by time."""
    (t0, first), (t1, last) = rows[0], rows[-1]
    return (int(last[name]) - int(first[name])) / (t1 - t0).total_seconds()


def gauge_mean(rows, name: str) -> float:
    return sum(int(r[name]) for _, r in rows) / len(rows)


def by_hand(rows, start: dt.datetime, end: dt.datetime) -> dict[str, float]:
    inside = [r for r in rows if start <= r[0] <= end]
    return {
        "pages_flushed_per_s": counter_rate(inside, "Innodb_buffer_pool_pages_flushed"),
        "redo_bytes_per_s": counter_rate(inside, "Innodb_os_log_written"),
        "commits_per_s": counter_rate(inside, "Com_commit"),
        "checkpoint_age_bytes": gauge_mean(inside, "Innodb_checkpoint_age"),
    }


def pct_change(before: float, after: float) -> float:
    return 100.0 * (after - before) / before


@pytest.fixture
def imported(db):
    from annotations.models import Annotation
    from collectors.imports import import_capture

    result = import_capture(CAPTURE, "captured-mariadb-10.11")
    assert result.created and result.samples > 150, result.warnings[:5]
    switch = Annotation.objects.get(server=result.server, kind=Annotation.Kind.VARIABLE_CHANGE,
                                    text__contains="innodb_adaptive_flushing")
    assert "innodb_adaptive_flushing: OFF → ON" in switch.text
    return result.server, switch


def test_effect_report_of_the_detected_switch_moves_like_the_captured_status_counters(imported, client, api_token):
    server, switch = imported
    response = client.get(f"/api/v1/annotations/{switch.pk}/effect?window={WINDOW_S}s&settle={SETTLE_S}s",
                          HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.status_code == 200, response.content
    metrics = response.json()["metrics"]
    rows = captured_status()
    window, settle = dt.timedelta(seconds=WINDOW_S), dt.timedelta(seconds=SETTLE_S)
    before = by_hand(rows, switch.time - window, switch.time)
    after = by_hand(rows, switch.time + settle, switch.time + settle + window)
    for name in ("pages_flushed_per_s", "checkpoint_age_bytes", "redo_bytes_per_s", "commits_per_s"):
        reported = metrics[name]
        # Each window's mean as the counters give it: a report with the windows swapped fails here.
        assert reported["before"]["mean"] == pytest.approx(before[name], rel=0.1, abs=5), (name, "before")
        assert reported["after"]["mean"] == pytest.approx(after[name], rel=0.1, abs=5), (name, "after")
    # What the switch did: flushing started and the checkpoint age fell, by a lot, in both views.
    for name in ("pages_flushed_per_s", "checkpoint_age_bytes"):
        expected = after[name] - before[name]
        reported = metrics[name]["after"]["mean"] - metrics[name]["before"]["mean"]
        assert abs(expected) > 0.3 * max(before[name], after[name]), f"{name}: no clear change in the capture"
        assert (reported > 0) == (expected > 0), (name, reported, expected)
        assert reported == pytest.approx(expected, rel=0.2), name
        if metrics[name]["change_pct"] is not None:
            assert (metrics[name]["change_pct"] > 0) == (expected > 0), name
    assert metrics["checkpoint_age_bytes"]["change_pct"] < -50
    # The workload ran at a fixed rate: throughput stayed put in both views.
    assert abs(pct_change(before["commits_per_s"], after["commits_per_s"])) < 5
    assert abs(metrics["commits_per_s"]["change_pct"]) < 5


def evaluate_tick_by_tick(server, start: dt.datetime, end: dt.datetime) -> None:
    """Live evaluation (evaluate_server, the code behind the beat task) at each tick with explicit
    `now`, over the imported samples: evaluate_alerts_now itself skips imported servers."""
    from alerting.evaluation import WINDOW_S as HISTORY_S
    from alerting.evaluation import History, applies_to, evaluate_server
    from alerting.models import AlertRule

    rules = [r for r in AlertRule.objects.filter(enabled=True) if applies_to(r, server)]
    history = History.load(server, start.timestamp() - HISTORY_S, end.timestamp())
    now = start
    while now <= end:
        evaluate_server(server, rules, history.values_at(now.timestamp()), now)
        now += dt.timedelta(seconds=EVALUATION_STEP_S)


def test_checkpoint_age_alert_fires_before_the_stall_point_and_resolves_after_adaptive_flushing_is_on(imported):
    from alerting.models import AlertEvent, AlertRule, NotificationChannel, NotificationDelivery
    from alerting.notify import deliver_notification

    server, switch = imported
    install_builtin_rules()
    AlertRule.objects.exclude(name__in=["checkpoint-age-near-async", "checkpoint-age-near-sync"]).update(enabled=False)
    receiver = Receiver()
    NotificationChannel.objects.create(name="hook", kind="webhook", target=receiver.url)
    rows = captured_status()
    try:
        evaluate_tick_by_tick(server, rows[0][0], rows[-1][0])
        # No commit happens inside this test's transaction: send each queued delivery here, for real.
        for delivery in NotificationDelivery.objects.order_by("pk"):
            deliver_notification.apply(args=[delivery.pk])
    finally:
        receiver.close()
    assert [b["status"] for b in receiver.bodies] == ["firing", "resolved"]
    assert [b["alerts"][0]["rule"] for b in receiver.bodies] == ["checkpoint-age-near-async"] * 2
    fired = AlertEvent.objects.get(rule__name="checkpoint-age-near-async", state="firing")
    resolved = AlertEvent.objects.get(rule__name="checkpoint-age-near-async", state="resolved")
    stalled = [ts for ts, r in rows if int(r["Innodb_checkpoint_age"]) >= int(r["Innodb_checkpoint_max_age"])]
    assert not stalled or fired.ts < stalled[0]
    assert fired.ts < switch.time < resolved.ts
    assert not AlertEvent.objects.filter(rule__name="checkpoint-age-near-sync").exists()
