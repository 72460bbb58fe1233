"""A real stall on the local MariaDB: a write load pushes the checkpoint age past the trigger, the
polls start a burst, a real Celery worker reads the server every second until the hard end, and
the burst's downloads re-import to the same samples. With a 24 MB redo log, adaptive flushing OFF
and innodb_io_capacity 100 (as `make demo` runs, on a smaller log), nothing flushes for age below
the async point, so even a slowed load (0.7 MB/s of redo on a busy machine) climbs the age past
the trigger in seconds; the three globals are restored."""

from __future__ import annotations

import datetime as dt
import io
import threading
import time
import zipfile
from pathlib import Path

import MySQLdb
import pytest

from tests.conftest import MARIADB, login, wait_for, write_load

pytestmark = pytest.mark.django_db(transaction=True)
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
TRIGGER_PCT = 50.0
POLL_S = 2.0
BURST_S = 8


def _pct_of_async(cur) -> float:
    cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_checkpoint_age', 'Innodb_checkpoint_max_age')")
    status = {k: int(v) for k, v in cur.fetchall()}
    # MariaDB 10.5+: async point = 7/8 of the max checkpoint age it states (analysis.checkpoint)
    return 100.0 * status["Innodb_checkpoint_age"] / (status["Innodb_checkpoint_max_age"] * 7 / 8)


REDO_BYTES = 24 * 1024**2
SETTINGS = {"innodb_adaptive_flushing": "OFF", "innodb_io_capacity": 100}


def _wait_for_calm(cur, below_pct: float = 25.0, timeout_s: float = 120) -> None:
    """Someone's earlier load may have left the age high: the page cleaner drains it at idle."""
    wait_for(lambda: _pct_of_async(cur) < below_pct, timeout_s,
             lambda: f"checkpoint age below {below_pct} % of async (now {_pct_of_async(cur):.0f} %)")


def _poll_every(server, seconds: float, polls: list, until) -> None:
    from collectors.tasks import poll_once
    from timeseries.models import InnodbSample

    while not until():
        started = time.monotonic()
        run = poll_once(server)
        age = InnodbSample.objects.filter(server=server, ts=run.sample_at).values_list(
            "checkpoint_age_bytes", "status_checkpoint_max_age").first() if run.sample_at else None
        polls.append((run.sample_at, age))
        time.sleep(max(0.0, seconds - (time.monotonic() - started)))


def test_checkpoint_age_past_the_trigger_starts_a_one_second_burst_that_reimports(
        local_server, burst_worker_thread, admin_user, api_token, client, tmp_path, live_server, browser):
    from incidents.models import TriggerConfig

    local_server.poll_interval_s = int(POLL_S)
    local_server.save()
    TriggerConfig.objects.create(server=local_server, checkpoint_age_pct_of_async=TRIGGER_PCT, runway_minutes=None,
                                 semaphore_wait_s=None, threads_running=None, hll_growth_per_h=None,
                                 cycles=2, cooldown_s=600, duration_s=BURST_S)
    admin = MySQLdb.connect(**MARIADB, autocommit=True)
    cur = admin.cursor()
    cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN "
                "('innodb_adaptive_flushing', 'innodb_io_capacity', 'innodb_log_file_size')")
    saved = dict(cur.fetchall())
    stop = threading.Event()
    try:
        cur.execute("SET GLOBAL innodb_log_file_size = %s", (REDO_BYTES,))  # resized online (10.9+)
        _wait_for_calm(cur)
        for name, value in SETTINGS.items():
            cur.execute(f"SET GLOBAL {name} = %s", (value,))
        _stall_and_burst(local_server, stop, client, api_token, tmp_path, live_server, browser)
    finally:
        stop.set()
        for name, value in saved.items():
            cur.execute(f"SET GLOBAL {name} = %s", (int(value) if value.isdigit() else value,))
        admin.close()


def _stall_and_burst(local_server, stop, client, api_token, tmp_path, live_server, browser):
    from collectors.imports import import_capture
    from incidents.models import Burst, BurstSecond
    from incidents.triggers import config_for, held_condition
    from timeseries.models import InnodbSample

    polls: list = []
    _poll_every(local_server, POLL_S, polls, lambda: len(polls) >= 2)  # calm polls: nothing starts
    assert not Burst.objects.exists()

    load = write_load(300, stop=stop)  # until the cool-down is shown
    _poll_every(local_server, POLL_S, polls, lambda: Burst.objects.exists() or len(polls) > 22)
    async_pct = [None if a is None else round(100.0 * a[0] / (a[1] * 7 / 8)) for _, a in polls]
    burst = Burst.objects.first()
    assert burst is not None, f"no burst; checkpoint age at each poll, % of async: {async_pct}"
    first_over = next(i for i, p in enumerate(async_pct) if p is not None and p > TRIGGER_PCT)
    # cycles = 2: the poll that first saw the age past the trigger, and the next one, start it
    assert len(polls) - 1 == first_over + 1, async_pct
    assert burst.trigger == "checkpoint_age_pct_of_async" and "held for 2 polls" in burst.reason
    assert burst.started_at >= polls[-1][0]

    # The normal schedule goes on during the burst and the cool-down after it; the condition
    # still holds, but nothing new starts.
    _poll_every(local_server, POLL_S, polls,
                lambda: Burst.objects.get().status != Burst.Status.RUNNING and polls[-1][0] > burst.ends_at)
    burst.refresh_from_db()
    assert burst.status == Burst.Status.DONE, burst.last_error
    assert held_condition(local_server, config_for(local_server), polls[-1][0] + dt.timedelta(seconds=0.5))
    assert Burst.objects.count() == 1
    stop.set()
    load.join()

    seconds = list(BurstSecond.objects.filter(burst=burst).order_by("seq"))
    gaps = [(b.ts - a.ts).total_seconds() for a, b in zip(seconds, seconds[1:])]
    print(f"\nburst: {len(seconds)} readings in {BURST_S} s; gaps {min(gaps):.2f}-{max(gaps):.2f} s")
    assert BURST_S - 1 <= len(seconds) <= BURST_S + 1 and burst.failed_reads == 0
    assert [s.seq for s in seconds] == list(range(len(seconds)))
    assert all(0.5 <= g <= 1.5 for g in gaps), gaps
    assert seconds[-1].ts <= burst.ends_at and burst.annotation.time_end == seconds[-1].ts
    assert max(s.checkpoint_age_bytes for s in seconds) > 0

    # The download (innowatch's capture format) re-imports to the same samples.
    response = client.get(f"/api/v1/bursts/{burst.pk}/capture", HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.status_code == 200
    path = tmp_path / "burst.jsonl.gz"
    path.write_bytes(response.content)
    result = import_capture(path, "burst-copy")
    assert result.samples == len(seconds), result.warnings
    assert not result.warnings
    stamps = [s.ts for s in seconds]

    def rows(server):
        values = InnodbSample.objects.filter(server=server, ts__in=stamps).order_by("ts").values()
        return [{k: v for k, v in row.items() if k != "server_id"} for row in values]

    assert rows(result.server) == rows(local_server)

    # The pt-stalk folder re-imports too: one sample per second, the same LSNs and counters
    # (pt-stalk's files keep whole seconds only).
    response = client.get(f"/api/v1/bursts/{burst.pk}/pt-stalk", HTTP_AUTHORIZATION=f"Bearer {api_token}")
    zipfile.ZipFile(io.BytesIO(response.content)).extractall(tmp_path / "pt")
    folder = next((tmp_path / "pt").iterdir())
    assert any(p.name.endswith("-variables") for p in folder.iterdir())
    pt = import_capture(folder, "burst-pt")
    assert pt.samples == len(seconds)
    original = [(r["lsn"], r["checkpoint_lsn"], r["com_commit"]) for r in rows(local_server)]
    imported = list(InnodbSample.objects.filter(server=pt.server).order_by("ts").values_list(
        "lsn", "checkpoint_lsn", "com_commit"))
    assert imported == original

    # The incident page of this real burst (the README's screenshot).
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    login(page, live_server.url)
    page.goto(f"{live_server.url}/bursts/{burst.pk}/")
    page.wait_for_selector("body[data-charts-ready='1']", timeout=30000)
    page.wait_for_selector("body[data-step-shown]", timeout=10000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "burst-incident.png"), full_page=True)
