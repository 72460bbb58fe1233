"""A burst must not make anyone else's polls late: 50 other servers polled every 10 s by the same
real worker keep their slots while one server is read every second. The test prints by how much
their polls slipped (the poll's read of its status text after the time its slot was due: each
server is due at its own phase within the interval), before and during the burst."""

from __future__ import annotations

import statistics
import time

import pytest

pytestmark = pytest.mark.django_db(transaction=True)
INTERVAL_S = 10
OTHERS = 50
BURST_S = 30


def _lateness(reads, first_slot: int, last_slot: int) -> tuple[list[float], int]:
    """Seconds from each slot's due time to its poll's read, and how many (server, slot) got no poll."""
    from collectors.scheduling import phase_s

    seen, late = set(), []
    for server_id, read_at in reads:
        phase = phase_s(server_id, INTERVAL_S)
        t = read_at.timestamp() - phase
        slot = int(t // INTERVAL_S)
        if first_slot <= slot <= last_slot and (server_id, slot) not in seen:
            seen.add((server_id, slot))
            late.append(t - slot * INTERVAL_S)
    servers = {server_id for server_id, _ in reads}
    return late, len(servers) * (last_slot - first_slot + 1) - len(seen)


def _summary(late: list[float]) -> str:
    q = statistics.quantiles(late, n=20)
    return f"p50 {statistics.median(late):.2f} s, p95 {q[18]:.2f} s, max {max(late):.2f} s"


@pytest.fixture
def poll_worker_process(_test_redis):
    """The poll worker as its own process, as in production: two Celery workers in threads of one
    process share kombu's Redis poller, and one of them can then wait forever for a reply."""
    from tests.faults.test_worker_killed import kill, start_worker

    worker = start_worker("polls", pool="solo", concurrency=1)
    yield worker
    kill(worker)


def test_fifty_other_servers_keep_their_poll_schedule_during_a_burst(local_server, monitor_account, burst_worker_thread,
                                                                     poll_worker_process):
    from collectors.tasks import schedule_polls
    from incidents.models import Burst, BurstSecond, TriggerConfig
    from incidents.triggers import start_manual
    from servers.models import CollectorRun, PollMinute, Server
    from timeseries.models import InnodbSample

    local_server.poll_interval_s = INTERVAL_S
    local_server.save()
    for i in range(OTHERS):
        other = Server(name=f"other-{i:02d}", host="127.0.0.1", port=3306, user=monitor_account["user"],
                       poll_interval_s=INTERVAL_S)
        other.set_password(monitor_account["password"])
        other.save()
    # Only the burst asked for below: no trigger of an idle server may add another one.
    for server in Server.objects.all():
        TriggerConfig.objects.create(server=server, enabled=False)

    def beat_until(deadline: float) -> None:  # Celery beat's job: the fan-out once a second
        while time.time() < deadline:
            schedule_polls()
            time.sleep(1 - time.time() % 1 + 0.01)

    now = time.time()
    baseline_first = int(now // INTERVAL_S) + 2  # the first slot only warms up (first connects)
    burst_slot = baseline_first + 3
    beat_until(burst_slot * INTERVAL_S - 0.5)
    burst = start_manual(local_server, None, BURST_S)
    burst_last = burst_slot + BURST_S // INTERVAL_S - 1
    beat_until((burst_last + 1) * INTERVAL_S + 5)
    time.sleep(3)  # the last polls finish
    # What beat sent and the worker has not taken yet is not measured: drop it, so the worker has
    # only its current task to finish when the test stops it (a backlog outlived its shutdown).
    from dashboard.celery import app

    app.control.purge()

    burst.refresh_from_db()
    # A good poll leaves its sample (read time = ts), not a run row.
    reads = list(InnodbSample.objects.exclude(server=local_server).values_list("server_id", "ts"))
    assert not CollectorRun.objects.filter(status=CollectorRun.Status.FAILED).exists()
    before, missed_before = _lateness(reads, baseline_first, burst_slot - 1)
    during, missed_during = _lateness(reads, burst_slot, burst_last)
    slip = statistics.quantiles(during, n=20)[18] - statistics.quantiles(before, n=20)[18]
    print(f"\n{OTHERS} servers every {INTERVAL_S} s on one solo worker, the burst on the burst worker; "
          f"poll start after its slot's start:"
          f"\n  before the burst: {_summary(before)} ({len(before)} polls, {missed_before} slots missed)"
          f"\n  during the burst: {_summary(during)} ({len(during)} polls, {missed_during} slots missed)"
          f"\n  slip (p95 during - p95 before): {slip:+.2f} s")
    durations = [ms for row in PollMinute.objects.exclude(server=local_server) for ms in row.durations_ms]
    print(f"  poll duration p50 {statistics.median(durations):.0f} ms; burst seconds read "
          f"{BurstSecond.objects.filter(burst=burst).count()} of {BURST_S}")
    assert burst.status == Burst.Status.DONE and burst.failed_reads == 0, burst.last_error
    assert BurstSecond.objects.filter(burst=burst).count() >= BURST_S - 1
    assert missed_before == 0 and missed_during == 0
    # Every poll ran inside its own slot: none was pushed into the next interval.
    assert max(during) < INTERVAL_S
