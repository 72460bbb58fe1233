"""An alert evaluation slower than the beat's tick is not joined by the next one (at thousands of
servers one takes longer than 10 s, and the thread pool ignores time limits), and it reads each
server's history once for the rules and the burst triggers."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from alerting import health
from alerting.evaluation import EVALUATING_KEY, evaluate_alerts, evaluate_alerts_now
from servers.models import Server

pytestmark = pytest.mark.django_db


def test_a_tick_while_an_evaluation_runs_is_skipped_and_the_next_one_runs(local_server):
    client = health.redis_client()
    client.delete(health.KEY, EVALUATING_KEY)
    running = client.lock(EVALUATING_KEY, timeout=60, blocking=False)
    assert running.acquire()
    try:
        evaluate_alerts.run()
        assert health.last_evaluation() is None  # nothing evaluated: the other one is still at it
    finally:
        running.release()
    evaluate_alerts.run()
    assert health.last_evaluation()["servers"] == Server.objects.filter(enabled=True, imported=False,
                                                                        synthetic=False).count()
    assert client.get(EVALUATING_KEY) is None  # released when done


def test_each_servers_samples_are_read_once_per_evaluation(local_server):
    for n in range(3):
        Server.objects.create(name=f"fleet-{n}", host=f"db{n}.example.net", poll_interval_s=10)
    servers = Server.objects.filter(enabled=True, imported=False, synthetic=False).count()
    with CaptureQueriesContext(connection) as queries:
        evaluate_alerts_now(dt.datetime.now(dt.UTC))
    sample_reads = [q for q in queries.captured_queries if 'FROM "dashboard_innodbsample"' in q["sql"]]
    # the last sample before the window and the window itself, once per server: not again for the triggers
    assert len(sample_reads) == 2 * servers
