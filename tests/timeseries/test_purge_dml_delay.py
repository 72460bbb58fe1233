"""The delay innodb_max_purge_lag puts on each row change (INNODB_METRICS purge_dml_delay_usec), read
and stored by a live poll of the local MariaDB."""

from __future__ import annotations

import threading

import MySQLdb
import pytest

from collectors.tasks import poll_once
from tests.conftest import MARIADB, wait_for
from timeseries.models import InnodbSample

pytestmark = pytest.mark.django_db
CAP_USEC = 20_000


def _delay_usec(cur) -> int | None:
    cur.execute("SELECT COUNT, ENABLED FROM information_schema.INNODB_METRICS WHERE NAME = 'purge_dml_delay_usec'")
    count, enabled = cur.fetchone()
    return int(count) if enabled else None


def _updates(stop: threading.Event) -> None:
    """Row changes that keep the history list above the lag of 1 while purge works through it."""
    conn = MySQLdb.connect(**MARIADB, autocommit=True)
    cur = conn.cursor()
    while not stop.is_set():
        cur.execute("UPDATE innowatch_scratch.dml_delay SET n = n + 1 WHERE id = 1 + FLOOR(RAND() * 50)")
    conn.close()


def test_a_poll_stores_the_dml_delay_purge_lag_puts_on_row_changes(local_server, mariadb_root):
    cur = mariadb_root.cursor()
    cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_max_purge_lag', 'innodb_max_purge_lag_delay')")
    saved = dict(cur.fetchall())
    was_enabled = _delay_usec(cur) is not None
    cur.execute("CREATE DATABASE IF NOT EXISTS innowatch_scratch")
    cur.execute("CREATE TABLE IF NOT EXISTS innowatch_scratch.dml_delay (id INT PRIMARY KEY, n INT)")
    cur.executemany("REPLACE INTO innowatch_scratch.dml_delay VALUES (%s, 0)", [(i,) for i in range(1, 51)])
    stop = threading.Event()
    writer = threading.Thread(target=_updates, args=(stop,), daemon=True)
    try:
        # Off by default: a poll leaves the column NULL (unknown), never 0.
        cur.execute("SET GLOBAL innodb_monitor_disable = 'purge_dml_delay_usec'")
        run = poll_once(local_server)
        assert InnodbSample.objects.get(server=local_server, ts=run.sample_at).purge_dml_delay_usec is None

        cur.execute("SET GLOBAL innodb_monitor_enable = 'purge_dml_delay_usec'")
        cur.execute("SET GLOBAL innodb_max_purge_lag = 1")
        cur.execute(f"SET GLOBAL innodb_max_purge_lag_delay = {CAP_USEC}")
        writer.start()
        # (history / lag − 0.5) × 10 ms, clamped to the cap: any history of 3 or more gives the cap.
        wait_for(lambda: _delay_usec(cur) == CAP_USEC, 60, lambda: f"purge_dml_delay_usec = {_delay_usec(cur)}")
        run = poll_once(local_server)
        stored = InnodbSample.objects.get(server=local_server, ts=run.sample_at).purge_dml_delay_usec
        assert stored == CAP_USEC
    finally:
        stop.set()
        if writer.is_alive():
            writer.join(10)
        for name, value in saved.items():
            cur.execute(f"SET GLOBAL {name} = {int(value)}")
        if not was_enabled:
            cur.execute("SET GLOBAL innodb_monitor_disable = 'purge_dml_delay_usec'")
        cur.execute("DROP TABLE IF EXISTS innowatch_scratch.dml_delay")

