"""Webhooks receivers can trust: http(s) only, an HMAC-SHA256 signature under the channel's secret,
and a body an Alertmanager webhook receiver reads as it is, checked by a real HTTP receiver."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from alerting.notify import DeliveryError, send_webhook
from tests.alerting.alert_scenario import age_pct, make_server, only_rules, store, tick
from tests.alerting.receivers import Receiver

SECRET = "s3cret-shared-with-the-receiver"


def verify(headers: dict, body: bytes) -> bool:
    """What a receiver does with the channel's secret: recompute the signature and compare."""
    timestamp, sent = headers["X-Innowatch-Timestamp"], headers["X-Innowatch-Signature"]
    mine = "sha256=" + hmac.new(SECRET.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(mine, sent)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.mark.django_db
def test_a_firing_alert_arrives_signed_and_in_alertmanager_s_shape(receiver, settings):
    from alerting.models import NotificationChannel, NotificationDelivery
    from alerting.notify import send

    settings.INNOWATCH_BASE_URL = "https://innowatch.example"
    channel = NotificationChannel(name="am", kind="webhook", target=receiver.url)
    channel.set_signing_secret(SECRET)
    channel.save()
    assert SECRET not in channel.signing_secret_encrypted
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80})
    store(server, [(0, age_pct(95))])
    tick(1)
    delivery = NotificationDelivery.objects.get(channel=channel)
    send(delivery)
    headers, body = receiver.requests[-1]
    assert verify(headers, body)
    message = json.loads(body)
    assert message["version"] == "4" and message["status"] == "firing" and message["receiver"] == "innowatch"
    alert = message["alerts"][0]
    assert alert["labels"] == {"alertname": "ckpt", "server": server.name, "severity": "warning",
                               "metric": "checkpoint_age_pct_of_async"}
    assert alert["status"] == "firing" and alert["endsAt"].startswith("0001-01-01")
    assert alert["generatorURL"] == f"https://innowatch.example/servers/{server.pk}/"
    assert alert["rule"] == "ckpt"  # innowatch's own fields stay beside Alertmanager's
    assert f"https://innowatch.example/servers/{server.pk}/" in message["text"]


def test_a_tampered_body_fails_the_check(receiver):
    send_webhook(receiver.url, {"text": "hello"}, SECRET)
    headers, body = receiver.requests[-1]
    assert verify(headers, body)
    assert not verify(headers, body.replace(b"hello", b"hellO"))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://127.0.0.1/x", "ftp://127.0.0.1/"])
def test_only_http_and_https_webhooks_are_sent(url):
    with pytest.raises(DeliveryError, match="must be http"):
        send_webhook(url, {"text": "x"})


@pytest.mark.django_db
def test_the_channel_form_refuses_a_non_http_webhook_with_a_message(admin_client):
    response = admin_client.post("/admin/alerting/notificationchannel/add/", {
        "name": "bad", "kind": "webhook", "target": "file:///etc/passwd", "min_severity": "warning",
        "send_resolved": "on", "enabled": "on"})
    assert response.status_code == 200
    assert "A webhook needs an http:// or https:// URL with a host." in response.content.decode()


@pytest.mark.django_db
def test_a_resolved_notice_says_how_long_it_lasted_and_a_latch_alert_names_the_latch():
    import datetime as dt
    from types import SimpleNamespace

    from alerting.models import AlertRule
    from alerting.notify import build_message
    from timeseries.models import SemaphoreWaitSample
    from timeseries.partitions import ensure_partitions_for

    server = make_server()
    now = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)
    ensure_partitions_for({now}, tables=["dashboard_semaphorewaitsample"])
    SemaphoreWaitSample.objects.create(server=server, ts=now - dt.timedelta(seconds=5), seq=0, thread_id=77,
                                       file="buf0flu.cc", line=1234, seconds=71.0, latch="RW-latch",
                                       created_file="dict0dict.cc", created_line=1627)
    rule = AlertRule(name="semaphore-wait-long", metric="semaphore_longest_wait_s", op=">", threshold=60,
                     severity="critical")
    since = (now - dt.timedelta(minutes=4, seconds=12)).timestamp()
    notice = SimpleNamespace(rule=rule, kind="resolved", state=SimpleNamespace(last_value=12.0), event=None,
                             firing_since=since)
    _, text, payload = build_message(server, [notice], now)
    assert "lasted 4 min 12 s" in text
    assert "created at dict0dict.cc:1627" in payload["cause"]["text"] and payload["cause"]["thread_id"] == 77
