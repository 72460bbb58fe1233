"""Daily range partitions of the sample tables: created ahead, dropped past retention.

A row whose day has no partition is an error in PostgreSQL (there is deliberately no DEFAULT
partition: one would block creating the real partition later), so ingest calls
`ensure_partitions_for` and retries; the periodic task keeps a few days ready ahead.
"""

from __future__ import annotations

import datetime as dt
import re

from django.db import connection

# table -> retention setting name
PARTITIONED_TABLES = {
    "dashboard_innodbsample": "INNOWATCH_RETENTION_DAYS",
    "dashboard_rawstatus": "INNOWATCH_RAW_STATUS_RETENTION_DAYS",
    "dashboard_semaphorewaitsample": "INNOWATCH_RETENTION_DAYS",
    "dashboard_disksample": "INNOWATCH_RETENTION_DAYS",
    "dashboard_innodbrollup1m": "INNOWATCH_ROLLUP_1M_RETENTION_DAYS",
}
_PARTITION_NAME = re.compile(r"_p(\d{8})$")


def partition_name(table: str, day: dt.date) -> str:
    return f"{table}_p{day:%Y%m%d}"


def create_partition_sql(table: str, day: dt.date) -> str:
    start = dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
    end = start + dt.timedelta(days=1)
    return (
        f'CREATE TABLE IF NOT EXISTS "{partition_name(table, day)}" PARTITION OF "{table}" '
        f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
    )


def ensure_partitions(table: str, first_day: dt.date, last_day: dt.date, cursor=None) -> int:
    """Create the daily partitions first_day..last_day (inclusive) that do not exist yet."""
    existing = set(existing_partition_days(table, cursor))
    created = 0
    day = first_day
    with _cursor(cursor) as cur:
        while day <= last_day:
            if day not in existing:
                cur.execute(create_partition_sql(table, day))
                created += 1
            day += dt.timedelta(days=1)
    return created


def ensure_partitions_for(timestamps, tables=None) -> None:
    days = {ts.astimezone(dt.UTC).date() for ts in timestamps}
    for table in tables or PARTITIONED_TABLES:
        for day in days:
            ensure_partitions(table, day, day)


def existing_partition_days(table: str, cursor=None) -> list[dt.date]:
    with _cursor(cursor) as cur:
        cur.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = %s",
            [table],
        )
        names = [row[0] for row in cur.fetchall()]
    days = []
    for name in names:
        match = _PARTITION_NAME.search(name)
        if match:
            days.append(dt.datetime.strptime(match.group(1), "%Y%m%d").date())
    return sorted(days)


def drop_partitions_before(table: str, cutoff: dt.date, cursor=None) -> list[str]:
    """Drop whole days older than cutoff: instant, unlike DELETE, and leaves no bloat."""
    dropped = []
    with _cursor(cursor) as cur:
        for day in existing_partition_days(table, cur):
            if day < cutoff:
                name = partition_name(table, day)
                cur.execute(f'DROP TABLE IF EXISTS "{name}"')
                dropped.append(name)
    return dropped


class _cursor:
    """Use the given cursor, or open (and close) one on the default connection."""

    def __init__(self, cursor):
        self.given = cursor
        self.own = None

    def __enter__(self):
        if self.given is not None:
            return self.given
        self.own = connection.cursor()
        return self.own

    def __exit__(self, *exc):
        if self.own is not None:
            self.own.close()
        return False
