"""Polls that could not be stored because PostgreSQL was unavailable wait in Redis.

A worker's batch (collectors/batch.py) that fails with OperationalError or InterfaceError has
already read its servers; dropping it would lose samples we were given. Its polls are pushed
instead, as JSON (`timeseries.poll_store.poll_entry`, or a raw reading from older trees), to the
Redis list `iw:spool` (newest at the head), and so are the journals of workers that died with a
batch in memory (`recover_orphans`). `drain_spool` (beat, every 10 s) stores the oldest first once
PostgreSQL answers again. Storing is idempotent: the sample tables' primary key is (server, ts),
and a failure's run row is matched on (server, start), so a poll stored twice is stored once.

Bound on loss (stated, and tested): the list keeps the newest `INNOWATCH_SPOOL_MAX_ENTRIES`
(default 20,000) polls;
older ones are trimmed. At 100 servers polled every 10 s that is ~33 minutes of outage; a
reading is ~5-15 KB compressed, so the spool stays under ~300 MB of Redis. Readings are also
lost if Redis itself is down at the same time (logged). While PostgreSQL is down the fan-out
and the polls work from the server list saved in Redis (`collectors.scheduling.ROSTER_KEY`), so new
readings keep arriving here.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import time
from typing import Any

import redis
from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections
from django.db.models import Q

from timeseries.compression import compress_text, decompress_text

log = logging.getLogger(__name__)

KEY = "iw:spool"
INFLIGHT_KEY = "iw:spool:inflight"  # claimed by a drain; put back if that drain dies
DEAD_KEY = "iw:spool:dead"  # entries that can never be stored (unparseable); kept for a human
LOCK_KEY = "iw:spool:lock"
MAX_ENTRIES = 20_000  # the default of INNOWATCH_SPOOL_MAX_ENTRIES
# The batch writer's journals (collectors/batch.py), by creation time.
JOURNALS_KEY = "iw:journals"
ORPHAN_AFTER_S = 30  # a live worker flushes within ~1 s: a journal this old lost its worker
DB_UNAVAILABLE = (OperationalError, InterfaceError)
_clients: dict[str, redis.Redis] = {}


def _redis() -> redis.Redis:
    url = settings.REDIS_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(url, socket_timeout=2)
    return _clients[url]


def encode(server_id: int, reading: Any) -> str:
    """The parts of a `sources.ServerReading` that ingest needs, as JSON."""
    text = base64.b64encode(compress_text(reading.innodb_status)).decode()
    return json.dumps({
        "v": 1,
        "server_id": server_id,
        "captured_at": reading.captured_at.isoformat(),
        "innodb_status_zlib": text,
        "global_status": reading.global_status,
        "innodb_metrics": reading.innodb_metrics,
        "innodb_trx": getattr(reading, "innodb_trx", None),
    })


def decode(entry: str | bytes) -> dict[str, Any]:
    item = json.loads(entry)
    if item.get("v") == 2:
        return item  # a poll outcome from the batch writer, stored as it is (timeseries.poll_store)
    item["captured_at"] = dt.datetime.fromisoformat(item["captured_at"])
    item["innodb_status"] = decompress_text(base64.b64decode(item.pop("innodb_status_zlib")))
    return item


def entry_age_s(entry: str | bytes, now: dt.datetime) -> float:
    """How long ago a spooled reading was taken: the ingest lag while PostgreSQL is away."""
    try:
        item = json.loads(entry)
        taken = item.get("captured_at") or item["started_at"]
        return max(0.0, (now - dt.datetime.fromisoformat(taken)).total_seconds())
    except (ValueError, KeyError, TypeError):
        return 0.0


def _bound() -> int:
    return getattr(settings, "INNOWATCH_SPOOL_MAX_ENTRIES", MAX_ENTRIES)


def push(server_id: int, reading: Any, max_entries: int | None = None) -> bool:
    """Spool one reading; False if Redis is unavailable too (the reading is then lost)."""
    try:
        pipe = _redis().pipeline()
        pipe.lpush(KEY, encode(server_id, reading))
        pipe.ltrim(KEY, 0, (max_entries or _bound()) - 1)  # the oldest go first when the bound is hit
        pipe.execute()
        return True
    except redis.RedisError:
        log.error("reading of server %s lost: PostgreSQL and Redis both unavailable", server_id)
        return False


def push_entries(entries: list[str | bytes], max_entries: int | None = None) -> bool:
    """Spool polls already encoded by the batch writer (collectors/batch.py); False if Redis is down."""
    try:
        pipe = _redis().pipeline()
        pipe.lpush(KEY, *entries)
        pipe.ltrim(KEY, 0, (max_entries or _bound()) - 1)
        pipe.execute()
        return True
    except redis.RedisError:
        log.error("%d polls lost: PostgreSQL and Redis both unavailable", len(entries))
        return False


def recover_orphans(older_than_s: float = ORPHAN_AFTER_S) -> int:
    """Move the journals of stopped workers into the spool; returns the polls moved."""
    client = _redis()
    moved = 0
    for journal in client.zrangebyscore(JOURNALS_KEY, "-inf", time.time() - older_than_s):
        # Entry by entry (LMOVE is atomic): a sweep that dies midway loses none.
        while client.lmove(journal, KEY, "LEFT", "RIGHT") is not None:
            moved += 1
        client.zrem(JOURNALS_KEY, journal)
    if moved:
        log.warning("%d polls from the journals of stopped workers moved to the spool", moved)
    return moved


def length() -> int:
    return int(_redis().llen(KEY))


def forget_connection_if_broken() -> None:
    """After a database error Django keeps the dead connection; drop it so the next query reconnects."""
    try:
        close_old_connections()
    except DB_UNAVAILABLE:
        pass


def drain(max_items: int = 2000, budget_s: float = 8.0, orphans_after_s: float = ORPHAN_AFTER_S) -> int:
    """Store spooled readings, oldest first (after taking in the journals of stopped workers),
    until the spool is empty, PostgreSQL fails again, or the budget is spent. Returns how many
    entries were taken off the spool."""
    client = _redis()
    if not client.set(LOCK_KEY, "1", nx=True, ex=max(int(budget_s * 4), 30)):
        return 0  # another drain is running
    try:
        recover_orphans(orphans_after_s)
        while client.lmove(INFLIGHT_KEY, KEY, "LEFT", "RIGHT"):
            pass  # a previous drain died mid-entry: its claims go back, oldest end
        done, deadline = 0, time.monotonic() + budget_s
        while done < max_items and time.monotonic() < deadline:
            entry = client.lmove(KEY, INFLIGHT_KEY, "RIGHT", "LEFT")
            if entry is None:
                break
            if not _store_entry(client, entry):
                client.lmove(INFLIGHT_KEY, KEY, "LEFT", "RIGHT")
                break
            client.lrem(INFLIGHT_KEY, 1, entry)
            done += 1
        return done
    finally:
        client.delete(LOCK_KEY)


def _store_entry(client: redis.Redis, entry: bytes) -> bool:
    """True when the entry is dealt with (stored, already stored, or dead); False: retry later."""
    try:
        store(decode(entry))
    except DB_UNAVAILABLE:
        forget_connection_if_broken()
        return False
    except Exception:  # malformed or unparseable: retrying cannot help, keep it for a human
        log.exception("spooled reading cannot be stored; moved to %s", DEAD_KEY)
        client.lpush(DEAD_KEY, entry)
        client.ltrim(DEAD_KEY, 0, 999)
    return True


def store(item: dict[str, Any]) -> bool:
    """Ingest one spooled reading; False when it was already stored (or its server is gone)."""
    from collectors.parsers.innodb_status import PARSER_VERSION, parse_innodb_status
    from servers.models import CollectorRun, Server
    from timeseries import ingest
    from timeseries.poll_store import store_polls

    if item.get("v") == 2:
        return store_polls([item]) > 0 or item.get("ts") is None
    server = Server.objects.filter(pk=item["server_id"]).first()
    if server is None:
        return False
    status = parse_innodb_status(item["innodb_status"])
    ts = item["captured_at"]
    stored = ingest.save_innodb_sample(
        server, ts, status=status, raw_text=item["innodb_status"], parser_version=PARSER_VERSION,
        global_status=item["global_status"], innodb_metrics=item["innodb_metrics"],
        innodb_trx=item.get("innodb_trx"),
    )
    if stored:
        CollectorRun.objects.create(
            server=server, kind=CollectorRun.Kind.INNODB_STATUS, started_at=ts, finished_at=ts,
            status=CollectorRun.Status.OK, error="stored late from the spool (PostgreSQL was unavailable)",
        )
        Server.objects.filter(pk=server.pk).filter(Q(last_sample_at__lt=ts) | Q(last_sample_at=None)).update(
            last_sample_at=ts
        )
    return stored


@shared_task(name="collectors.drain_spool", ignore_result=True, soft_time_limit=30)
def drain_spool() -> int:
    return drain()
