"""The parser against the real local MariaDB: its numbers equal the server's own counters."""

from __future__ import annotations

import threading
import time

import pytest

from collectors.parsers.innodb_status import parse_innodb_status

MySQLdb = pytest.importorskip("MySQLdb")
COUNTERS = ("Innodb_checkpoint_age", "Innodb_history_list_length", "Innodb_buffer_pool_pages_dirty")


def _connect():
    try:
        conn = MySQLdb.connect(host="127.0.0.1", port=3306, user="root", passwd="", connect_timeout=3)
    except MySQLdb.OperationalError as exc:  # no server on this machine
        pytest.skip(f"local MariaDB unavailable: {exc}")
    conn.autocommit(True)
    return conn


def _read_both(cur):
    """SHOW ENGINE INNODB STATUS and the matching SHOW GLOBAL STATUS counters, back to back."""
    cur.execute("SHOW ENGINE INNODB STATUS")
    record = parse_innodb_status(cur.fetchone()[2])
    cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (%s, %s, %s)", COUNTERS)
    status = {k: int(v) for k, v in cur.fetchall()}
    parsed = (record.log.checkpoint_age_bytes, record.transactions.history_list_length, record.buffer_pool.pages_dirty)
    return parsed, tuple(status[k] for k in COUNTERS)


@pytest.fixture
def scratch_table():
    conn = _connect()
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS innowatch_scratch")
    cur.execute("CREATE TABLE IF NOT EXISTS innowatch_scratch.load (id INT AUTO_INCREMENT PRIMARY KEY, "
                "v VARCHAR(100)) ENGINE=InnoDB")
    yield conn
    conn.close()


def test_idle_server_checkpoint_age_history_and_dirty_pages_equal_global_status(scratch_table):
    cur = scratch_table.cursor()
    # The local server is shared (other tests, a running innowatch): a write between the two
    # statements moves the counters. Retry until one quiet pair; if the server never goes quiet,
    # the difference must still be what a few ms of someone else's writes can do.
    for _ in range(20):
        parsed, server = _read_both(cur)
        if parsed == server:
            return
        time.sleep(0.1)
    assert abs(parsed[0] - server[0]) < 512 * 1024
    assert abs(parsed[1] - server[1]) < 100 and abs(parsed[2] - server[2]) < 100


def test_under_write_load_the_numbers_stay_within_what_moves_between_two_statements(scratch_table):
    stop = threading.Event()

    def write_load():
        conn = _connect()
        c = conn.cursor()
        while not stop.is_set():
            c.executemany("INSERT INTO innowatch_scratch.load (v) VALUES (%s)", [("y" * 80,)] * 50)
        conn.close()

    worker = threading.Thread(target=write_load, daemon=True)
    worker.start()
    try:
        cur = scratch_table.cursor()
        for _ in range(5):
            (age, hll, dirty), (s_age, s_hll, s_dirty) = _read_both(cur)
            # a few ms of inserts: a few hundred KB of redo, some purge work, some pages
            assert abs(age - s_age) < 8 * 1024 * 1024
            assert abs(hll - s_hll) < 2000
            assert abs(dirty - s_dirty) < 1000
    finally:
        stop.set()
        worker.join(10)
