"""Notifications for real: beat's evaluate_alerts runs on a Celery worker over Redis, a webhook
lands on an HTTP server started here, email goes through Apprise to an SMTP server started here,
and a failing receiver is retried with backoff."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.alerting.alert_scenario import age_pct, make_server, only_rules, store
from tests.alerting.receivers import Receiver, smtp_server
from tests.conftest import wait_for


@pytest.fixture
def receiver():
    r = Receiver(statuses=[500])
    yield r
    r.close()



@pytest.mark.django_db(transaction=True)
def test_worker_evaluates_and_delivers_firing_then_resolved_by_webhook_and_email(
    celery_worker_thread, receiver, settings
):
    from alerting.evaluation import evaluate_alerts
    from alerting.models import NotificationChannel, NotificationDelivery

    settings.INNOWATCH_NOTIFY_RETRY_BASE_S = 0.2
    NotificationChannel.objects.create(name="hook", kind="webhook", target=receiver.url)
    NotificationChannel.objects.create(name="oncall", kind="email", target="dba@example.com, ops@example.com")
    server = make_server()
    only_rules({"name": "ckpt", "metric": "checkpoint_age_pct_of_async", "threshold": 80, "severity": "critical"})
    now = timezone.now()
    store(server, [(-2, age_pct(92))], base=now)

    with smtp_server(settings) as mailbox:
        evaluate_alerts.apply_async()  # as beat sends it
        # Apprise mails each address on its own.
        wait_for(lambda: len(receiver.bodies) == 2 and len(mailbox.messages) == 2, 30,
                 "firing webhook retry and email")
        firing = receiver.bodies[-1]
        assert firing["status"] == "firing" and "ckpt" in firing["text"] and "alert-db" in firing["text"]
        assert receiver.bodies[0] == firing  # the retry resent the same message
        hook = NotificationDelivery.objects.get(channel__kind="webhook")
        wait_for(lambda: NotificationDelivery.objects.filter(pk=hook.pk, status="sent").exists(), 10, "sent status")
        hook.refresh_from_db()
        assert (hook.attempts, hook.response_code, hook.error) == (2, 200, "")
        assert sorted(to for envelope, _ in mailbox.messages for to in envelope) == ["dba@example.com",
                                                                                    "ops@example.com"]
        for _, message in mailbox.messages:
            assert "FIRING" in message["Subject"] and message["From"] == settings.DEFAULT_FROM_EMAIL

        store(server, [(0, age_pct(40))], base=timezone.now())
        evaluate_alerts.apply_async()
        wait_for(lambda: len(receiver.bodies) == 3 and len(mailbox.messages) == 4, 30, "resolved webhook and email")
        assert receiver.bodies[-1]["status"] == "resolved"
        assert all("RESOLVED" in message["Subject"] for _, message in mailbox.messages[2:])
        # The worker marks a delivery sent just after the receiver has it: wait for the record too.
        wait_for(lambda: NotificationDelivery.objects.filter(status="sent").count() == 4, 10, "4 sent deliveries")
    assert NotificationDelivery.objects.exclude(status="sent").count() == 0


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_webhook_is_given_up_after_the_retries_and_recorded_as_failed(celery_worker_thread, settings):
    from alerting import notify
    from alerting.models import NotificationChannel, NotificationDelivery

    settings.INNOWATCH_NOTIFY_RETRY_BASE_S = 0.05
    channel = NotificationChannel.objects.create(name="dead", kind="webhook", target="http://127.0.0.1:9/hook")
    delivery = NotificationDelivery.objects.create(channel=channel, kind="firing", subject="s", payload={"text": "t"})
    notify.deliver_notification.delay(delivery.pk)
    wait_for(lambda: NotificationDelivery.objects.filter(pk=delivery.pk, status="failed").exists(), 60, "failed")
    delivery.refresh_from_db()
    assert delivery.attempts == notify.MAX_RETRIES + 1
    assert "unreachable" in delivery.error and delivery.response_code is None
