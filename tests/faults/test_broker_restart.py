"""The Redis broker killed and restarted under a real Celery worker and a beat-like loop:
polling resumes by itself and no sample is stored twice."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from tests.conftest import wait_for
from tests.faults.conftest import free_port


class RedisServer:
    """A private, non-persistent redis-server: a restart loses every queued message."""

    def __init__(self):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="iw-broker-")
        self.proc: subprocess.Popen | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for(self._answers, 10, f"redis-server on {self.port}")

    def _answers(self) -> bool:
        try:
            return redis.Redis(port=self.port, socket_timeout=0.5).ping()
        except redis.RedisError:
            return False

    def info(self) -> dict:
        return redis.Redis(port=self.port, socket_timeout=2).info()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class BeatLoop(threading.Thread):
    """What celery beat does for `schedule-polls`: send the fan-out every second, whatever fails."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stopping = threading.Event()
        self.sent = self.failed = 0

    def run(self) -> None:
        from collectors.tasks import schedule_polls

        while not self.stopping.wait(1.0):
            try:
                schedule_polls.apply_async(expires=1.0)
                self.sent += 1
            except Exception:  # beat logs a failed send and goes on; so do we
                self.failed += 1


@contextlib.contextmanager
def broker_at(app, url: str):
    """Point the Celery app at `url`, dropping its cached connection pools both ways."""
    saved = app.conf.broker_url

    def switch(to: str) -> None:
        app.conf.broker_url = to
        app._pool = None
        app.amqp._producer_pool = None

    switch(url)
    try:
        yield
    finally:
        switch(saved)


@pytest.mark.django_db(transaction=True)
def test_polls_resume_after_the_broker_restarts_and_no_sample_is_stored_twice(local_server):
    from celery.contrib.testing.worker import start_worker

    from dashboard.celery import app
    from servers.models import CollectorRun, PollMinute
    from timeseries.models import InnodbSample

    broker, beat = RedisServer(), BeatLoop()
    runs = CollectorRun.objects.filter(server=local_server, kind=CollectorRun.Kind.INNODB_STATUS)

    def polls() -> int:  # every poll is counted per minute; failures and changes of state have a run row
        return PollMinute.objects.filter(server=local_server).totals()["polls"]
    broker.start()
    try:
        with broker_at(app, broker.url), start_worker(
            app, pool="solo", concurrency=1, perform_ping_check=False,
            queues=["innowatch-test"], shutdown_timeout=10,
        ):
            beat.start()
            wait_for(lambda: polls() >= 2, 30, "two polls before the restart")
            first_run_id = broker.info()["run_id"]
            broker.kill()
            time.sleep(2)  # polls due now are lost with the broker; that is the accepted cost
            broker.start()
            at_restart = polls()
            wait_for(lambda: polls() >= at_restart + 3, 40, "three polls after the restart")
            restarted_stats = broker.info()
            beat.stopping.set()
            beat.join()
    finally:
        beat.stopping.set()
        broker.cleanup()

    # The polls after the restart went through the new, empty broker process.
    assert restarted_stats["total_commands_processed"] > 0 and restarted_stats["run_id"] != first_run_id
    samples = InnodbSample.objects.filter(server=local_server)
    timestamps = list(samples.values_list("ts", flat=True))
    assert len(timestamps) == len(set(timestamps))
    totals = PollMinute.objects.filter(server=local_server).totals()
    assert totals["polls"] - totals["failures"] == samples.count(), list(runs.values_list("status", "error"))
    assert samples.count() >= at_restart + 3, list(runs.values_list("status", "error"))
