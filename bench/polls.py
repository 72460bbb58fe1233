"""Poll throughput of one worker process against the local MariaDB, beside the bare reads (the
same queries on open connections, no parse, no store) measured in the same run."""

from __future__ import annotations

import itertools
import os
import secrets
import statistics
import threading
import time

import MySQLdb

from collectors import batch, polling, sources
from collectors.scheduling import ROSTER_FIELDS
from collectors.tasks import poll_server, poll_servers
from servers.models import PollMinute, Server

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
    """SHOW ENGINE INNODB STATUS on an open connection, and with a fresh connection."""
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


def _in_threads(threads: int, seconds: float, work) -> dict:
    """Run `work(thread_index)` (returns 1 per poll or read done) in threads for `seconds`;
    process CPU (all threads) and host CPU measured around it."""
    counts = [0] * threads
    stop = threading.Event()

    def loop(i: int) -> None:
        while not stop.is_set():
            counts[i] += work(i)

    busy0, total0 = _host_busy_jiffies()
    cpu0, began = time.process_time(), time.perf_counter()
    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in workers:
        t.join()
    return {"done": sum(counts), "elapsed": time.perf_counter() - began, "cpu": time.process_time() - cpu0,
            "host": _host_busy(busy0, total0, time.perf_counter() - began)}


def _host_busy(busy0: int, total0: int, elapsed: float) -> float:
    busy1, total1 = _host_busy_jiffies()
    return (busy1 - busy0) / max(total1 - total0, 1) * (os.cpu_count() or 1) * elapsed


def bare_reads(servers: list[Server], seconds: float, threads: int) -> dict:
    """The poll's MySQL queries on open connections (one per thread), rows fetched into dicts:
    no parse, no store. What a poll cannot do without."""
    params = polling.connection_params(servers[0])
    conns = [sources.connect(params) for _ in range(threads)]
    try:
        measured = _in_threads(threads, seconds, lambda i: bool(sources.read_on(conns[i])))
    finally:
        for conn in conns:
            conn.close()
    return {"bare_reads": measured["done"], "bare_reads_per_s": measured["done"] / measured["elapsed"],
            "bare_read_cpu_ms_per_poll": measured["cpu"] / measured["done"] * 1000,
            "bare_read_host_cpu_ms_per_poll": measured["host"] / measured["done"] * 1000}


def sustained_polls(servers: list[Server], seconds: float = 30.0, threads: int = 4, chunk: int = 1) -> dict:
    """Polls as a worker process runs them (the poll task's body: slot claims, poll state, reads
    on pooled connections, parse, batched store), `chunk` polls per task as the fan-out sends them
    (one per message when few are due, up to 25 at scale), in `threads` threads, for `seconds`."""
    entries = [(s.pk, {f: getattr(s, f) for f in ROSTER_FIELDS}) for s in servers]
    slots = itertools.count(int(time.time() * 1000))

    def one(i: int) -> int:
        if chunk == 1:
            server_id, entry = entries[next(slots) % len(entries)]
            poll_server.run(server_id, next(slots), entry)
        else:
            poll_servers.run([(sid, next(slots), entry) for sid, entry in
                              (entries[next(slots) % len(entries)] for _ in range(chunk))])
        return chunk

    failed0 = _failed()
    writer = batch.writer()
    stored0 = writer.stored
    measured = _in_threads(threads, seconds, one)
    writer.flush()
    polls, elapsed = measured["done"], measured["elapsed"]
    return {
        "polls": polls,
        "poll_threads": threads,
        "polls_per_task": chunk,
        "polls_failed": _failed() - failed0,
        "polls_stored": writer.stored - stored0,
        "polls_per_s": polls / elapsed,
        "poll_wall_ms": elapsed / polls * 1000 * threads,
        "worker_cpu_ms_per_poll": measured["cpu"] / polls * 1000,
        "host_cpu_ms_per_poll": measured["host"] / polls * 1000,
        "pool_connections_opened": sources.POOL.opened,
        "cpus": os.cpu_count() or 1,
    }


def _failed() -> int:
    return PollMinute.objects.totals()["failures"]


def write_cost(servers: list[Server], polls: int = 250, repeats: int = 3) -> dict:
    """What storing a batch of polls costs PostgreSQL: WAL bytes per poll (pg_current_wal_lsn
    around the flush alone; the cluster is shared, so the median of a few batches), and the raw
    status text's stored size."""
    from django.db import connection

    entries = [(s.pk, {f: getattr(s, f) for f in ROSTER_FIELDS}) for s in servers]
    wal = []
    for _ in range(repeats):
        writer = batch.PollWriter(max_polls=10 * polls, max_age_s=3600)
        for n in range(polls):
            server_id, entry = entries[n % len(entries)]
            server = polling.server_from_roster(entry)
            writer.add(polling.poll(server, {})[1], {})
        with connection.cursor() as cur:
            cur.execute("SELECT pg_current_wal_lsn()")
            before = cur.fetchone()[0]
            writer.flush()
            cur.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", [before])
            wal.append(float(cur.fetchone()[0]) / polls)
    with connection.cursor() as cur:
        cur.execute("SELECT avg(octet_length(text_zlib)) FROM dashboard_rawstatus "
                    "WHERE server_id = ANY(%s)", [[s.pk for s in servers]])
        raw_bytes = cur.fetchone()[0]
    return {"wal_bytes_per_poll": statistics.median(wal), "raw_status_bytes_per_poll": float(raw_bytes or 0)}
