"""Records -> model rows: the only place that maps parser output onto columns."""

from __future__ import annotations

import datetime as dt
import io
import logging
from collections.abc import Sequence
from typing import Any

import psycopg2
from django.db import IntegrityError, connection, transaction
from django.db.utils import DatabaseError
from psycopg2.extras import execute_values

from analysis import purge
from servers.models import Server
from timeseries import partitions
from timeseries.compression import compress_text
from timeseries.models import InnodbSample, RawStatus, ReadViewHolder, SemaphoreWaitSample

log = logging.getLogger(__name__)

# column -> (section attribute, field attribute) on the parsed InnodbStatus record
STATUS_COLUMNS: dict[str, tuple[str, str]] = {
    "lsn": ("log", "lsn"),
    "flushed_lsn": ("log", "flushed_lsn"),
    "pages_flushed_lsn": ("log", "pages_flushed_lsn"),
    "checkpoint_lsn": ("log", "checkpoint_lsn"),
    "checkpoint_age_bytes": ("log", "checkpoint_age_bytes"),
    "modified_age_bytes": ("log", "modified_age_bytes"),
    "max_checkpoint_age_bytes": ("log", "max_checkpoint_age_bytes"),
    "checkpoint_age_target_bytes": ("log", "checkpoint_age_target_bytes"),
    "log_ios_done": ("log", "log_ios_done"),
    "pending_log_writes": ("log", "pending_log_writes"),
    "pending_checkpoint_writes": ("log", "pending_checkpoint_writes"),
    "history_list_length": ("transactions", "history_list_length"),
    "trx_id_counter": ("transactions", "trx_id_counter"),
    "purge_trx_id": ("transactions", "purge_trx_id"),
    "trx_count": ("transactions", "count"),
    "trx_active": ("transactions", "active"),
    "trx_oldest_active_s": ("transactions", "oldest_active_s"),
    "lock_waits": ("transactions", "lock_waits"),
    "pages_total": ("buffer_pool", "pages_total"),
    "pages_free": ("buffer_pool", "pages_free"),
    "pages_data": ("buffer_pool", "pages_data"),
    "pages_dirty": ("buffer_pool", "pages_dirty"),
    "pages_read": ("buffer_pool", "pages_read"),
    "pages_created": ("buffer_pool", "pages_created"),
    "pages_written": ("buffer_pool", "pages_written"),
    "pending_reads": ("buffer_pool", "pending_reads"),
    "pending_writes_lru": ("buffer_pool", "pending_writes_lru"),
    "pending_writes_flush_list": ("buffer_pool", "pending_writes_flush_list"),
    "rows_inserted": ("row_operations", "rows_inserted"),
    "rows_updated": ("row_operations", "rows_updated"),
    "rows_deleted": ("row_operations", "rows_deleted"),
    "rows_read": ("row_operations", "rows_read"),
    "mutex_os_waits": ("semaphores", "mutex_os_waits"),
    "rw_shared_os_waits": ("semaphores", "rw_shared_os_waits"),
    "rw_excl_os_waits": ("semaphores", "rw_excl_os_waits"),
    "os_file_reads": ("file_io", "os_file_reads"),
    "os_file_writes": ("file_io", "os_file_writes"),
    "os_fsyncs": ("file_io", "os_fsyncs"),
    "pending_fsyncs_log": ("file_io", "pending_fsyncs_log"),
    "pending_fsyncs_buffer_pool": ("file_io", "pending_fsyncs_buffer_pool"),
}

GLOBAL_STATUS_COLUMNS = {
    "uptime_s": "Uptime",
    "com_commit": "Com_commit",
    "com_rollback": "Com_rollback",
    "questions": "Questions",
    "threads_running": "Threads_running",
    "innodb_os_log_written": "Innodb_os_log_written",
    "innodb_buffer_pool_pages_flushed": "Innodb_buffer_pool_pages_flushed",
    "innodb_data_written": "Innodb_data_written",
    "innodb_row_lock_waits": "Innodb_row_lock_waits",
    "handler_commit": "Handler_commit",
    "status_checkpoint_age": "Innodb_checkpoint_age",
    "status_checkpoint_max_age": "Innodb_checkpoint_max_age",
}

INNODB_METRIC_COLUMNS = {
    "flush_adaptive_pages": "buffer_flush_adaptive_total_pages",
    "flush_background_pages": "buffer_flush_background_total_pages",
    "flush_lru_pages": "buffer_LRU_batch_flush_total_pages",
    "flush_sync_pages": "buffer_flush_sync_total_pages",
    "flush_sync_waits": "buffer_flush_sync_waits",
    "purge_undo_log_pages": "purge_undo_log_pages",
    "purge_del_mark_records": "purge_del_mark_records",
    "purge_upd_exist_or_extern_records": "purge_upd_exist_or_extern_records",
    "purge_dml_delay_usec": "purge_dml_delay_usec",
}


def sample_fields_from_status(status: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "complete": bool(status.complete),
        "warnings": min(len(status.warnings), 32767),
        "averages_window_s": status.averages_window_s,
    }
    for column, (section_name, attribute) in STATUS_COLUMNS.items():
        section = getattr(status, section_name, None)
        fields[column] = getattr(section, attribute, None) if section is not None else None
    waits = status.semaphores.waits if status.semaphores is not None else ()
    fields["semaphore_waits"] = len(waits) if status.semaphores is not None else None
    fields["semaphore_longest_wait_s"] = max((w.seconds or 0 for w in waits), default=0.0) if waits else (
        0.0 if status.semaphores is not None else None
    )
    return fields


# Columns the status text leaves out on some servers (MariaDB 10.5+ prints no row counts in
# ROW OPERATIONS), read from SHOW GLOBAL STATUS of the same poll instead.
STATUS_TEXT_FALLBACKS = {
    "rows_inserted": "Innodb_rows_inserted",
    "rows_updated": "Innodb_rows_updated",
    "rows_deleted": "Innodb_rows_deleted",
    "rows_read": "Innodb_rows_read",
    "pages_written": "Innodb_pages_written",
    "pages_read": "Innodb_pages_read",
    "pages_created": "Innodb_pages_created",
    "history_list_length": "Innodb_history_list_length",
    "os_file_reads": "Innodb_data_reads",
    "os_file_writes": "Innodb_data_writes",
    "os_fsyncs": "Innodb_data_fsyncs",
}


def sample_fields_from_global_status(global_status: dict[str, str]) -> dict[str, int | None]:
    return {column: _int_or_none(global_status.get(name)) for column, name in GLOBAL_STATUS_COLUMNS.items()}


def fill_missing_from_global_status(fields: dict, global_status: dict[str, str]) -> None:
    for column, name in STATUS_TEXT_FALLBACKS.items():
        if fields.get(column) is None:
            fields[column] = _int_or_none(global_status.get(name))


def sample_fields_from_innodb_metrics(metrics: dict[str, int]) -> dict[str, int | None]:
    return {column: metrics.get(name) for column, name in INNODB_METRIC_COLUMNS.items()}


def _int_or_none(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        try:
            return int(float(value))
        except ValueError:
            return None


def semaphore_rows(server: Server, ts: dt.datetime, status: Any) -> list[SemaphoreWaitSample]:
    if status.semaphores is None:
        return []
    return [
        SemaphoreWaitSample(
            server=server,
            ts=ts,
            seq=i,
            thread_id=w.thread_id,
            file=(w.file or "")[:200],
            line=w.line,
            seconds=w.seconds,
            latch=(w.latch or "")[:40],
            mode=(w.mode or "")[:40],
            created_file=(w.created_file or "")[:200],
            created_line=w.created_line,
            holder_thread_id=w.holder_thread_id,
        )
        for i, w in enumerate(status.semaphores.waits[:1000])
    ]


def sample_row(server_id: int, ts: dt.datetime, **fields: Any) -> dict[str, Any]:
    """One InnodbSample row as a column dict (what save_innodb_samples takes)."""
    return {"server_id": server_id, "ts": ts, **fields}


def save_innodb_samples(rows: Sequence[dict[str, Any]], *, page_size: int = 2000) -> int:
    """Insert many samples; a sample already stored (a redelivery) is skipped. Returns rows inserted.

    Small batches: multi-row INSERT ... ON CONFLICT DO NOTHING (psycopg2 execute_values).
    Large batches (imports, generate_history): COPY into a temporary table, then one
    INSERT ... SELECT ... ON CONFLICT DO NOTHING, which runs at a good fraction of raw COPY speed
    (see docs/benchmarks.md). Missing columns are NULL (complete/warnings get their defaults)."""
    if not rows:
        return 0
    timestamps = {row["ts"] for row in rows}
    if len(rows) >= COPY_THRESHOLD:
        # Create the days first: a batch spanning a missing day would otherwise insert (then roll
        # back) all rows before that day, leaving dead tuples VACUUM cannot give back to the disk.
        partitions.ensure_partitions_for(timestamps, tables=[InnodbSample._meta.db_table])
        return _write_with_partitions(timestamps, lambda: _fitting(_copy_rows, rows, page_size))
    return _write_with_partitions(timestamps, lambda: _fitting(_insert_rows, rows, page_size))


def fit_to_columns(rows: Sequence[dict[str, Any]], notes: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows with every integer its column cannot hold (an `integer` page or thread count past
    2^31, a counter past 2^63) replaced by NULL and counted in the row's `warnings`, so one bad
    field never costs the whole sample. Each replacement is logged and appended to `notes`."""
    fitted = []
    for row in rows:
        bad = [c for c, v in row.items() if c in _INT_RANGES and v is not None
               and not _INT_RANGES[c][0] <= v <= _INT_RANGES[c][1]]
        if not bad:
            fitted.append(row)
            continue
        for column in bad:
            note = f"{column}={row[column]} does not fit the column's type ({_INT_TYPES[column]}); stored NULL"
            log.warning("sample of server %s at %s: %s", row.get("server_id"), row.get("ts"), note)
            if notes is not None and note not in notes:  # a retry (new partition) fits the row again
                notes.append(note)
        warnings = row.get("warnings", _COLUMN_DEFAULTS["warnings"]) or 0
        fitted.append({**row, **dict.fromkeys(bad), "warnings": min(warnings + len(bad), 32767)})
    return fitted


def _fitting(write, rows: Sequence[dict[str, Any]], page_size: int, notes: list[str] | None = None) -> int:
    # Checking every value of every row up front would cost ingest ~10 %; PostgreSQL checks them
    # anyway, so write first and fit only a batch it refused (SQLSTATE 22003, out of range).
    try:
        with transaction.atomic():
            return write(rows, page_size)
    except (DatabaseError, psycopg2.Error) as exc:
        if _sqlstate(exc) != "22003":
            raise
    return write(fit_to_columns(rows, notes), page_size)


def _sqlstate(exc: BaseException) -> str | None:
    return getattr(exc, "pgcode", None) or getattr(exc.__cause__, "pgcode", None)


def _values(rows: Sequence[dict[str, Any]]) -> list[tuple]:
    return [tuple(row.get(c, _COLUMN_DEFAULTS.get(c)) for c in SAMPLE_COLUMNS) for row in rows]


def _insert_rows(rows: Sequence[dict[str, Any]], page_size: int) -> int:
    sql = (
        f'INSERT INTO "{InnodbSample._meta.db_table}" ({", ".join(SAMPLE_COLUMNS)}) VALUES %s '
        "ON CONFLICT (server_id, ts) DO NOTHING RETURNING 1"
    )
    with transaction.atomic(), connection.cursor() as cur:
        return len(execute_values(cur.cursor, sql, _values(rows), page_size=page_size, fetch=True))


def _copy_rows(rows: Sequence[dict[str, Any]], page_size: int = 0) -> int:
    # savepoint=False: a transaction is all the staging table needs (its rows go at commit)
    with transaction.atomic(savepoint=False), connection.cursor() as cur:
        _stage(cur, rows)
        cur.execute(_STAGED_INSERT)
        return cur.rowcount


def copy_new_samples(rows: Sequence[dict[str, Any]]) -> set[tuple[int, dt.datetime]]:
    """COPY the rows in through the staging table; the (server, ts) of those not stored before
    (a replayed poll's sample is there already). A value COPY cannot read as its column's type
    raises DataError (22P02) where a multi-row INSERT would have cast it."""
    # savepoint=False: a transaction is all the staging table needs (its rows go at commit)
    with transaction.atomic(savepoint=False), connection.cursor() as cur:
        _stage(cur, rows)
        cur.execute(_STAGED_INSERT + " RETURNING server_id, ts")
        return set(cur.fetchall())


def _stage(cur, rows: Sequence[dict[str, Any]]) -> None:
    # ON COMMIT DELETE ROWS: created once per session, emptied by every commit.
    cur.execute(f'CREATE TEMP TABLE IF NOT EXISTS _iw_sample_stage (LIKE "{InnodbSample._meta.db_table}") '
                "ON COMMIT DELETE ROWS")
    cur.cursor.copy_expert(f"COPY _iw_sample_stage ({', '.join(SAMPLE_COLUMNS)}) FROM STDIN",
                           copy_text(_values(rows)))


def copy_text(values: Sequence[tuple]) -> io.StringIO:
    """Rows in COPY's text format (tab-separated, \\N for NULL); values here are numbers, bools
    and times, whose str() PostgreSQL reads as they are (True, 1.5e+20, inf, 2026-11-25 10:00:00+00:00)."""
    return io.StringIO("".join(["\t".join(["\\N" if v is None else str(v) for v in row]) + "\n" for row in values]))


def save_innodb_sample(
    server: Server,
    ts: dt.datetime,
    *,
    status: Any,
    raw_text: str,
    parser_version: str,
    global_status: dict[str, str] | None = None,
    innodb_metrics: dict[str, int] | None = None,
    notes: list[str] | None = None,
    innodb_trx: list[dict] | None = None,
) -> bool:
    """Write one poll. Returns False when (server, ts) was already stored (a redelivery). A field
    its column cannot hold is stored NULL, with a line in `notes` (see fit_to_columns).
    `innodb_trx`: the poll's INNODB_TRX rows (with trx_age_s), when read: see view_holder_rows."""
    fields = sample_fields_from_status(status)
    fields.update(sample_fields_from_global_status(global_status or {}))
    fill_missing_from_global_status(fields, global_status or {})
    fields.update(sample_fields_from_innodb_metrics(innodb_metrics or {}))
    raw = RawStatus(server=server, ts=ts, parser_version=parser_version, text_zlib=compress_text(raw_text))
    waits = semaphore_rows(server, ts, status)
    holders = view_holder_rows(server, ts, status, innodb_trx)
    not_shown = holders_not_shown_note(status, innodb_trx)
    if not_shown and notes is not None:
        notes.append(not_shown)
    row = sample_row(server.pk, ts, **fields)
    return _write_with_partitions({ts}, lambda: _insert_once(row, raw, waits, notes, holders))


def holders_not_shown_note(status: Any, innodb_trx: list[dict] | None) -> str | None:
    """What the poll cannot say about the oldest view's holder: a status text without a
    TRANSACTIONS section, and no INNODB_TRX rows to stand in (a cut list is already a parser warning)."""
    if innodb_trx is not None or getattr(status, "transactions", None) is not None:
        return None
    return purge.holders_not_shown(None)


def view_holder_rows(server: Server, ts: dt.datetime, status: Any,
                     innodb_trx: list[dict] | None = None) -> list[ReadViewHolder]:
    """The oldest read views' holders as the status text names them, completed (and, where the
    text cut its list, extended) from INNODB_TRX rows of the same poll (analysis.purge)."""
    transactions = getattr(status, "transactions", None)
    holders = purge.holders_with_trx(purge.holders_from_status(transactions), innodb_trx,
                                     text_lists_all=purge.text_lists_all(transactions))
    return [
        ReadViewHolder(server=server, ts=ts, rank=rank, thread_id=h.thread_id, user=(h.user or "")[:100],
                       host=(h.host or "")[:255], trx_id=(h.trx_id or "")[:40], age_s=h.age_s,
                       state=(h.state or "")[:100], statement=h.statement or "", rows_locked=h.rows_locked,
                       rows_modified=h.rows_modified, source=h.source)
        for rank, h in enumerate(holders)
    ]


def _insert_once(row: dict[str, Any], raw: RawStatus, waits: list[SemaphoreWaitSample],
                 notes: list[str] | None, holders: list[ReadViewHolder] = ()) -> bool:
    with transaction.atomic():
        # The sample row decides: if it was there already, this poll is a redelivery.
        if not _fitting(_insert_rows, [row], 1, notes):
            return False
        RawStatus.objects.bulk_create([raw], ignore_conflicts=True)
        SemaphoreWaitSample.objects.bulk_create(waits, ignore_conflicts=True)
        ReadViewHolder.objects.bulk_create(holders, ignore_conflicts=True)
    return True


def _write_with_partitions(timestamps, write):
    try:
        return write()
    except (IntegrityError, DatabaseError, psycopg2.Error) as exc:
        if "no partition of relation" not in str(exc):
            raise
    partitions.ensure_partitions_for(timestamps)
    return write()


SAMPLE_COLUMNS: list[str] = [f.column for f in InnodbSample._meta.concrete_fields]
_STAGED_INSERT = (f'INSERT INTO "{InnodbSample._meta.db_table}" ({", ".join(SAMPLE_COLUMNS)}) '
                  f'SELECT {", ".join(SAMPLE_COLUMNS)} FROM _iw_sample_stage ON CONFLICT (server_id, ts) DO NOTHING')
_COLUMN_DEFAULTS: dict[str, Any] = {"complete": True, "warnings": 0}
_INT_TYPES: dict[str, str] = {
    f.column: f.db_type(connection) for f in InnodbSample._meta.concrete_fields
    if f.get_internal_type() in ("SmallIntegerField", "IntegerField", "BigIntegerField")
}
_INT_RANGES: dict[str, tuple[int, int]] = {
    f.column: connection.ops.integer_field_range(f.get_internal_type()) for f in InnodbSample._meta.concrete_fields
    if f.column in _INT_TYPES
}
COPY_THRESHOLD = 500
