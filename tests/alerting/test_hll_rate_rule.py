"""The rate-aware history-list rule on a real capture: a reporting session holds a consistent
snapshot for 150 s under 1,000 autocommit updates/s on the local MariaDB (PROVENANCE.md); the rule
fires while the view is held and resolves once it is committed. hll-growing (30 min) never would."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from alerting.evaluation import backtest, minutes_to_level
from alerting.models import AlertRule
from collectors.imports import import_capture
from tests.alerting.alert_scenario import install_builtin_rules

CAPTURE = Path(__file__).resolve().parent.parent / "fixtures" / "captures" / "mariadb-10.11--held-snapshot.jsonl.gz"
HELD_FROM = dt.datetime(2026, 11, 24, 11, 32, 25, tzinfo=dt.UTC)
COMMITTED = dt.datetime(2026, 11, 24, 11, 34, 55, tzinfo=dt.UTC)


def test_minutes_to_level():
    assert minutes_to_level([(0, 0.0), (60, 1000.0)], 61_000) == pytest.approx(60.0)
    assert minutes_to_level([(0, 500.0), (60, 400.0)], 1000) == float("inf")
    assert minutes_to_level([(0, 2000.0), (60, 2100.0)], 1000) == 0.0
    assert minutes_to_level([(0, 1.0)], 1000) is None


@pytest.mark.django_db
def test_a_held_snapshot_fires_the_rate_aware_rule_while_held_and_resolves_after():
    install_builtin_rules()
    server = import_capture(CAPTURE, "held-snapshot").server
    rules = list(AlertRule.objects.filter(name__in=["hll-high-within-the-hour", "hll-growing", "hll-high"]))
    incidents = backtest(server, HELD_FROM - dt.timedelta(seconds=80), COMMITTED + dt.timedelta(seconds=110),
                         step_s=5, rules=rules)
    fired = [i for i in incidents if i["rule"] == "hll-high-within-the-hour"]
    assert len(fired) == 1, incidents
    fired_at = dt.datetime.fromisoformat(fired[0]["fired_at"])
    assert HELD_FROM < fired_at < HELD_FROM + dt.timedelta(seconds=120)
    resolved_at = dt.datetime.fromisoformat(fired[0]["resolved_at"])
    assert COMMITTED < resolved_at < COMMITTED + dt.timedelta(seconds=110)
    assert not [i for i in incidents if i["rule"] in ("hll-growing", "hll-high")]


@pytest.mark.django_db
def test_a_history_list_alert_names_the_oldest_view_holder_and_others_do_not():
    from types import SimpleNamespace

    from alerting.notify import build_message

    install_builtin_rules()
    server = import_capture(CAPTURE, "held-snapshot").server
    now = HELD_FROM + dt.timedelta(seconds=100)
    hll_rule = AlertRule.objects.get(name="hll-high-within-the-hour")
    age_rule = AlertRule.objects.get(name="checkpoint-age-near-async")
    notice = lambda rule: SimpleNamespace(rule=rule, kind="firing", state=SimpleNamespace(last_value=12.0),  # noqa: E731
                                          event=None)
    _, text, payload = build_message(server, [notice(hll_rule)], now)
    assert "likely cause: oldest read view: thread 1539 reporting@127.0.0.1, open 9" in text
    assert (payload["cause"]["thread_id"], payload["cause"]["user"]) == (1539, "reporting")
    _, text, payload = build_message(server, [notice(age_rule)], now)
    assert "cause" not in payload and "read view" not in text


@pytest.mark.django_db
def test_the_alert_page_names_the_oldest_view_holder_escaped(admin_client):
    from django.utils import timezone

    from alerting.models import AlertState
    from tests.alerting.alert_scenario import make_server
    from timeseries.models import ReadViewHolder

    install_builtin_rules()
    server = make_server()
    rule = AlertRule.objects.get(name="hll-high-within-the-hour")
    AlertState.objects.create(rule=rule, server=server, state="firing", last_value=14.0)
    ReadViewHolder.objects.create(server=server, ts=timezone.now(), rank=0, thread_id=4242, user="app<b>",
                                  host="10.0.0.5", age_s=8000, statement="SELECT <script>1</script>")
    page = admin_client.get("/alerts/").content.decode()
    assert "likely cause: oldest read view: thread 4242 app&lt;b&gt;@10.0.0.5, open 8000 s" in page
    assert "<script>1</script>" not in page
