"""Disk samples -> DiskSample rows: raw /proc/diskstats counters per device, as printed."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

from django.db import connection, transaction
from psycopg2.extras import execute_values

from timeseries.ingest import _write_with_partitions
from timeseries.models import DiskSample

COUNTER_COLUMNS = (
    "reads", "reads_merged", "sectors_read", "read_ms",
    "writes", "writes_merged", "sectors_written", "write_ms",
    "in_progress", "io_ms", "weighted_io_ms",
)  # fmt: skip
_COLUMNS = ("server_id", "device", "ts", *COUNTER_COLUMNS, "role")


def save_disk_samples(server_id: int, ts: dt.datetime, rows: Iterable, roles: Mapping[str, str]) -> int:
    """Store one snapshot (parsed DiskstatsRow records) at `ts`; returns rows inserted.

    ON CONFLICT DO NOTHING: a redelivered poll or a re-imported capture adds nothing."""
    return save_disk_samples_of_servers([(server_id, rows, roles)], ts)


def save_disk_samples_of_servers(snapshots: list[tuple[int, Iterable, Mapping[str, str]]], ts: dt.datetime) -> int:
    """One host's snapshot at `ts` for each of several servers on it: [(server id, rows, roles)],
    in one transaction; returns rows inserted."""
    values = [
        (server_id, row.device[:64], ts, *(getattr(row, c) for c in COUNTER_COLUMNS), roles.get(row.device, ""))
        for server_id, rows, roles in snapshots for row in rows
    ]
    if not values:
        return 0
    return _write_with_partitions({ts}, lambda: _insert(values))


def _insert(values: list[tuple]) -> int:
    sql = (
        f'INSERT INTO "{DiskSample._meta.db_table}" ({", ".join(_COLUMNS)}) VALUES %s '
        "ON CONFLICT (server_id, device, ts) DO NOTHING RETURNING 1"
    )
    with transaction.atomic(), connection.cursor() as cur:
        return len(execute_values(cur.cursor, sql, values, page_size=1000, fetch=True))
