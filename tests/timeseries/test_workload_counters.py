"""The workload in a form that counts autocommit transactions: on the local MariaDB, a burst of
autocommit UPDATEs moves the trx id counter (and Handler_commit) while Com_commit stays flat."""

from __future__ import annotations

import MySQLdb
import pytest

from tests.conftest import MARIADB

UPDATES = 300


@pytest.fixture
def scratch_table():
    conn = MySQLdb.connect(**MARIADB, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS innowatch_test")
    cur.execute("CREATE TABLE IF NOT EXISTS innowatch_test.autocommit_load (id INT PRIMARY KEY, n INT) ENGINE=InnoDB")
    cur.execute("REPLACE INTO innowatch_test.autocommit_load VALUES (1, 0)")
    yield cur
    conn.close()


def test_autocommit_updates_are_counted_as_transactions_not_as_commit_statements(local_server, scratch_table):
    from collectors.tasks import poll_once
    from timeseries.metrics import METRICS
    from timeseries.models import InnodbSample

    poll_once(local_server)
    for _ in range(UPDATES):
        scratch_table.execute("UPDATE innowatch_test.autocommit_load SET n = n + 1 WHERE id = 1")
    poll_once(local_server)
    first, last = InnodbSample.objects.filter(server=local_server).order_by("ts")
    assert METRICS["trx_per_s"].column == "trx_id_counter"
    assert last.trx_id_counter - first.trx_id_counter >= UPDATES
    assert last.handler_commit - first.handler_commit >= UPDATES
    # Other tests share this server, but none of them sends hundreds of COMMIT statements.
    assert last.com_commit - first.com_commit < UPDATES / 3
