"""Poll throughput of one worker process against the local MariaDB, beside the bare round trip."""

from __future__ import annotations

import os
import secrets
import statistics
import time

import MySQLdb

from collectors.tasks import poll_once
from servers.models import CollectorRun, Server

MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}
USER = "innowatch_bench"


def _monitor_account() -> str:
    password = secrets.token_urlsafe(16)
    conn = MySQLdb.connect(**MARIADB, autocommit=True)
    cur = conn.cursor()
    for host in ("localhost", "127.0.0.1"):
        cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (USER, host, password))
        cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", (USER, host, password))
        cur.execute("GRANT PROCESS, REPLICATION CLIENT ON *.* TO %s@%s", (USER, host))
    conn.close()
    return password


def register(count: int, interval_s: int = 10) -> list[Server]:
    password = _monitor_account()
    servers = []
    for n in range(count):
        server, _ = Server.objects.update_or_create(
            name=f"poll-bench-{n:03d}",
            defaults={"host": "127.0.0.1", "port": 3306, "user": USER, "poll_interval_s": interval_s},
        )
        server.set_password(password)
        server.save()
        servers.append(server)
    return servers


def bare_round_trip(repeats: int = 200) -> dict:
    """SHOW ENGINE INNODB STATUS on an open connection, and with a fresh connection (as a poll does)."""
    conn = MySQLdb.connect(**MARIADB)
    cur = conn.cursor()
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        cur.execute("SHOW ENGINE INNODB STATUS")
        cur.fetchall()
        times.append((time.perf_counter() - began) * 1000)
    conn.close()
    connect_times = []
    for _ in range(repeats // 4):
        began = time.perf_counter()
        conn = MySQLdb.connect(**MARIADB)
        conn.cursor().execute("SHOW ENGINE INNODB STATUS")
        conn.close()
        connect_times.append((time.perf_counter() - began) * 1000)
    return {"status_round_trip_ms": statistics.median(times),
            "connect_and_status_ms": statistics.median(connect_times)}


def _host_busy_jiffies() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def sustained_polls(servers: list[Server], seconds: float = 30.0) -> dict:
    """Poll the servers round-robin as fast as one process can, for `seconds`."""
    polls = failed = 0
    busy0, total0 = _host_busy_jiffies()
    cpu0, began = time.process_time(), time.perf_counter()
    while time.perf_counter() - began < seconds:
        for server in servers:
            run = poll_once(server)
            polls += 1
            failed += run.status == CollectorRun.Status.FAILED
    elapsed = time.perf_counter() - began
    cpu = time.process_time() - cpu0
    busy1, total1 = _host_busy_jiffies()
    ncpu = os.cpu_count() or 1
    host_busy_s = (busy1 - busy0) / max(total1 - total0, 1) * ncpu * elapsed
    return {
        "polls": polls,
        "polls_failed": failed,
        "polls_per_s": polls / elapsed,
        "poll_wall_ms": elapsed / polls * 1000,
        "worker_cpu_ms_per_poll": cpu / polls * 1000,
        "host_cpu_ms_per_poll": host_busy_s / polls * 1000,
        "cpus": ncpu,
    }
