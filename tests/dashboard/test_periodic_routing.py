"""The periodic tasks go to a queue of their own when INNOWATCH_PERIODIC_QUEUE is set (a worker of
their own at thousands of servers), and to the poll queue when it is not; polls never move."""

from __future__ import annotations

import pytest

from dashboard.celery import PERIODIC_TASKS, app

QUEUE = "innowatch-test-periodic"


def _queue(name: str, **options) -> str:
    return app.amqp.router.route(options, name, (), {})["queue"].name


def test_without_the_setting_everything_goes_to_the_default_queue(settings):
    settings.INNOWATCH_PERIODIC_QUEUE = ""
    for name in [*PERIODIC_TASKS, "collectors.poll_servers", "collectors.schedule_polls"]:
        assert _queue(name) == settings.CELERY_TASK_DEFAULT_QUEUE


def test_with_it_the_periodic_tasks_move_and_the_polls_and_explicit_queues_stay(settings):
    settings.INNOWATCH_PERIODIC_QUEUE = QUEUE
    assert {_queue(name) for name in PERIODIC_TASKS} == {QUEUE}
    for name in ("collectors.poll_servers", "collectors.poll_server", "collectors.schedule_polls",
                 "collectors.heartbeat", "collectors.poll_disks"):
        assert _queue(name) == settings.CELERY_TASK_DEFAULT_QUEUE
    assert _queue("alerting.evaluate_alerts", queue="elsewhere") == "elsewhere"


def test_every_beat_entry_but_the_fan_out_and_the_heartbeat_is_a_periodic_task():
    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert scheduled - PERIODIC_TASKS == {"collectors.schedule_polls", "collectors.heartbeat"}
    assert PERIODIC_TASKS <= scheduled


@pytest.mark.django_db
def test_an_evaluation_sent_through_the_broker_lands_on_the_periodic_queue(settings, redis_client):
    from alerting.evaluation import evaluate_alerts

    settings.INNOWATCH_PERIODIC_QUEUE = QUEUE
    redis_client.delete(QUEUE)
    before = redis_client.llen(settings.CELERY_TASK_DEFAULT_QUEUE)
    try:
        evaluate_alerts.apply_async()
        assert redis_client.llen(QUEUE) == 1
        assert redis_client.llen(settings.CELERY_TASK_DEFAULT_QUEUE) == before
    finally:
        redis_client.delete(QUEUE)
