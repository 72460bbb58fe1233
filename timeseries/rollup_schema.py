"""Columns of the rollup tables (kept apart from dashboard/rollups.py so models.py can import it).

Wide rows: one row per (server, bucket) with `<metric>_min/_sum/_max/_count` for each metric below.
Chosen over a narrow (server, ts, metric, min, sum, max, count) table because a chart reads
many metrics of one server at once, and because PostgreSQL's 24-byte tuple header and the
(server, ts) index entry are then paid once per bucket instead of once per metric: for these
28 metrics a wide row is ~0.8 kB (≈ 29 B/metric) against ≈ 75 B/metric narrow (header, server,
ts, metric id, four values, plus an index entry each). The list is frozen here rather than
derived from timeseries.metrics so that adding a metric does not silently change the schema;
metrics not listed are read from raw rows.
"""

from __future__ import annotations

ROLLUP_METRICS: tuple[str, ...] = (
    "checkpoint_age_bytes",
    "modified_age_bytes",
    "history_list_length",
    "pages_dirty",
    "pages_data",
    "pages_free",
    "pages_total",
    "trx_active",
    "trx_oldest_active_s",
    "lock_waits",
    "semaphore_waits",
    "semaphore_longest_wait_s",
    "threads_running",
    "status_checkpoint_age",
    "pages_flushed_per_s",
    "pages_written_per_s",
    "redo_bytes_per_s",
    "commits_per_s",
    "trx_per_s",
    "rows_inserted_per_s",
    "rows_updated_per_s",
    "rows_deleted_per_s",
    "rows_read_per_s",
    "flush_adaptive_per_s",
    "flush_background_per_s",
    "flush_lru_per_s",
    "flush_sync_per_s",
    "flush_sync_waits_per_s",
    "os_log_written_per_s",
)
AGGREGATES = ("min", "sum", "max", "count")


def rollup_fields() -> list[tuple[str, object]]:
    """(name, field) for every aggregate column, in a stable order."""
    from django.db import models

    fields: list[tuple[str, object]] = []
    for metric in ROLLUP_METRICS:
        for agg in AGGREGATES:
            field = models.IntegerField(null=True) if agg == "count" else models.FloatField(null=True)
            fields.append((f"{metric}_{agg}", field))
    return fields
