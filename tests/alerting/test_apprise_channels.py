"""Notification channels through Apprise, delivered for real: `json://` to an HTTP receiver on
127.0.0.1 and `mailto://` to a local SMTP server (aiosmtpd); a bad URL is refused with a message,
a receiver that is down is retried and the delivery log says so; the URL is stored encrypted."""

from __future__ import annotations

import pytest

from alerting.models import NotificationChannel, NotificationDelivery
from alerting.notify import send
from tests.alerting.alert_scenario import age_pct, make_server, only_rules, store, tick
from tests.alerting.receivers import Receiver, smtp_server
from tests.conftest import free_port

pytestmark = pytest.mark.django_db


def _channel(url: str) -> NotificationChannel:
    channel = NotificationChannel(name="apprise", kind="apprise")
    channel.set_apprise_url(url)
    channel.save()
    return channel


def _fire() -> NotificationDelivery:
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80})
    store(server, [(0, age_pct(95))])
    tick(1)
    return NotificationDelivery.objects.get()


def test_apprise_json_reaches_a_local_http_receiver():
    receiver = Receiver()
    try:
        channel = _channel(f"json://127.0.0.1:{receiver.port}/hook")
        assert "127.0.0.1" not in channel.apprise_url_encrypted  # encrypted at rest
        send(_fire())
        assert receiver.bodies and receiver.bodies[0]["title"].startswith("[innowatch FIRING] alert-db: ckpt")
        assert "checkpoint_age_pct_of_async" in receiver.bodies[0]["message"]
    finally:
        receiver.close()


def test_apprise_mailto_reaches_a_local_smtp_server():
    with smtp_server() as mailbox:
        port = mailbox.port
        _channel(f"mailto://127.0.0.1:{port}?from=innowatch@example.com&to=dba@example.com&secure=no")
        send(_fire())
        assert mailbox.messages and "ckpt" in mailbox.messages[0][1]["Subject"]


def test_an_email_channel_goes_through_apprise_to_the_smtp_server_of_django_s_settings(settings):
    with smtp_server(settings) as mailbox:
        channel = NotificationChannel.objects.create(name="oncall", kind="email", target="dba@example.com")
        delivery = _fire()
        assert delivery.channel == channel
        send(delivery)
        (recipients, message), = mailbox.messages
        assert recipients == ["dba@example.com"] and message["From"] == settings.DEFAULT_FROM_EMAIL
        assert message["Subject"].startswith("[innowatch FIRING] alert-db: ckpt")
        assert "checkpoint_age_pct_of_async" in message.get_body(preferencelist=("plain",)).get_content()


def test_a_receiver_that_is_down_is_retried_and_logged(settings):
    from alerting.notify import deliver_notification

    settings.INNOWATCH_NOTIFY_RETRY_BASE_S = 0
    _channel(f"json://127.0.0.1:{free_port()}/nobody-listens")
    delivery = _fire()
    deliver_notification.apply(args=[delivery.pk])  # runs with its retries, eagerly, here
    delivery.refresh_from_db()
    assert delivery.status == NotificationDelivery.Status.FAILED and delivery.attempts > 1
    assert "Apprise could not deliver" in delivery.error


def test_the_channel_form_refuses_a_url_apprise_cannot_use(admin_client):
    response = admin_client.post("/admin/alerting/notificationchannel/add/", {
        "name": "bad", "kind": "apprise", "apprise_url": "notaservice://x", "min_severity": "warning",
        "send_resolved": "on", "enabled": "on"})
    assert response.status_code == 200 and "Apprise does not recognise this URL" in response.content.decode()


def test_the_url_is_never_shown_back(admin_client):
    response = admin_client.post("/admin/alerting/notificationchannel/add/", {
        "name": "slack", "kind": "apprise", "apprise_url": "slack://TOKENAAAA/TOKENBBBB/TOKENCCCCCCCCCCCCCCCCCCCC",
        "min_severity": "warning", "send_resolved": "on", "enabled": "on"})
    assert response.status_code == 302, response.content[:500]
    channel = NotificationChannel.objects.get(name="slack")
    page = admin_client.get(f"/admin/alerting/notificationchannel/{channel.pk}/change/").content.decode()
    listing = admin_client.get("/admin/alerting/notificationchannel/").content.decode()
    assert "TOKENBBBB" not in page and "TOKENBBBB" not in listing
    assert channel.apprise_url().startswith("slack://TOKENAAAA")


def test_the_email_url_carries_django_s_smtp_settings_as_apprise_reads_them(settings):
    import apprise

    from alerting.notify import email_url

    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_USE_TLS, settings.EMAIL_USE_SSL = (
        "smtp.example.com", 587, True, False)
    settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD = "alerts@example.com", "p@ss/w:rd?&"
    mail = apprise.Apprise.instantiate(email_url("dba@example.com, ops@example.com"))
    assert (mail.smtp_host, mail.port, mail.secure, mail.secure_mode) == ("smtp.example.com", 587, True, "starttls")
    assert (mail.user, mail.password) == ("alerts@example.com", "p@ss/w:rd?&")
    assert sorted(t[1] for t in mail.targets) == ["dba@example.com", "ops@example.com"]
