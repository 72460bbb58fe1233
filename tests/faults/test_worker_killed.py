"""Real worker processes killed or run side by side: a worker SIGKILLed with polls it has not
stored yet loses none of them (its journal in Redis is stored by the next drain), and two workers
with different host names sharing the broker poll every slot once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]


def start_worker(name: str, log: Path | None = None, pool: str = "threads", concurrency: int = 4,
                 **env: str) -> subprocess.Popen:
    """`celery worker -n <name>@%h` on the test queue, database and Redis, in its own session;
    with `log`, each task it runs is logged there (INFO)."""
    from django.conf import settings
    from django.db import connection

    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "dashboard.settings_test",
               "INNOWATCH_DB_NAME": connection.settings_dict["NAME"],
               "INNOWATCH_TEST_REDIS_URL": settings.REDIS_URL, **env}
    celery = str(Path(sys.executable).with_name("celery"))
    return subprocess.Popen(
        [celery, "-A", "dashboard", "worker", "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "--pool", pool,
         "--concurrency", str(concurrency), "-n", f"{name}@%h", "--without-gossip", "--without-mingle",
         "--loglevel", "INFO" if log else "WARNING"],
        cwd=ROOT, env=environ, start_new_session=True, stdout=log.open("w") if log else subprocess.DEVNULL,
        stderr=subprocess.STDOUT)


def kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def journaled(redis_client) -> int:
    from collectors import batch

    return sum(redis_client.llen(j) for j in redis_client.zrange(batch.JOURNALS_KEY, 0, -1))


def roster_entry(server) -> dict:
    from collectors.scheduling import ROSTER_FIELDS

    return {f: getattr(server, f) for f in ROSTER_FIELDS}


@pytest.fixture
def no_journals(redis_client):
    from collectors import batch, spool

    def clear():
        for journal in redis_client.zrange(batch.JOURNALS_KEY, 0, -1):
            redis_client.delete(journal)
        redis_client.delete(batch.JOURNALS_KEY, spool.KEY, spool.INFLIGHT_KEY, spool.LOCK_KEY)

    clear()
    yield redis_client
    clear()


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_with_unstored_polls_loses_none_of_them(local_server, no_journals):
    from collectors import batch, spool
    from collectors.tasks import poll_server
    from servers.models import PollMinute
    from timeseries.models import InnodbSample, RawStatus

    # Batches this worker would store only after an hour or 10,000 polls: all stay in memory.
    worker = start_worker("killed", INNOWATCH_BATCH_MAX_AGE_MS="3600000", INNOWATCH_BATCH_MAX_POLLS="10000")
    slots = range(4_100_000_000, 4_100_000_005)
    try:
        for slot in slots:
            poll_server.apply_async((local_server.pk, slot, roster_entry(local_server)), expires=60)
        wait_for(lambda: journaled(no_journals) == len(slots), 60, lambda: f"{journaled(no_journals)} journaled")
        samples = InnodbSample.objects.filter(server=local_server)
        assert samples.count() == 0, "the batch was stored before the kill: the test proves nothing"
    finally:
        kill(worker)
    entries = [e for j in no_journals.zrange(batch.JOURNALS_KEY, 0, -1) for e in no_journals.lrange(j, 0, -1)]

    assert spool.drain(orphans_after_s=0) == len(slots)
    assert samples.count() == len(slots)
    assert RawStatus.objects.filter(server=local_server).count() == len(slots)
    assert PollMinute.objects.filter(server=local_server).totals() == {"polls": 5, "failures": 0, "warnings": 0}
    local_server.refresh_from_db()
    assert local_server.last_sample_at == samples.latest("ts").ts
    # Replayed again (a drain that died after storing): nothing is stored or counted twice.
    no_journals.rpush(spool.KEY, *entries)
    assert spool.drain(orphans_after_s=0) == len(slots)
    assert samples.count() == len(slots) and PollMinute.objects.filter(server=local_server).totals()["polls"] == 5


def slots_polled(server, interval_s: int) -> dict[int, int]:
    """How many samples each of the server's slots got (a slot = one interval from its phase)."""
    from collectors.scheduling import phase_s
    from timeseries.models import InnodbSample

    counts: dict[int, int] = {}
    for ts in InnodbSample.objects.filter(server=server).values_list("ts", flat=True):
        slot = int((ts.timestamp() - phase_s(server.pk, interval_s)) // interval_s)
        counts[slot] = counts.get(slot, 0) + 1
    return counts


@pytest.mark.django_db(transaction=True)
def test_two_worker_hosts_poll_every_slot_once_and_the_survivor_takes_over(
        local_server, monitor_account, no_journals, tmp_path):
    import time

    from collectors import spool
    from collectors.tasks import schedule_polls
    from servers.models import Server

    interval = 2
    Server.objects.filter(pk=local_server.pk).update(poll_interval_s=interval)
    servers = [local_server]
    for n in range(2):
        server = Server(name=f"mariadb-{n}", host="127.0.0.1", port=3306, user=monitor_account["user"],
                        poll_interval_s=interval)
        server.set_password(monitor_account["password"])
        server.save()
        servers.append(server)
    logs = {name: tmp_path / f"{name}.log" for name in ("w1", "w2")}
    workers = {name: start_worker(name, path) for name, path in logs.items()}
    try:
        wait_for(lambda: all("ready" in p.read_text() for p in logs.values()), 60, "both workers ready")
        began = time.time()
        tick_until(schedule_polls, began + 12)
        killed_at = time.time()
        kill(workers["w1"])
        tick_until(schedule_polls, killed_at + 14)
        ended = time.time()
    finally:
        for proc in workers.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)  # warm shutdown: w2 stores its batch
                proc.wait(timeout=30)
    spool.drain(orphans_after_s=0)  # w1's journal: what it polled but had not stored

    polled = {name: log.read_text().count("collectors.poll_server") for name, log in logs.items()}
    assert polled["w1"] > 0 and polled["w2"] > 0, polled
    for server in servers:
        counts = slots_polled(server, interval)
        # A new server's first poll is due at once, not at its phase: counted from the next slot on.
        first, last = int(began // interval) + 2, int(ended // interval) - 2
        twice = {s: n for s, n in counts.items() if n > 1 and s >= first}
        assert not twice, f"{server.name}: slots polled twice: {twice}"
        # Slots due while both ran, and from one interval after the kill (what w1 had taken off
        # the queue died with it) to the end, are all there.
        after_kill = int(killed_at // interval) + 2
        missing = [s for s in range(first, last) if s not in counts and not (after_kill - 2 <= s < after_kill)]
        assert not missing, f"{server.name}: slots skipped {missing}; polled {sorted(counts)}"


def tick_until(schedule_polls, deadline: float) -> None:
    """What beat does: the fan-out, here every half second."""
    import time

    while time.time() < deadline:
        schedule_polls()
        time.sleep(0.5)
