"""Disk collection on the database host: this machine's real /proc/diskstats,
the fan-out's routing seen in the test Redis database, and the disk metrics of the series API."""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import time

import pytest

from collectors import disk_tasks
from collectors.parsers.diskstats import parse_proc_diskstats, parse_pt_diskstats_samples
from collectors.sources_disk import device_for_path
from collectors.tasks import poll_once, schedule_polls
from servers.models import CollectorRun, Server
from tests.conftest import FIXTURES, write_load
from timeseries.models import DiskSample

pytestmark = pytest.mark.django_db

MARIADB_DATADIR = "/var/lib/mysql"
PT_STALK = FIXTURES / "pt_stalk" / "2018_03_05_13_24_55"
DEFAULT_QUEUE = "innowatch-test"  # settings_test.CELERY_TASK_DEFAULT_QUEUE


def _queued_tasks(redis_client, queue: str) -> list[tuple[str, tuple]]:
    """(task name, args) of the messages waiting in a Redis-backed Celery queue."""
    out = []
    for raw in redis_client.lrange(queue, 0, -1):
        headers = json.loads(raw)["headers"]
        out.append((headers["task"], ast.literal_eval(headers["argsrepr"])))
    return out


def test_disk_poll_stores_this_hosts_devices_and_tags_the_datadir_device(local_server):
    poll_once(local_server)  # a real poll: the server's variables (datadir) come from MariaDB itself
    local_server.refresh_from_db()
    assert local_server.variables["datadir"].rstrip("/") == MARIADB_DATADIR

    first = disk_tasks.collect_diskstats(local_server)
    time.sleep(0.05)
    second = disk_tasks.collect_diskstats(local_server)

    assert first.status == second.status == CollectorRun.Status.OK, (first.error, second.error)
    rows = DiskSample.objects.filter(server=local_server)
    assert rows.values("ts").distinct().count() == 2
    datadir_device = device_for_path(MARIADB_DATADIR).name
    kernel_devices = {r.device for r in parse_proc_diskstats(open("/proc/diskstats").read())}
    assert set(rows.values_list("device", flat=True)) <= kernel_devices
    assert set(rows.filter(role="datadir").values_list("device", flat=True)) == {datadir_device}
    assert rows.filter(device=datadir_device).count() == 2


def test_disk_poll_does_not_change_the_servers_poll_state(local_server):
    Server.objects.filter(pk=local_server.pk).update(last_poll_status=Server.PollStatus.UNREACHABLE)
    disk_tasks.collect_diskstats(local_server)
    local_server.refresh_from_db()
    assert local_server.last_poll_status == Server.PollStatus.UNREACHABLE


def test_fan_out_routes_disk_polls_to_the_host_agent_queue_a_local_worker_or_nowhere(
    redis_client, local_server
):
    agent = Server.objects.create(name="db7", host="db7.example.net", host_agent="db7", poll_interval_s=10)
    remote = Server.objects.create(name="db8", host="db8.example.net", poll_interval_s=10)
    for queue in ("host.db7", DEFAULT_QUEUE):
        redis_client.delete(queue)

    schedule_polls(now_s=4_000_000_000.0 + os.getpid())  # a slot no other test claimed

    on_agent = _queued_tasks(redis_client, "host.db7")
    assert redis_client.llen("host.db7") == 1
    assert on_agent[0][0] == "collectors.poll_disks" and [p[0] for p in on_agent[0][1][0]] == [agent.pk]
    default = _queued_tasks(redis_client, DEFAULT_QUEUE)
    disk_polls = [[p[0] for p in args[0]] for name, args in default if name == "collectors.poll_disks"]
    polls = [args[0] for name, args in default if name == "collectors.poll_server"]
    assert sorted(polls) == sorted([local_server.pk, agent.pk, remote.pk])  # SQL polls run from here
    assert disk_polls == [[local_server.pk]]  # the remote server without an agent gets none


def test_a_server_on_this_host_is_local_and_a_named_agent_wins():
    assert disk_tasks.disk_queue_for(Server(host="127.0.0.1")) == ""
    assert disk_tasks.disk_queue_for(Server(host="localhost")) == ""
    assert disk_tasks.disk_queue_for(Server(host="db9.example.net")) is None
    assert disk_tasks.disk_queue_for(Server(host="127.0.0.1", host_agent="box1")) == "host.box1"


def test_redo_directory_relative_to_the_datadir_is_on_the_datadir_device():
    roles = disk_tasks.device_roles({"datadir": "/var/lib/mysql/", "innodb_log_group_home_dir": "./"})
    assert roles == {device_for_path(MARIADB_DATADIR).name: "datadir"}
    assert disk_tasks.device_roles({}) == {}


def test_disk_series_default_to_the_datadir_device_and_see_the_load_writes(local_server, admin_user, client):
    poll_once(local_server)
    local_server.refresh_from_db()
    load = write_load(2.5)
    disk_tasks.collect_diskstats(local_server)
    time.sleep(2)
    disk_tasks.collect_diskstats(local_server)
    load.join()
    times = sorted(set(DiskSample.objects.filter(server=local_server).values_list("ts", flat=True)))

    client.force_login(admin_user)
    response = client.get(f"/api/v1/servers/{local_server.pk}/series", {
        "metrics": "disk_w_s,disk_wr_mb_s,disk_busy_pct", "points": 5000,
        "start": (times[0] - dt.timedelta(seconds=1)).isoformat(),
        "end": (times[-1] + dt.timedelta(seconds=1)).isoformat(),
    })
    body = response.json()
    assert body["devices"] == [device_for_path(MARIADB_DATADIR).name]
    assert len(body["metrics"]["disk_w_s"]["t"]) == 1  # one interval between the two reads
    assert body["metrics"]["disk_w_s"]["avg"][0] > 0  # MariaDB's redo and page writes under load
    assert 0 <= body["metrics"]["disk_busy_pct"]["avg"][0] <= 100


def test_a_disk_counter_that_goes_down_gives_no_value_rather_than_a_spike(local_server):
    from timeseries.disk_ingest import save_disk_samples
    from timeseries.disk_series import interval_metrics

    snapshots = parse_pt_diskstats_samples((PT_STALK / "2018_03_05_13_24_55-diskstats").read_text())
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    # The real samples one second apart, then the first one again: every counter went down (a reboot).
    replay = [*snapshots, snapshots[0], snapshots[1]]
    for i, snapshot in enumerate(replay):
        save_disk_samples(local_server.pk, t0 + dt.timedelta(seconds=i), snapshot.rows, {})

    values = interval_metrics(local_server, ["cciss/c0d1"], t0, t0 + dt.timedelta(seconds=len(replay)))
    ends = [dt.datetime.fromtimestamp(ts, dt.UTC) - t0 for ts, _ in values]
    assert ends == [dt.timedelta(seconds=s) for s in (1, 2, 3, 4, 6)]  # nothing for the reset at 5 s
    assert all(v["wr_s"] >= 0 and v["busy"] >= 0 for _, v in values)


@pytest.mark.django_db(transaction=True)  # the worker thread reads the server on its own connection
def test_a_host_agent_worker_on_its_queue_stores_the_disk_samples_of_its_servers(redis_client):
    from celery.contrib.testing.worker import start_worker

    from dashboard.celery import app

    server = Server.objects.create(name="db-agent", host="db-agent.example.net", host_agent="testagent",
                                   poll_interval_s=1, variables={"datadir": MARIADB_DATADIR + "/"})
    with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                      queues=["host.testagent"], shutdown_timeout=30):
        schedule_polls()
        deadline = time.monotonic() + 20
        while not DiskSample.objects.filter(server=server).exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    rows = DiskSample.objects.filter(server=server)
    datadir_devices = set(rows.filter(role="datadir").values_list("device", flat=True))
    assert datadir_devices == {device_for_path(MARIADB_DATADIR).name}
    # A good disk poll is recorded by its samples; only a failed one leaves a run row.
    assert not CollectorRun.objects.filter(server=server, kind=CollectorRun.Kind.DISKSTATS).exists()


def test_the_disk_polls_of_servers_on_one_host_read_it_once_in_one_message(redis_client, local_server, monkeypatch):
    twins = [Server.objects.create(name=f"local-{n}", host="localhost", poll_interval_s=10,
                                   variables={"datadir": MARIADB_DATADIR + "/"}) for n in range(3)]
    redis_client.delete(DEFAULT_QUEUE)
    schedule_polls(now_s=4_100_000_000.0 + os.getpid())
    messages = [args[0] for name, args in _queued_tasks(redis_client, DEFAULT_QUEUE) if name == "collectors.poll_disks"]
    assert len(messages) == 1
    assert sorted(p[0] for p in messages[0]) == sorted([local_server.pk, *(t.pk for t in twins)])

    reads = []
    real_read = disk_tasks.read_diskstats_text
    monkeypatch.setattr(disk_tasks, "read_diskstats_text", lambda: reads.append(1) or real_read())
    disk_tasks.poll_disks.run(messages[0])
    disk_tasks.poll_disks.run(messages[0])  # redelivered: every slot already read
    assert len(reads) == 1
    stamps = DiskSample.objects.filter(server__in=twins).values_list("server_id", "ts").distinct()
    assert len(stamps) == 3 and len({ts for _, ts in stamps}) == 1  # one reading, stored for each
    assert set(DiskSample.objects.filter(server__in=twins, role="datadir").values_list("device", flat=True)) == {
        device_for_path(MARIADB_DATADIR).name}


def test_a_disk_poll_that_cannot_read_the_host_is_a_failed_run_for_each_server(local_server, monkeypatch):
    other = Server.objects.create(name="local-other", host="localhost", poll_interval_s=10)
    monkeypatch.setattr(disk_tasks, "PROC_DISKSTATS", disk_tasks.Path("/proc/no-such-diskstats"))
    runs = disk_tasks.collect_disks([local_server, other])
    assert {r.status for r in runs} == {CollectorRun.Status.FAILED}
    failed = CollectorRun.objects.filter(kind=CollectorRun.Kind.DISKSTATS, status=CollectorRun.Status.FAILED)
    assert sorted(failed.values_list("server_id", flat=True)) == sorted([local_server.pk, other.pk])
    assert all("no-such-diskstats" in error for error in failed.values_list("error", flat=True))
    assert not DiskSample.objects.filter(server__in=[local_server, other]).exists()
