"""Periodic housekeeping tasks of the dashboard's own database."""

from __future__ import annotations

import datetime as dt

from celery import shared_task
from django.conf import settings

from servers.models import PollMinute
from timeseries import partitions
from timeseries.models import ReadViewHolder


def maintain_partitions_now(today: dt.date | None = None) -> dict[str, list[str]]:
    """Create the next days' partitions and drop those past each table's retention."""
    today = today or dt.datetime.now(dt.UTC).date()
    dropped: dict[str, list[str]] = {}
    for table, retention_setting in partitions.PARTITIONED_TABLES.items():
        partitions.ensure_partitions(
            table, today - dt.timedelta(days=1), today + dt.timedelta(days=settings.INNOWATCH_PARTITION_DAYS_AHEAD)
        )
        cutoff = today - dt.timedelta(days=getattr(settings, retention_setting))
        dropped[table] = partitions.drop_partitions_before(table, cutoff)
    # Read-view holders are few (the oldest views of a poll, when old at all): a plain table.
    cutoff_ts = dt.datetime.combine(today - dt.timedelta(days=settings.INNOWATCH_RETENTION_DAYS), dt.time(), dt.UTC)
    ReadViewHolder.objects.filter(ts__lt=cutoff_ts).delete()
    # Per-minute poll counts (one row per server-minute) are kept as long as the samples they count.
    PollMinute.objects.filter(minute__lt=cutoff_ts).delete()
    return dropped


@shared_task(name="timeseries.maintain_partitions", ignore_result=True)
def maintain_partitions() -> None:
    maintain_partitions_now()


@shared_task(name="timeseries.build_rollups", ignore_result=True, soft_time_limit=55)
def build_rollups() -> None:
    from timeseries.rollups import build_rollups_now

    build_rollups_now()
