"""The fan-out's cost per tick (schedule_polls) at 500 and 5,000 registered servers polled every 10 s.

Each tick is called directly with a simulated clock one second apart, so 20 ticks take well under
20 s of wall time; the polls it enqueues go to the bench's broker queue and are deleted afterwards.
The first tick reads the roster from PostgreSQL (and every server is due at once): it is reported
apart as `schedule_polls_sync_ms_*`. A flat fan-out costs the same per enqueued poll at both sizes.
"""

from __future__ import annotations

import statistics
import time

from django.conf import settings

from collectors.scheduling import redis_client
from collectors.tasks import schedule_polls
from servers.models import Server

PREFIX = "fanout-bench-"


def _register(count: int) -> None:
    Server.objects.filter(name__startswith=PREFIX).delete()
    Server.objects.bulk_create(
        Server(name=f"{PREFIX}{n:05d}", host=f"db{n}.fanout.example.net", user="monitor", poll_interval_s=10)
        for n in range(count))
    Server.objects.filter(name__startswith=PREFIX).first().save()  # bulk_create sends no signal: mark the roster


def _drop_queued() -> None:
    client = redis_client()
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    for key in client.scan_iter(match=f"{queue}*"):
        if client.type(key) == b"list":
            client.delete(key)


def ticks(count: int, seconds: int = 20) -> dict:
    _register(count)
    base = time.time()
    spent, enqueued = [], []
    try:
        for t in range(seconds):
            began = time.perf_counter()
            enqueued.append(schedule_polls(now_s=base + t))
            spent.append((time.perf_counter() - began) * 1000)
            if t % 5 == 4:
                _drop_queued()
    finally:
        _drop_queued()
    steady, steady_enqueued = spent[11:], enqueued[11:]  # after the first interval's burst
    per_tick = statistics.median(steady)
    return {
        f"schedule_polls_ms_at_{count}_servers": per_tick,
        f"schedule_polls_sync_ms_at_{count}_servers": spent[0],
        f"schedule_polls_enqueued_per_tick_at_{count}_servers": statistics.median(steady_enqueued),
        f"schedule_polls_us_per_enqueued_poll_at_{count}_servers":
            sum(steady) / max(sum(steady_enqueued), 1) * 1000,
    }


def fanout_figures() -> dict:
    out = {}
    try:
        for count in (500, 5000):
            out.update(ticks(count))
    finally:
        Server.objects.filter(name__startswith=PREFIX).delete()
    out["schedule_polls_flatness"] = (out["schedule_polls_us_per_enqueued_poll_at_5000_servers"]
                                      / out["schedule_polls_us_per_enqueued_poll_at_500_servers"])
    return out
