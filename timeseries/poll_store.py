"""Many polls stored in one transaction: their samples, raw texts, latch waits and view holders,
the polls worth a `CollectorRun` row, the per-minute poll counts and each server's poll state.

A poll arrives as a plain dict (`poll_entry`), JSON-ready, because the same dict waits in the
worker's Redis journal and in the outage spool before it is stored (collectors/batch.py). Storing
is idempotent: a sample already stored (a journal replayed after a crash) is skipped, and so are
its raw text, its counts and its run row, so a replay never counts a poll twice.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections import defaultdict
from typing import Any

import psycopg2
from django.db import DataError, IntegrityError, connection, transaction
from psycopg2.extras import execute_values

from servers.models import CollectorRun, PollMinute, Server
from timeseries import ingest
from timeseries.compression import compress_text
from timeseries.models import InnodbSample, RawStatus, ReadViewHolder, SemaphoreWaitSample

_WAIT_FIELDS = ("seq", "thread_id", "file", "line", "seconds", "latch", "mode", "created_file", "created_line",
                "holder_thread_id")
_HOLDER_FIELDS = ("rank", "thread_id", "user", "host", "trx_id", "age_s", "state", "statement", "rows_locked",
                  "rows_modified", "source")


def poll_entry(server_id: int, *, started_at: dt.datetime, duration_ms: float, status: str, error_kind: str = "",
               error: str = "", record: bool = False, ts: dt.datetime | None = None, sample: dict | None = None,
               raw_text: str | None = None, parser_version: str = "", waits=(), holders=()) -> dict[str, Any]:
    """One poll's outcome as a JSON-ready dict: the sample's columns, the status text (compressed,
    base64), the latch waits and view holders (model instances, read for their fields)."""
    return {
        "v": 2, "server_id": server_id, "started_at": started_at.isoformat(), "duration_ms": duration_ms,
        "status": status, "error_kind": error_kind, "error": error[:2000], "record": record,
        "ts": ts.isoformat() if ts else None, "sample": sample, "parser_version": parser_version,
        # zstd (zlib in journals written before: timeseries.compression reads both)
        "raw_zlib": base64.b64encode(compress_text(raw_text)).decode() if raw_text is not None else None,
        "waits": [{f: getattr(w, f) for f in _WAIT_FIELDS} for w in waits],
        "holders": [{f: getattr(h, f) for f in _HOLDER_FIELDS} for h in holders],
    }


def store_polls(entries: list[dict[str, Any]]) -> int:
    """Store the polls (see the module docstring) in one transaction; returns new samples stored."""
    if not entries:
        return 0
    for entry in entries:
        entry["_started"] = dt.datetime.fromisoformat(entry["started_at"])
        entry["_ts"] = dt.datetime.fromisoformat(entry["ts"]) if entry.get("ts") else None
    timestamps = {e["_ts"] for e in entries if e["_ts"]} or {entries[0]["_started"]}
    try:
        return ingest._write_with_partitions(timestamps, lambda: _store(entries))
    except IntegrityError as exc:
        if ingest._sqlstate(exc) != "23503":
            raise
    # A server deleted while its polls were in flight: its polls go with it, the others are stored.
    alive = set(Server.objects.filter(pk__in={e["server_id"] for e in entries}).values_list("pk", flat=True))
    kept = [e for e in entries if e["server_id"] in alive]
    return ingest._write_with_partitions(timestamps, lambda: _store(kept)) if kept else 0


def _store(entries: list[dict[str, Any]]) -> int:
    rows = [ingest.sample_row(e["server_id"], e["_ts"], **e["sample"]) for e in entries if e["_ts"]]
    with transaction.atomic():
        new = _insert_samples(rows)
        recorded = _insert_runs([e for e in entries if e["record"]])
        # A replayed poll is neither stored nor counted again: its sample (or, for a failure, its
        # run row) is already there.
        fresh = [e for e in entries if (e["server_id"], e["_ts"]) in new
                 or (e["_ts"] is None and (e["server_id"], e["_started"]) in recorded)]
        _insert_details([e for e in fresh if e["_ts"] is not None])
        _count_minutes(fresh)
        _update_servers(entries)
    return len(new)


def _insert_samples(rows: list[dict[str, Any]]) -> set[tuple[int, dt.datetime]]:
    """Insert the sample rows; the (server, ts) of those that were not there yet. COPY costs the
    worker less than half the CPU of a multi-row INSERT (docs/benchmarks.md); a batch COPY cannot
    read (a float in an integer column) goes in as an INSERT, which casts it."""
    if not rows:
        return set()
    new: set = set()

    def copy(batch, page_size):
        new.update(ingest.copy_new_samples(batch))
        return len(new)

    def insert(batch, page_size):
        with connection.cursor() as cur:
            new.update(execute_values(cur.cursor, _INSERT_SAMPLES, ingest._values(batch), page_size=page_size,
                                      fetch=True))
        return len(new)

    # A value its column cannot hold is stored NULL with a warning (ingest.fit_to_columns).
    try:
        ingest._fitting(copy, rows, 1000)
    except (DataError, psycopg2.DataError) as exc:
        if ingest._sqlstate(exc) != "22P02":
            raise
        ingest._fitting(insert, rows, 1000)
    return new


_INSERT_SAMPLES = (f'INSERT INTO "{InnodbSample._meta.db_table}" ({", ".join(ingest.SAMPLE_COLUMNS)}) VALUES %s '
                   "ON CONFLICT (server_id, ts) DO NOTHING RETURNING server_id, ts")


def _insert_details(entries: list[dict[str, Any]]) -> None:
    raws, waits, holders = [], [], []
    for e in entries:
        sid, ts = e["server_id"], e["_ts"]
        if e.get("raw_zlib"):
            raws.append((sid, ts, e["parser_version"], base64.b64decode(e["raw_zlib"])))
        waits += [SemaphoreWaitSample(server_id=sid, ts=ts, **w) for w in e.get("waits") or ()]
        holders += [ReadViewHolder(server_id=sid, ts=ts, **h) for h in e.get("holders") or ()]
    if raws:
        with connection.cursor() as cur:
            execute_values(cur.cursor, f'INSERT INTO "{RawStatus._meta.db_table}" (server_id, ts, parser_version, '
                           "text_zlib) VALUES %s ON CONFLICT DO NOTHING", raws, page_size=1000)
    SemaphoreWaitSample.objects.bulk_create(waits, ignore_conflicts=True)
    ReadViewHolder.objects.bulk_create(holders, ignore_conflicts=True)


def _insert_runs(entries: list[dict[str, Any]]) -> set[tuple[int, dt.datetime]]:
    """A CollectorRun row per poll worth one; a replayed poll (same server and start) is skipped.
    Returns the (server, started_at) of the rows inserted."""
    if not entries:
        return set()
    values = [(e["server_id"], CollectorRun.Kind.INNODB_STATUS, e["_started"],
               e["_started"] + dt.timedelta(milliseconds=e["duration_ms"]), e["status"], e["error_kind"] or "",
               e["error"] or "", e["duration_ms"]) for e in entries]
    table = CollectorRun._meta.db_table
    with connection.cursor() as cur:
        return set(execute_values(cur.cursor, (
            f'INSERT INTO "{table}" (server_id, kind, started_at, finished_at, status, error_kind, error, duration_ms) '
            "SELECT * FROM (VALUES %s) AS v(server_id, kind, started_at, finished_at, status, error_kind, error, ms) "
            f'WHERE NOT EXISTS (SELECT 1 FROM "{table}" r WHERE r.server_id = v.server_id '
            "AND r.started_at = v.started_at AND r.kind = v.kind) RETURNING server_id, started_at"),
            values, template="(%s, %s, %s::timestamptz, %s::timestamptz, %s, %s, %s, %s::float8)", fetch=True))


def _count_minutes(entries: list[dict[str, Any]]) -> None:
    minutes: dict[tuple[int, dt.datetime], list] = defaultdict(lambda: [0, 0, 0, []])
    for e in entries:
        counts = minutes[(e["server_id"], e["_started"].replace(second=0, microsecond=0))]
        counts[0] += 1
        counts[1] += e["status"] == CollectorRun.Status.FAILED
        counts[2] += e["status"] == CollectorRun.Status.WARNING
        counts[3].append(round(e["duration_ms"], 3))
    if not minutes:
        return
    table = PollMinute._meta.db_table
    with connection.cursor() as cur:
        execute_values(cur.cursor, (
            f'INSERT INTO "{table}" AS m (server_id, minute, polls, failures, warnings, durations_ms) VALUES %s '
            "ON CONFLICT (server_id, minute) DO UPDATE SET polls = m.polls + EXCLUDED.polls, "
            "failures = m.failures + EXCLUDED.failures, warnings = m.warnings + EXCLUDED.warnings, "
            "durations_ms = m.durations_ms || EXCLUDED.durations_ms"),
            [(sid, minute, *counts[:3], counts[3]) for (sid, minute), counts in sorted(minutes.items())],
            template="(%s, %s, %s, %s, %s, %s::float8[])")


def _update_servers(entries: list[dict[str, Any]]) -> None:
    """Each server's poll state from its latest poll in the batch; an older batch (from the spool)
    never overwrites a newer state, and last_sample_at only moves forward."""
    latest: dict[int, dict] = {}
    newest: dict[int, dt.datetime] = {}
    for e in entries:
        sid = e["server_id"]
        if sid not in latest or latest[sid]["_started"] <= e["_started"]:
            latest[sid] = e
        if e["_ts"] and (sid not in newest or newest[sid] < e["_ts"]):
            newest[sid] = e["_ts"]
    values = []
    for sid, e in sorted(latest.items()):
        failed = e["status"] == CollectorRun.Status.FAILED
        values.append((sid, e["_started"] + dt.timedelta(milliseconds=e["duration_ms"]),
                       e["error_kind"] if failed else Server.PollStatus.OK, e["error"] or "", newest.get(sid)))
    table = Server._meta.db_table
    with connection.cursor() as cur:
        execute_values(cur.cursor, (
            f'UPDATE "{table}" AS s SET last_poll_at = CASE WHEN s.last_poll_at > v.poll_at THEN s.last_poll_at '
            "ELSE v.poll_at END, "
            "last_poll_status = CASE WHEN s.last_poll_at > v.poll_at THEN s.last_poll_status ELSE v.status END, "
            "last_error = CASE WHEN s.last_poll_at > v.poll_at THEN s.last_error ELSE v.error END, "
            "last_sample_at = GREATEST(s.last_sample_at, v.sample_at) "
            "FROM (VALUES %s) AS v(id, poll_at, status, error, sample_at) WHERE s.id = v.id"),
            values, template="(%s, %s::timestamptz, %s, %s, %s::timestamptz)")
