"""PostgreSQL briefly unavailable: readings already taken are spooled in Redis, not lost, and
stored once when it is back. The outage is real: Django's connection goes through a TCP proxy
that the test shuts (live connections cut, new ones refused) and opens again."""

from __future__ import annotations

import datetime as dt
import socket
import threading
from types import SimpleNamespace

import pytest

from tests.faults.conftest import free_port


class TcpProxy:
    """127.0.0.1:<port> → target; `stop` closes the listener and cuts every open connection."""

    def __init__(self, target_port: int):
        self.port = free_port()
        self.target_port = target_port
        self.listener: socket.socket | None = None
        self.sockets: list[socket.socket] = []

    def start(self) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", self.port))
        self.listener.listen(16)
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def stop(self) -> None:
        if self.listener is not None:
            # shutdown, not just close: close alone leaves a blocked accept() listening on Linux.
            self.listener.shutdown(socket.SHUT_RDWR)
            self.listener.close()
            self.listener = None
        for s in self.sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        self.sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # listener closed
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@pytest.fixture
def db_through_proxy():
    """Django's default connection rerouted through a proxy; the real port restored afterwards."""
    from django.db import connection

    real_port = connection.settings_dict["PORT"]
    proxy = TcpProxy(int(real_port or 5432))
    proxy.start()
    connection.close()
    connection.settings_dict["PORT"] = str(proxy.port)
    try:
        yield proxy
    finally:
        proxy.stop()
        connection.close()
        connection.settings_dict["PORT"] = real_port


@pytest.fixture
def empty_spool(redis_client):
    from collectors import spool

    redis_client.delete(spool.KEY, spool.INFLIGHT_KEY, spool.DEAD_KEY, spool.LOCK_KEY)
    yield redis_client
    redis_client.delete(spool.KEY, spool.INFLIGHT_KEY, spool.DEAD_KEY, spool.LOCK_KEY)


@pytest.mark.django_db(transaction=True)
def test_readings_taken_while_postgresql_is_down_are_spooled_and_stored_once_when_it_is_back(
    local_server, db_through_proxy, empty_spool
):
    from collectors import spool
    from collectors.tasks import poll_once
    from servers.models import CollectorRun, Server
    from timeseries.models import InnodbSample, RawStatus

    proxy = db_through_proxy
    assert Server.objects.filter(pk=local_server.pk).exists()  # the proxy works
    proxy.stop()  # the open connection is cut and new ones are refused

    runs = [poll_once(local_server) for _ in range(2)]
    assert all(r.status == CollectorRun.Status.WARNING and "spooled" in r.error for r in runs), [
        (r.status, r.error) for r in runs
    ]
    assert spool.length() == 2
    assert spool.drain() == 0, "a drain while PostgreSQL is still down must keep the readings"
    assert spool.length() == 2
    entries = empty_spool.lrange(spool.KEY, 0, -1)

    proxy.start()
    assert spool.drain() == 2
    assert spool.length() == 0 and empty_spool.llen(spool.INFLIGHT_KEY) == 0
    samples = InnodbSample.objects.filter(server=local_server)
    assert samples.count() == 2 and RawStatus.objects.filter(server=local_server).count() == 2
    assert all(s.lsn and s.com_commit is not None for s in samples)
    local_server.refresh_from_db()
    assert local_server.last_sample_at == samples.latest("ts").ts

    # A reading delivered twice (e.g. a drain that died after storing) is stored once.
    stored_runs = CollectorRun.objects.filter(server=local_server).count()
    empty_spool.rpush(spool.KEY, *entries)
    assert spool.drain() == 2
    assert samples.count() == 2 and CollectorRun.objects.filter(server=local_server).count() == stored_runs


def reading_at(ts: dt.datetime) -> SimpleNamespace:
    return SimpleNamespace(captured_at=ts, innodb_status="text", global_status={}, innodb_metrics={})


def test_the_spool_keeps_the_newest_readings_up_to_its_bound(empty_spool):
    from collectors import spool

    start = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    for i in range(8):
        assert spool.push(1, reading_at(start + dt.timedelta(seconds=i)), max_entries=5)
    kept = [spool.decode(e)["captured_at"] for e in empty_spool.lrange(spool.KEY, 0, -1)]
    assert kept == [start + dt.timedelta(seconds=i) for i in range(7, 2, -1)]
    assert spool.MAX_ENTRIES == 20_000  # the bound stated in dashboard/spool.py and the README


def test_a_spooled_reading_that_cannot_be_parsed_is_set_aside_not_retried_forever(local_server, empty_spool):
    from collectors import spool

    spool.push(local_server.pk, reading_at(dt.datetime.now(dt.UTC)))
    assert spool.drain() == 1
    assert spool.length() == 0 and empty_spool.llen(spool.DEAD_KEY) == 1


def test_beat_drains_the_spool_every_ten_seconds_with_an_expiry():
    from dashboard.celery import app

    entry = next(e for e in app.conf.beat_schedule.values() if e["task"] == "collectors.drain_spool")
    assert entry["schedule"] == 10.0 and entry["options"]["expires"] <= 10.0


@pytest.mark.django_db(transaction=True)
def test_polls_go_on_from_the_saved_roster_while_postgresql_is_down(local_server, db_through_proxy, empty_spool):
    from collectors import batch, spool
    from collectors.disk_tasks import poll_diskstats
    from collectors.tasks import ROSTER_KEY, poll_server, servers_to_poll
    from timeseries.models import InnodbSample

    proxy = db_through_proxy
    empty_spool.delete(ROSTER_KEY)
    assert local_server.pk in [s.pk for s in servers_to_poll()]  # PostgreSQL up: the roster is saved
    assert local_server.password_encrypted.encode() in empty_spool.get(ROSTER_KEY)  # stored encrypted
    proxy.stop()

    during = {s.pk: s for s in servers_to_poll()}
    assert local_server.pk in during
    assert during[local_server.pk].get_password() == local_server.get_password()
    # The fan-out's tasks, run here in this process: the poll reads the server, and its batch,
    # stored now rather than by the worker's timer, goes to the spool.
    poll_server.run(local_server.pk, slot=None)
    poll_diskstats.run(local_server.pk, slot=None)  # nothing to store it in: skipped, no exception
    batch.writer().flush()
    assert spool.length() == 1

    proxy.start()
    assert spool.drain() == 1
    assert InnodbSample.objects.filter(server=local_server).count() == 1


@pytest.mark.django_db(transaction=True)
def test_without_a_roster_a_poll_during_an_outage_is_skipped_not_a_crash(local_server, db_through_proxy, empty_spool):
    from collectors import spool
    from collectors.tasks import ROSTER_KEY, poll_server, servers_to_poll

    empty_spool.delete(ROSTER_KEY)
    db_through_proxy.stop()
    assert servers_to_poll() == []
    poll_server.run(local_server.pk, slot=None)
    assert spool.length() == 0
