"""What a person reads in a notification: the value against its threshold, the runway for a
checkpoint-age alert, a link to the server page over the incident, and, once resolved, how long it
lasted and its peak. Messages are built by the real evaluation over stored samples."""

from __future__ import annotations

import datetime as dt
import re
import urllib.parse

import pytest

from alerting.models import NotificationChannel, NotificationDelivery
from tests.alerting.alert_scenario import (
    ASYNC_BYTES,
    MAX_AGE_BYTES,
    age_pct,
    at,
    make_server,
    only_rules,
    store,
    tick,
)

HALF_HOUR = dt.timedelta(minutes=30)

pytestmark = pytest.mark.django_db


@pytest.fixture
def channel():
    # Deliveries are recorded in the evaluation's transaction and sent after it commits: a test
    # transaction never commits, so the payloads are read from the rows.
    return NotificationChannel.objects.create(name="hook", kind="webhook", target="http://127.0.0.1:9/hook")


def _texts(kind: str) -> list[str]:
    return [d.payload["text"] for d in NotificationDelivery.objects.filter(kind=kind).order_by("pk")]


def test_a_resolved_notice_says_how_long_it_lasted_and_its_worst_value(channel):
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80})
    for offset, pct in [(0, 92), (10, 97.5), (20, 90), (30, 40)]:
        store(server, [(offset, age_pct(pct))])
        tick(offset + 1)
    (resolved,) = _texts("resolved")
    assert "lasted 30 s" in resolved
    peak = float(re.search(r"peak ([\d.]+)", resolved).group(1))
    assert peak == pytest.approx(97.5, abs=0.1)


def test_the_peak_of_a_below_threshold_rule_is_its_lowest_value(channel):
    server = make_server()
    only_rules({"name": "ckpt-low", "metric": "checkpoint_age_pct_of_async", "op": "<", "threshold": 10})
    for offset, pct in [(0, 8), (10, 3), (20, 6), (30, 50)]:
        store(server, [(offset, age_pct(pct))])
        tick(offset + 1)
    (resolved,) = _texts("resolved")
    assert float(re.search(r"peak ([\d.]+)", resolved).group(1)) == pytest.approx(3.0, abs=0.1)


def test_a_new_incident_starts_its_peak_afresh(channel):
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80})
    for offset, pct in [(0, 99), (10, 40), (20, 85), (30, 40)]:
        store(server, [(offset, age_pct(pct))])
        tick(offset + 1)
    first, second = _texts("resolved")
    assert "peak 99.0" in first and "peak 85.0" in second


def test_a_checkpoint_age_alert_gives_the_runway_to_the_sync_point(channel):
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80})
    # The age climbs steadily from 80 % to 92 % of the async point over five minutes.
    rows = [(t, age_pct(80 + 12 * (t + 300) / 300)) for t in range(-300, 1, 10)]
    store(server, rows)
    tick(1)
    (firing,) = _texts("firing")
    slope_bytes_per_s = 0.12 * ASYNC_BYTES / 300
    expected_min = (MAX_AGE_BYTES - 0.92 * ASYNC_BYTES) / slope_bytes_per_s / 60
    runway = float(re.search(r"runway: ([\d.]+) min to the sync point", firing).group(1))
    assert runway == pytest.approx(expected_min, rel=0.05)
    assert NotificationDelivery.objects.get().payload["runway_minutes"] == pytest.approx(expected_min, rel=0.05)


def test_a_flat_checkpoint_age_says_no_stall_is_ahead_and_other_alerts_say_nothing_of_runway(channel):
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80},
               {"name": "hll", "metric": "history_list_length", "threshold": 1000})
    store(server, [(t, {**age_pct(90), "history_list_length": 5000}) for t in range(-300, 1, 10)])
    tick(1)
    (firing,) = _texts("firing")
    assert "runway: the checkpoint age is not growing" in firing
    NotificationDelivery.objects.all().delete()
    only_rules({"name": "hll-only", "metric": "history_list_length", "threshold": 1000})
    tick(2)
    (hll,) = _texts("firing")
    assert "runway" not in hll


def test_the_link_opens_the_server_page_over_the_incident(channel, settings):
    settings.INNOWATCH_BASE_URL = "https://innowatch.example.com"
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80, "for_s": 20})
    for offset in (0, 10, 20):
        store(server, [(offset, age_pct(95))])
        tick(offset + 1)
    delivery = NotificationDelivery.objects.get()
    url = urllib.parse.urlsplit(delivery.payload["url"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"https://innowatch.example.com/servers/{server.pk}/"
    query = dict(urllib.parse.parse_qsl(url.query))
    start, end = dt.datetime.fromisoformat(query["start"]), dt.datetime.fromisoformat(query["end"])
    # From half an hour before the alert went pending to half an hour after it fired.
    assert (start, end) == (at(1) - HALF_HOUR, at(21) + HALF_HOUR)
    assert delivery.payload["url"] in delivery.payload["text"]


def test_the_alert_evaluator_reports_its_last_run_in_metrics(admin_client):
    from prometheus_client.parser import text_string_to_metric_families

    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80})
    store(server, [(0, age_pct(50))])
    tick(1)
    body = admin_client.get("/metrics").content.decode()
    values = {s.name: s.value for f in text_string_to_metric_families(body) for s in f.samples}
    assert values["innowatch_alert_evaluation_servers"] == 1
    assert 0 <= values["innowatch_alert_evaluation_seconds"] < 60
    assert values["innowatch_alert_evaluation_age_seconds"] >= 0

