"""Connections to the monitored server are kept per process and reused: the local MariaDB, for real."""

from __future__ import annotations

import pytest

from collectors import sources
from collectors.pool import ConnectionPool
from tests.conftest import MARIADB


@pytest.fixture
def params(monitor_account):
    return sources.ConnectionParams("127.0.0.1", 3306, monitor_account["user"], monitor_account["password"], 5)


def connection_id(conn) -> int:
    cur = conn.cursor()
    cur.execute("SELECT CONNECTION_ID()")
    return cur.fetchone()[0]


def test_polls_reuse_one_open_connection(params):
    pool = ConnectionPool(sources.connect)
    ids = {pool.run(params, connection_id) for _ in range(5)}
    readings = [sources.read_server(params, pool=pool) for _ in range(3)]
    assert len(ids) == 1 and pool.opened == 1 and pool.idle_count() == 1
    assert all(r.innodb_status and r.global_status and r.version for r in readings)


def test_a_connection_the_server_killed_is_replaced_and_the_poll_succeeds(params, mariadb_root):
    pool = ConnectionPool(sources.connect)
    first = pool.run(params, connection_id)
    mariadb_root.cursor().execute(f"KILL {first}")  # as wait_timeout or a restart would
    reading = sources.read_server(params, pool=pool)
    assert reading.innodb_status and pool.opened == 2
    assert pool.run(params, connection_id) != first


def test_a_changed_password_closes_the_old_connections_and_opens_a_fresh_one(params, monitor_account, mariadb_root):
    pool = ConnectionPool(sources.connect)
    old = pool.run(params, connection_id)
    new_password = monitor_account["password"] + "-rotated"
    cur = mariadb_root.cursor()
    for host in ("localhost", "127.0.0.1"):
        cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", (monitor_account["user"], host, new_password))
    try:
        rotated = sources.ConnectionParams(params.host, params.port, params.user, new_password, 5)
        assert pool.run(rotated, connection_id) != old and pool.opened == 2
        assert pool.idle_count() == 1  # the connection opened with the old password is gone
        with pytest.raises(sources.SourceError) as failed:  # the old password is refused, not reused
            pool.run(params, connection_id)
        assert failed.value.kind == "auth"
    finally:
        for host in ("localhost", "127.0.0.1"):
            cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", (monitor_account["user"], host, monitor_account["password"]))


def test_idle_connections_past_the_timeout_or_the_bound_are_closed(params):
    pool = ConnectionPool(sources.connect, idle_timeout_s=0.0)
    first = pool.run(params, connection_id)
    assert pool.run(params, connection_id) != first  # idle longer than 0 s: not reused
    bounded = ConnectionPool(sources.connect, max_idle=1)
    root = sources.ConnectionParams(MARIADB["host"], MARIADB["port"], MARIADB["user"], MARIADB["password"], 5)
    bounded.run(params, connection_id)
    bounded.run(root, connection_id)
    assert bounded.idle_count() == 1


def test_an_error_in_the_poll_closes_the_connection_instead_of_reusing_it(params):
    pool = ConnectionPool(sources.connect)

    def broken(conn):
        conn.cursor().execute("SELECT * FROM no_such_schema.no_such_table")

    with pytest.raises(Exception):  # noqa: B017 - the server's own error, whatever its class
        pool.run(params, broken)
    assert pool.idle_count() == 0
