"""The backtest replays stored history through the same code as live evaluation."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from tests.alerting.alert_scenario import age_pct, at, make_server, only_rules, store, tick

pytestmark = pytest.mark.django_db


def history_rows():
    """Twenty minutes of a server that crosses the async point twice, purges slowly, and goes
    silent for two minutes (stale)."""
    rows = []
    for t in range(0, 1200, 10):
        if 700 <= t < 820:
            continue  # collection gap
        pct = 90 if 100 <= t < 400 else (85 if 500 <= t < 560 else 50)
        rows.append((t, {**age_pct(pct), "history_list_length": 1000 + (t * 3 if t < 900 else 0),
                         "lsn": 10_000_000 + t * 40_000, "com_commit": t * 7}))
    return rows


RULES = (
    {"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80, "for_s": 30, "keep_firing_s": 40},
    {"name": "hll-rise", "metric": "hll_growth_per_h", "threshold": 0, "for_s": 300, "keep_firing_s": 30},
    {"name": "stale", "metric": "sample_age_s", "threshold": 60, "severity": "critical"},
    {"name": "redo", "metric": "redo_bytes_per_s", "threshold": 30_000, "for_s": 20},
)


def live_incidents(server) -> list[dict]:
    from alerting.models import AlertEvent

    out, open_ = [], {}
    for e in AlertEvent.objects.filter(server=server).select_related("rule").order_by("ts", "pk"):
        if e.state == "firing":
            open_[e.rule.name] = {"rule": e.rule.name, "severity": e.severity, "fired_at": e.ts.isoformat(),
                                  "resolved_at": None}
            out.append(open_[e.rule.name])
        elif e.state == "resolved":
            open_.pop(e.rule.name)["resolved_at"] = e.ts.isoformat()
    return sorted(out, key=lambda r: (r["fired_at"], r["rule"]))


def test_backtest_equals_live_evaluation_on_the_same_data():
    from alerting.evaluation import backtest

    server = make_server()
    only_rules(*RULES)
    store(server, history_rows())
    for t in range(5, 1200, 10):
        tick(t)
    live = live_incidents(server)
    replayed = backtest(server, at(5), at(1195), step_s=10)
    assert replayed == live
    assert {r["rule"] for r in live} == {"ckpt", "hll-rise", "stale", "redo"}  # the scenario exercises each
    assert sum(1 for r in live if r["rule"] == "ckpt") == 2


def test_backtest_command_prints_rule_severity_fired_and_resolved_as_json():
    server = make_server()
    only_rules(RULES[0])
    store(server, history_rows())
    out = StringIO()
    call_command("backtest_alerts", server=server.name, start=at(5).isoformat(), end=at(1195).isoformat(),
                 json=True, stdout=out)
    incidents = json.loads(out.getvalue())
    assert incidents[0] == {"rule": "ckpt", "severity": "warning", "fired_at": at(135).isoformat(),
                            "resolved_at": at(445).isoformat()}  # 40 s keep-firing after 405
    assert [set(r) for r in incidents] == [{"rule", "severity", "fired_at", "resolved_at"}] * 2


def test_backtest_command_refuses_a_time_without_zone():
    from django.core.management.base import CommandError

    make_server()
    with pytest.raises(CommandError, match="time zone"):
        call_command("backtest_alerts", server="alert-db", start="2026-11-20T12:00:00", end=at(60).isoformat())
