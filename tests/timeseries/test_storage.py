"""Storage: daily partitions (created on insert, dropped past retention) and duplicate deliveries."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.db import connection

from collectors.parsers.innodb_status import PARSER_VERSION, parse_innodb_status
from servers.models import Server
from timeseries import ingest, partitions
from timeseries.models import InnodbSample, RawStatus
from timeseries.tasks import maintain_partitions_now

STATUS_TEXT = (Path(__file__).parents[1] / "fixtures/innodb_status/mariadb-10.11--datadog-mariadb-1011.txt").read_text()
TABLE = "dashboard_innodbsample"


@pytest.fixture
def server(db):
    return Server.objects.create(name="storage-test", host="127.0.0.1")


def _save(server, ts):
    return ingest.save_innodb_sample(
        server, ts, status=parse_innodb_status(STATUS_TEXT), raw_text=STATUS_TEXT, parser_version=PARSER_VERSION,
        global_status={"Com_commit": "7"},
    )


def test_a_sample_on_a_day_without_partition_creates_the_partition_on_insert(server):
    day = dt.date(2026, 3, 14)
    assert day not in partitions.existing_partition_days(TABLE)
    assert _save(server, dt.datetime(2026, 3, 14, 12, 0, tzinfo=dt.UTC)) is True
    assert day in partitions.existing_partition_days(TABLE)
    assert InnodbSample.objects.filter(server=server).count() == 1


def test_the_same_poll_delivered_twice_is_stored_once(server):
    ts = dt.datetime.now(dt.UTC).replace(microsecond=0)
    assert _save(server, ts) is True
    assert _save(server, ts) is False
    assert InnodbSample.objects.filter(server=server, ts=ts).count() == 1
    assert RawStatus.objects.filter(server=server, ts=ts).count() == 1
    assert InnodbSample.objects.get(server=server, ts=ts).com_commit == 7


def test_a_batch_inserts_every_new_row_and_skips_those_already_stored(server):
    t0 = dt.datetime(2026, 5, 1, 23, 59, 50, tzinfo=dt.UTC)
    rows = [ingest.sample_row(server.pk, t0 + dt.timedelta(seconds=10 * i), history_list_length=i) for i in range(5)]
    assert ingest.save_innodb_samples(rows[:2]) == 2
    assert ingest.save_innodb_samples(rows) == 3
    assert InnodbSample.objects.filter(server=server).count() == 5
    # The batch spanned midnight: both days got a partition.
    assert {dt.date(2026, 5, 1), dt.date(2026, 5, 2)} <= set(partitions.existing_partition_days(TABLE))


def test_maintenance_drops_only_days_past_retention_and_creates_days_ahead(server, settings):
    settings.INNOWATCH_RETENTION_DAYS = 10
    settings.INNOWATCH_RAW_STATUS_RETENTION_DAYS = 3
    settings.INNOWATCH_PARTITION_DAYS_AHEAD = 2
    today = dt.date(2026, 8, 20)
    old, kept = today - dt.timedelta(days=11), today - dt.timedelta(days=10)
    for day in (old, kept):
        _save(server, dt.datetime.combine(day, dt.time(6), tzinfo=dt.UTC))
    # The test runs in one transaction; fire the deferred FK checks before DROP as a commit would.
    with connection.cursor() as cur:
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
    dropped = maintain_partitions_now(today)
    days = set(partitions.existing_partition_days(TABLE))
    assert old not in days and kept in days
    assert partitions.partition_name(TABLE, old) in dropped[TABLE]
    assert today + dt.timedelta(days=2) in days
    # Raw status has its own, shorter retention.
    raw_days = set(partitions.existing_partition_days("dashboard_rawstatus"))
    assert kept not in raw_days and today - dt.timedelta(days=1) in raw_days
    assert InnodbSample.objects.filter(server=server).count() == 1


def test_a_large_batch_goes_through_copy_and_still_skips_rows_already_stored(server):
    t0 = dt.datetime(2026, 5, 3, tzinfo=dt.UTC)
    rows = [ingest.sample_row(server.pk, t0 + dt.timedelta(seconds=i), lsn=i, complete=i % 2 == 0)
            for i in range(ingest.COPY_THRESHOLD + 100)]
    assert ingest.save_innodb_samples(rows[:50]) == 50
    assert ingest.save_innodb_samples(rows) == len(rows) - 50
    assert ingest.save_innodb_samples(rows) == 0
    stored = InnodbSample.objects.filter(server=server).order_by("ts")
    assert [(s.lsn, s.complete, s.warnings) for s in stored] == [(i, i % 2 == 0, 0) for i in range(len(rows))]
