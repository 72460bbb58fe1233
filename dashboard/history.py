"""Synthetic history for benchmarks and demos (`manage.py generate_history`).

Each server tells the seeds' first story. Until the change (60 % into the range) adaptive
flushing is OFF: checkpoint age climbs with the redo rate until InnoDB's async point, then a flush
storm (tens of thousands of pages/s for under a minute, latch waits, stalls) cuts it back: a
sawtooth. History list length grows while purge lags and falls in purge bursts. At the change an
annotation `innodb_adaptive_flushing OFF → ON` is written; afterwards flushing follows the redo
rate, checkpoint age stays small and HLL drains. A restart every week or two resets the counters
(uptime, Com_commit, pages flushed...), so charts and rates must handle it. Load follows a daily
curve. Values are deterministic for a server name.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import transaction

from annotations.models import Annotation
from servers.models import Server
from timeseries import ingest, rollups

PAGE_BYTES = 16384
REDO_CAPACITY = 4 * 1024**3  # 2 × 2 GiB log files
MAX_CHECKPOINT_AGE = int(REDO_CAPACITY * 0.9 * 0.9)  # 5.x formula (DESIGN §2), ≈ 0.81 C
ASYNC_POINT = MAX_CHECKPOINT_AGE * 7 // 8
POOL_PAGES = 524288  # 8 GiB buffer pool
BATCH = 20000


@dataclass
class _State:
    lsn: int = 10**11
    checkpoint_age: int = 0
    storm_left_s: float = 0.0
    hll: float = 2000.0
    uptime_s: float = 86400.0
    commits: int = 0
    questions: int = 0
    pages_flushed: int = 0
    pages_read: int = 0
    rows: tuple[int, int, int, int] = (0, 0, 0, 0)
    next_restart: float = 0.0


def _load(ts: float, rng: random.Random) -> float:
    """Relative load 0.3..1.1: a daily curve peaking at 14:00 UTC, with noise."""
    hour = (ts % 86400) / 3600
    return max(0.05, 0.7 + 0.35 * math.sin((hour - 8) / 24 * 2 * math.pi) + rng.gauss(0, 0.05))


def samples(server_id: int, seed: str, start: dt.datetime, end: dt.datetime, interval_s: int,
            change_at: dt.datetime) -> Iterator[dict]:
    """Sample rows for one server from start to end, every interval_s."""
    rng = random.Random(seed)
    state = _State(next_restart=start.timestamp() + rng.uniform(5, 12) * 86400)
    t, stop, change = start.timestamp(), end.timestamp(), change_at.timestamp()
    while t < stop:
        if t >= state.next_restart:
            _restart(state, rng, t)
        yield _step(state, rng, server_id, t, interval_s, adaptive=t >= change)
        t += interval_s


def _restart(state: _State, rng: random.Random, t: float) -> None:
    # Counters from SHOW GLOBAL STATUS and the buffer pool's totals start again; the LSN does not.
    state.uptime_s = 0.0
    state.commits = state.questions = state.pages_flushed = state.pages_read = 0
    state.rows = (0, 0, 0, 0)
    state.checkpoint_age = 0
    state.storm_left_s = 0.0
    state.next_restart = t + rng.uniform(7, 14) * 86400


def _step(state: _State, rng: random.Random, server_id: int, t: float, dt_s: int, *, adaptive: bool) -> dict:
    load = _load(t, rng)
    redo = int(load * 6_000_000 * dt_s)  # bytes of redo in this interval (~6 MB/s at peak)
    flushed_pages, semaphore_waits = _flush(state, rng, redo, dt_s, adaptive=adaptive)
    state.lsn += redo
    state.uptime_s += dt_s
    commits = int(load * 900 * dt_s)
    state.commits += commits
    state.questions += commits * 12
    state.pages_flushed += flushed_pages
    state.pages_read += int(load * 300 * dt_s)
    ins, upd, dele, read = state.rows
    state.rows = (ins + commits * 3, upd + commits * 2, dele + commits // 2, read + commits * 40)
    _purge(state, rng, load, dt_s, adaptive=adaptive)
    dirty = min(int(POOL_PAGES * 0.9), state.checkpoint_age // (PAGE_BYTES // 4) + rng.randint(500, 2000))
    free = rng.randint(1000, 4000)
    age = state.checkpoint_age
    return {
        "server_id": server_id,
        "ts": dt.datetime.fromtimestamp(t, dt.UTC),
        "lsn": state.lsn,
        "flushed_lsn": state.lsn - rng.randint(0, 4096),
        "pages_flushed_lsn": state.lsn - int(age * 0.97),
        "checkpoint_lsn": state.lsn - age,
        "checkpoint_age_bytes": age,
        "modified_age_bytes": int(age * 0.97),
        "max_checkpoint_age_bytes": MAX_CHECKPOINT_AGE,
        "checkpoint_age_target_bytes": MAX_CHECKPOINT_AGE * 31 // 32,
        "history_list_length": int(state.hll),
        "trx_count": int(40 + 60 * load),
        "trx_active": max(0, int(rng.gauss(8 * load, 2))),
        "trx_oldest_active_s": rng.choice((0, 0, 0, 1, 2, 5)),
        "lock_waits": int(rng.random() < 0.05 * load),
        "pages_total": POOL_PAGES,
        "pages_free": free,
        "pages_data": POOL_PAGES - free,
        "pages_dirty": dirty,
        "pages_read": state.pages_read,
        "pages_written": state.pages_flushed,
        "rows_inserted": state.rows[0],
        "rows_updated": state.rows[1],
        "rows_deleted": state.rows[2],
        "rows_read": state.rows[3],
        "semaphore_waits": semaphore_waits,
        "semaphore_longest_wait_s": float(semaphore_waits and rng.randint(1, 3)),
        "uptime_s": int(state.uptime_s),
        "com_commit": state.commits,
        "questions": state.questions,
        "threads_running": max(1, int(rng.gauss(6 * load, 2)) + 20 * bool(semaphore_waits)),
        "innodb_os_log_written": state.lsn - 10**11,
        "innodb_buffer_pool_pages_flushed": state.pages_flushed,
        "status_checkpoint_age": age,
        "status_checkpoint_max_age": MAX_CHECKPOINT_AGE,
    }


def _flush(state: _State, rng: random.Random, redo: int, dt_s: int, *, adaptive: bool) -> tuple[int, int]:
    """Pages flushed in this interval and threads stalled on latches; updates checkpoint age."""
    background = int(rng.uniform(50, 150) * dt_s)
    if adaptive:
        # The page cleaner follows the redo rate: the age holds at ~20 s of redo above a small floor.
        state.checkpoint_age = int(ASYNC_POINT * 0.05 * (0.5 + rng.random()) + redo / dt_s * 20)
        return background + redo // (PAGE_BYTES // 2), 0
    state.checkpoint_age += redo
    if state.checkpoint_age >= ASYNC_POINT and state.storm_left_s <= 0:
        state.storm_left_s = rng.uniform(20, 50)
    if state.storm_left_s <= 0:
        return background, 0
    # Flush storm: the age falls to ~15 % of the async point over the storm.
    span = min(dt_s, state.storm_left_s)
    drop = int((state.checkpoint_age - 0.15 * ASYNC_POINT) * span / state.storm_left_s)
    state.checkpoint_age = max(0, state.checkpoint_age - drop)
    state.storm_left_s -= dt_s
    return background + drop // (PAGE_BYTES // 4), rng.randint(2, 30)


def _purge(state: _State, rng: random.Random, load: float, dt_s: int, *, adaptive: bool) -> None:
    if adaptive:
        state.hll = max(50.0, state.hll * (1 - 0.002 * dt_s) + rng.uniform(0, 5))
        return
    state.hll += load * 4 * dt_s * rng.uniform(0.2, 1.8)
    if rng.random() < dt_s / 7200:  # a purge burst every couple of hours
        state.hll *= rng.uniform(0.2, 0.6)


def generate_history(servers: int, days: float, interval_s: int, start: dt.datetime | None = None,
                     prefix: str = "synthetic", log=None) -> dict:
    """Create `servers` synthetic servers with history; returns counts and timings."""
    end = start + dt.timedelta(days=days) if start else dt.datetime.now(dt.UTC).replace(microsecond=0)
    start = start or end - dt.timedelta(days=days)
    change_at = start + (end - start) * 0.6
    began, written = time.monotonic(), 0
    for n in range(servers):
        server = _server(f"{prefix}-{n + 1:03d}", interval_s)
        _annotate(server, change_at)
        batch: list[dict] = []
        for row in samples(server.pk, server.name, start, end, interval_s, change_at):
            batch.append(row)
            if len(batch) >= BATCH:
                written += ingest.save_innodb_samples(batch)
                batch = []
        written += ingest.save_innodb_samples(batch)
        if log:
            log(f"{server.name}: {written} rows so far, {time.monotonic() - began:.1f} s")
    for resolution in rollups.LEVELS:
        rollups.build_range(resolution, start, end)
    rollups.mark_built(start, end)
    rollups.analyze()
    return {"rows": written, "seconds": time.monotonic() - began, "start": start, "end": end}


def _server(name: str, interval_s: int) -> Server:
    server, _ = Server.objects.update_or_create(
        name=name,
        defaults={"host": "synthetic.invalid", "poll_interval_s": interval_s, "synthetic": True, "enabled": False,
                  "flavor": Server.Flavor.MYSQL, "version": "5.7.44", "tags": ["synthetic"]},
    )
    return server


def _annotate(server: Server, at: dt.datetime) -> None:
    with transaction.atomic():
        Annotation.objects.filter(
            server=server, kind=Annotation.Kind.VARIABLE_CHANGE, text__startswith="innodb_adaptive"
        ).delete()
        Annotation.objects.create(server=server, time=at, kind=Annotation.Kind.VARIABLE_CHANGE,
                                  text="innodb_adaptive_flushing OFF → ON", tags=["synthetic"])

