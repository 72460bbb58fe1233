"""Write-path figures: batched ingest against raw COPY of the same rows, and bytes per value."""

from __future__ import annotations

import datetime as dt
import time

from django.db import connection, transaction

from dashboard import history
from servers.models import Server
from timeseries import ingest, partitions
from timeseries.models import InnodbSample

TABLE = InnodbSample._meta.db_table


def synthetic_rows(servers: int, hours: float, start: dt.datetime) -> list[dict]:
    rows: list[dict] = []
    for n in range(servers):
        server, _ = Server.objects.get_or_create(
            name=f"bench-ingest-{n:03d}", defaults={"synthetic": True, "enabled": False}
        )
        end = start + dt.timedelta(hours=hours)
        rows.extend(history.samples(server.pk, server.name, start, end, 10, start + (end - start) / 2))
    return rows


def _truncate() -> None:
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {TABLE}")


def _copy(rows: list[dict]) -> None:
    # The baseline: COPY straight into the table, the formatting of the same tuples included.
    columns = ", ".join(ingest.SAMPLE_COLUMNS)
    with transaction.atomic(), connection.cursor() as cur:
        cur.cursor.copy_expert(f"COPY {TABLE} ({columns}) FROM STDIN", ingest.copy_text(ingest._values(rows)))


def _ingest(rows: list[dict], batch: int) -> None:
    for i in range(0, len(rows), batch):
        ingest.save_innodb_samples(rows[i : i + batch])


def _timed(fn) -> float:
    _truncate()
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def ingest_vs_copy(rows: list[dict], rounds: int = 3) -> dict:
    """Best of `rounds` for each method, alternated so both see the same machine load."""
    best = {"copy": 1e9, "ingest": 1e9, "ingest_small": 1e9}
    small = rows[: len(rows) // 4]
    partitions.ensure_partitions_for({r["ts"] for r in rows})  # COPY cannot create them; ingest can
    for _ in range(rounds):
        best["copy"] = min(best["copy"], _timed(lambda: _copy(rows)))
        best["ingest"] = min(best["ingest"], _timed(lambda: _ingest(rows, 5000)))
        best["ingest_small"] = min(best["ingest_small"], _timed(lambda: _ingest(small, 200)) * 4)
    _truncate()
    n = len(rows)
    return {
        "rows": n,
        "copy_samples_per_s": n / best["copy"],
        "ingest_samples_per_s": n / best["ingest"],
        "ingest_small_batch_samples_per_s": n / best["ingest_small"],
        "ingest_vs_copy": best["copy"] / best["ingest"],
    }


def bytes_per_value() -> dict:
    """(heap + indexes + TOAST of every partition) / (rows × non-NULL numeric values per row)."""
    with connection.cursor() as cur:
        cur.execute(f"VACUUM ANALYZE {TABLE}")
        cur.execute(
            "SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0) FROM pg_inherits i "
            "WHERE i.inhparent = %s::regclass", [TABLE])
        total_bytes = int(cur.fetchone()[0])
        value_columns = [c for c in ingest.SAMPLE_COLUMNS if c not in ("server_id", "ts")]
        counts = ", ".join(f"count({c})" for c in value_columns)
        cur.execute(f"SELECT count(*), {counts} FROM {TABLE}")
        row = cur.fetchone()
    rows, values = row[0], sum(row[1:])
    return {
        "sample_rows": rows,
        "sample_table_bytes": total_bytes,
        "values_per_row": values / rows if rows else 0,
        "bytes_per_row": total_bytes / rows if rows else 0,
        "bytes_per_value": total_bytes / values if values else 0,
    }


def breakdown() -> dict:
    """Where the bytes of bytes_per_value go, per row: heap pages (tuple header + NULL bitmap + data +
    4-byte line pointer + page free space), indexes, TOAST, free-space and visibility maps."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*), sum(pg_relation_size(c.oid, 'main')), "
            "sum(pg_relation_size(c.oid, 'fsm') + pg_relation_size(c.oid, 'vm')), "
            "sum(pg_indexes_size(c.oid)), "
            "sum(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) "
            "FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass", [TABLE])
        partitions_, heap, maps, indexes, toast = (int(v or 0) for v in cur.fetchone())
        cur.execute(f"SELECT count(*), avg(pg_column_size(t.*)) FROM {TABLE} AS t")
        rows, tuple_bytes = cur.fetchone()
    rows = rows or 1
    return {
        "partitions": partitions_,
        "heap_bytes_per_row": heap / rows,
        "tuple_bytes_avg": float(tuple_bytes or 0),  # header (23 B + NULL bitmap, aligned) + data
        "index_bytes_per_row": indexes / rows,
        "toast_bytes_per_row": toast / rows,
        "fsm_vm_bytes_per_row": maps / rows,
    }
