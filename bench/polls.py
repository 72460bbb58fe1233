"""Poll throughput of one worker process against the local MariaDB, beside the bare reads (the
same queries on open connections, no parse, no store) measured in the same run."""

from __future__ import annotations

import itertools
import json
import os
import random
import secrets
import statistics
import threading
import time

import MySQLdb

from collectors import batch, poll_state, polling, sources
from collectors.scheduling import ROSTER_FIELDS, redis_client
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
    """`count` servers, all the local MariaDB through the bench's monitoring account."""
    prototype = Server(host="127.0.0.1", port=3306, user=USER, poll_interval_s=interval_s)
    prototype.set_password(_monitor_account())
    Server.objects.filter(name__startswith="poll-bench-").delete()
    Server.objects.bulk_create(
        Server(name=f"poll-bench-{n:04d}", host=prototype.host, port=prototype.port, user=USER,
               password_encrypted=prototype.password_encrypted, poll_interval_s=interval_s) for n in range(count))
    servers = list(Server.objects.filter(name__startswith="poll-bench-").order_by("name"))
    servers[0].save()  # bulk_create sends no signal: the roster learns of them from this one
    return servers


_counters = threading.local()


def _server_status(*names: str) -> dict[str, str]:
    """GLOBAL STATUS values, on one connection kept for the run: a new connection is a SET NAMES,
    which the poll would take for a SET since its last read of the variables."""
    conn = getattr(_counters, "conn", None)
    if conn is None:
        conn = _counters.conn = MySQLdb.connect(**MARIADB, autocommit=True)
    cur = conn.cursor()
    cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ",".join(["%s"] * len(names)) + ")", names)
    return dict(cur.fetchall())


def variables_reads() -> int:
    """How often the MariaDB has been asked for its variables (its count of SHOW VARIABLES)."""
    return int(_server_status("Com_show_variables")["Com_show_variables"])


class OpenTransactions:
    """`sessions` clients each holding a transaction open with a few rows changed, as on a busy
    server between commits: the status text grows to a real server's size (each transaction
    listed with its locks: ~14 KB for 60, against ~2 KB idle) and INNODB_TRX returns rows."""

    SCHEMA = "innowatch_bench_load"

    def __init__(self, sessions: int = 60):
        self.sessions = sessions
        self._conns: list = []

    def __enter__(self):
        admin = MySQLdb.connect(**MARIADB, autocommit=True)
        cur = admin.cursor()
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {self.SCHEMA}")
        cur.execute(f"CREATE TABLE IF NOT EXISTS {self.SCHEMA}.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        cur.execute(f"INSERT IGNORE INTO {self.SCHEMA}.t (id, v) VALUES "
                    + ",".join(f"({n}, 0)" for n in range(1, 10 * self.sessions + 1)))
        admin.close()
        for n in range(self.sessions):
            conn = MySQLdb.connect(**MARIADB)
            conn.cursor().execute(f"UPDATE {self.SCHEMA}.t SET v = v + 1 WHERE id BETWEEN {10 * n + 1} AND {10 * n + 5}")
            self._conns.append(conn)
        return self

    def __exit__(self, *exc) -> None:
        for conn in self._conns:
            conn.rollback()
            conn.close()
        admin = MySQLdb.connect(**MARIADB, autocommit=True)
        admin.cursor().execute(f"DROP DATABASE IF EXISTS {self.SCHEMA}")
        admin.close()


def status_text_bytes() -> int:
    conn = MySQLdb.connect(**MARIADB)
    try:
        cur = conn.cursor()
        cur.execute("SHOW ENGINE INNODB STATUS")
        return len(cur.fetchone()[2])
    finally:
        conn.close()


def steady_state(servers: list[Server], seed: int = 0) -> None:
    """Each server's poll state as after a long run of polls every 10 s: its variables last read
    at a random moment of the last minute, with the server's SET count of now. Without it the
    bench would measure every server's first poll (PostgreSQL reads, a variables snapshot)."""
    rng = random.Random(seed)
    sets = poll_state.set_statements(_server_status(*poll_state._SETTING_COUNTERS))
    client = redis_client()
    states = client.hmget(poll_state.STATE_KEY, [s.pk for s in servers])
    now = time.time()
    updated = {}
    for server, raw in zip(servers, states, strict=True):
        state = poll_state.decode(raw)
        if state.get("vd"):
            updated[server.pk] = json.dumps({**state, "va": now - rng.uniform(0, poll_state.VARIABLES_EVERY_S),
                                             "sets": sets})
    if updated:
        client.hset(poll_state.STATE_KEY, mapping=updated)


def warm_up(servers: list[Server], threads: int) -> None:
    """Poll each server once (its first poll: snapshot, identity), leaving `threads` pooled
    connections open, as a worker that has run for a while has them."""
    todo = iter([(s.pk, {f: getattr(s, f) for f in ROSTER_FIELDS}) for s in servers])
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                chunk = list(itertools.islice(todo, 16))
            if not chunk:
                return
            poll_servers.run([(sid, None, entry) for sid, entry in chunk])

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    batch.writer().flush()


class SetTraffic:
    """A client sending a session SET every `every_s` seconds, as applications' connection set-up
    does on a busy server: the server's SET count then moves between any two polls, so every
    poll reads the variables (collectors.poll_state.variables_due), as before the digest."""

    def __init__(self, every_s: float = 0.02):
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        conn = MySQLdb.connect(**MARIADB, autocommit=True)
        cur = conn.cursor()
        while not self._stop.wait(self.every_s):
            cur.execute("SET @innowatch_bench = 1")
        conn.close()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


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


def bare_reads(servers: list[Server], seconds: float, threads: int, variables_fraction: float = 1.0) -> dict:
    """The poll's MySQL queries on open connections (one per thread), rows fetched into dicts:
    no parse, no store. What a poll cannot do without. The variables are read in the same
    fraction of reads as the polls measured beside it read them."""
    params = polling.connection_params(servers[0])
    conns = [sources.connect(params) for _ in range(threads)]
    done = [0] * threads

    def read(i: int) -> int:
        done[i] += 1
        with_variables = int(done[i] * variables_fraction) != int((done[i] - 1) * variables_fraction)
        sources.read_on(conns[i], with_variables=with_variables, with_trx=True, trx_limit=polling.OLDEST_TRX_ROWS)
        return 1

    try:
        measured = _in_threads(threads, seconds, read)
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
    rotation = itertools.cycle([(s.pk, {f: getattr(s, f) for f in ROSTER_FIELDS}) for s in servers])
    slots = itertools.count(int(time.time() * 1000))

    def one(i: int) -> int:
        if chunk == 1:
            server_id, entry = next(rotation)
            poll_server.run(server_id, next(slots), entry)
        else:
            poll_servers.run([(sid, next(slots), entry) for sid, entry in
                              (next(rotation) for _ in range(chunk))])
        return chunk

    failed0, asked0 = _failed(), variables_reads()
    steady_state(servers)
    writer = batch.writer()
    stored0 = writer.stored
    measured = _in_threads(threads, seconds, one)
    writer.flush()
    polls, elapsed = measured["done"], measured["elapsed"]
    return {
        "variables_read_fraction": (variables_reads() - asked0) / polls,
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
