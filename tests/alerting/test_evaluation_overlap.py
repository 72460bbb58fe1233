"""An alert evaluation slower than the beat's tick is not joined by the next one (at thousands of
servers one takes longer than 10 s, and the thread pool ignores time limits), and it reads each
server's history once for the rules and the burst triggers, many servers per query."""

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


def _evaluation_queries() -> list[dict]:
    with CaptureQueriesContext(connection) as queries:
        evaluate_alerts_now(dt.datetime.now(dt.UTC))
    return queries.captured_queries


def test_an_evaluation_reads_samples_once_per_batch_of_servers_and_its_queries_do_not_grow_with_them(
        local_server, monkeypatch):
    from alerting import evaluation

    monkeypatch.setattr(evaluation, "SERVERS_PER_BATCH", 50)
    for n in range(3):
        Server.objects.create(name=f"fleet-{n}", host=f"db{n}.example.net", poll_interval_s=10)
    few = _evaluation_queries()
    sample_reads = [q for q in few if 'FROM "dashboard_innodbsample"' in q["sql"]]
    # the last sample before the window and the window itself, for all the servers at once: not
    # again for the burst triggers
    assert len(sample_reads) == 2
    for n in range(3, 40):
        Server.objects.create(name=f"fleet-{n}", host=f"db{n}.example.net", poll_interval_s=10)
    many = _evaluation_queries()
    assert len(many) == len(few), [q["sql"][:80] for q in many]


def test_histories_loaded_together_are_each_servers_own(local_server):
    from alerting.evaluation import History
    from timeseries.models import InnodbSample

    other = Server.objects.create(name="other", host="db9.example.net", poll_interval_s=10)
    empty = Server.objects.create(name="empty", host="db8.example.net", poll_interval_s=10)
    t0 = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
    for server, offset, hll in ((local_server, 0, 100), (other, 5, 900)):
        InnodbSample.objects.bulk_create(
            InnodbSample(server=server, ts=t0 + dt.timedelta(seconds=offset + 10 * k), history_list_length=hll + k)
            for k in range(-3, 6))
    start, end = (t0 + dt.timedelta(seconds=1)).timestamp(), (t0 + dt.timedelta(seconds=40)).timestamp()
    together = History.load_many([empty, other, local_server], start, end)
    for server in (local_server, other, empty):
        alone = History.load(server, start, end)
        assert together[server.pk].samples == alone.samples
        assert together[server.pk].server is server
    mine = [s["history_list_length"] for s in together[local_server.pk].samples]
    assert mine == [100, 101, 102, 103, 104]  # the one at t0 (before the window), then 10 s .. 40 s
    assert [s["history_list_length"] for s in together[other.pk].samples] == [899, 900, 901, 902, 903]
    assert together[empty.pk].samples == [] and together[empty.pk].runs == []


def test_every_server_is_evaluated_across_batches(local_server, monkeypatch):
    from alerting import evaluation
    from alerting.models import AlertRule, AlertState

    monkeypatch.setattr(evaluation, "SERVERS_PER_BATCH", 2)
    for n in range(4):
        Server.objects.create(name=f"fleet-{n}", host=f"db{n}.example.net", poll_interval_s=10)
    polled = Server.objects.filter(enabled=True, imported=False, synthetic=False)
    evaluate_alerts_now(dt.datetime.now(dt.UTC))
    assert health.last_evaluation()["servers"] == polled.count() == 5
    rules = AlertRule.objects.filter(enabled=True).count()
    assert rules > 0
    for server in polled:
        assert AlertState.objects.filter(server=server).count() == rules, server.name
