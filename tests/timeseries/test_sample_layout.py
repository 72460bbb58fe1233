"""The sample table's compact layout (bytes per value): 4-byte columns for bounded values,
a value that does not fit costs only that field, and migration 0008 keeps every stored row."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from collectors.parsers.innodb_status import PARSER_VERSION, parse_innodb_status
from servers.models import Server
from timeseries import ingest, partitions
from timeseries.models import InnodbSample

STATUS_TEXT = (Path(__file__).parents[1] / "fixtures/innodb_status/mariadb-10.11--datadog-mariadb-1011.txt").read_text()
TABLE = "dashboard_innodbsample"
T0 = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
WIDTH = {"bigint": 8, "double precision": 8, "timestamp with time zone": 8, "integer": 4, "smallint": 2, "boolean": 1}


@pytest.fixture
def server(db):
    return Server.objects.create(name="layout-test", host="127.0.0.1")


def _columns() -> list[tuple[str, str]]:
    with connection.cursor() as cur:
        cur.execute("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s::regclass "
                    "AND attnum > 0 AND NOT attisdropped ORDER BY attnum", [TABLE])
        return cur.fetchall()


def test_columns_are_laid_out_widest_first_so_no_row_pays_alignment_padding(db):
    columns = _columns()
    assert [name for name, _ in columns[:2]] == ["server_id", "ts"]
    widths = [WIDTH[kind] for _, kind in columns]
    assert widths == sorted(widths, reverse=True)
    kinds = dict(columns)
    assert kinds["pages_dirty"] == kinds["uptime_s"] == kinds["threads_running"] == "integer"
    # Counters, LSNs and bytes that can pass 2^31 stay 8 bytes.
    assert {kinds[c] for c in ("lsn", "pages_written", "pages_read", "rows_read", "history_list_length",
                               "innodb_os_log_written", "max_checkpoint_age_bytes", "com_commit")} == {"bigint"}


def test_a_value_its_integer_column_cannot_hold_is_stored_null_with_a_warning_and_the_rest_kept(server):
    rows = [ingest.sample_row(server.pk, T0, pages_total=2**31, pages_free=7, lsn=2**40),
            ingest.sample_row(server.pk, T0 + dt.timedelta(seconds=10), pages_total=524288, warnings=2)]
    assert ingest.save_innodb_samples(rows) == 2
    first, second = InnodbSample.objects.filter(server=server).order_by("ts")
    assert (first.pages_total, first.pages_free, first.lsn, first.warnings) == (None, 7, 2**40, 1)
    assert (second.pages_total, second.warnings) == (524288, 2)


def test_a_large_copy_batch_with_one_bad_field_stores_every_row(server):
    n = ingest.COPY_THRESHOLD + 20
    rows = [ingest.sample_row(server.pk, T0 + dt.timedelta(seconds=i), uptime_s=i, lsn=i) for i in range(n)]
    rows[7]["uptime_s"] = 2**40  # no integer holds this
    rows[9]["lsn"] = 2**63  # nor a bigint this
    assert ingest.save_innodb_samples(rows) == n
    stored = {s.ts: s for s in InnodbSample.objects.filter(server=server)}
    assert len(stored) == n
    assert (stored[rows[7]["ts"]].uptime_s, stored[rows[7]["ts"]].lsn, stored[rows[7]["ts"]].warnings) == (None, 7, 1)
    assert (stored[rows[9]["ts"]].uptime_s, stored[rows[9]["ts"]].lsn, stored[rows[9]["ts"]].warnings) == (9, None, 1)
    assert stored[rows[8]["ts"]].uptime_s == 8 and stored[rows[8]["ts"]].warnings == 0


def test_a_poll_with_an_out_of_range_status_value_is_stored_and_says_which_field(server):
    notes: list[str] = []
    stored = ingest.save_innodb_sample(
        server, T0, status=parse_innodb_status(STATUS_TEXT), raw_text=STATUS_TEXT, parser_version=PARSER_VERSION,
        global_status={"Uptime": str(2**32), "Threads_running": "3", "Com_commit": "9"}, notes=notes,
    )
    assert stored is True
    sample = InnodbSample.objects.get(server=server, ts=T0)
    assert (sample.uptime_s, sample.threads_running, sample.com_commit) == (None, 3, 9)
    assert sample.lsn is not None
    assert len(notes) == 1 and notes[0].startswith(f"uptime_s={2**32} does not fit")


def _migrate(target: str) -> None:
    """Migrate `dashboard` to `target`; going forward to 0008 goes on to the latest migration of
    every app, so the database is left as the rest of the suite expects it."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    if target == "0008_sample_compact_layout":
        executor.migrate([("dashboard", target)])
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    else:
        executor.migrate([("dashboard", target)])


@pytest.mark.django_db(transaction=True)
def test_migration_0008_keeps_every_stored_value_and_its_reverse_too():
    server = Server.objects.create(name="layout-migration", host="127.0.0.1")
    _migrate("0007_rollup_15m")
    try:
        big = 2**31 - 1
        partitions.ensure_partitions_for({T0, T0 + dt.timedelta(days=1)}, tables=[TABLE])
        days = partitions.existing_partition_days(TABLE)
        with connection.cursor() as cur:
            cur.execute(
                f"INSERT INTO {TABLE} (server_id, ts, complete, warnings, lsn, pages_total, pages_dirty, uptime_s, "
                "threads_running, semaphore_longest_wait_s, rows_read) VALUES "
                "(%s, %s, true, 0, %s, %s, 12, 86400, 3, 1.5, %s), (%s, %s, false, 4, NULL, NULL, NULL, %s, NULL, NULL, 5)",
                [server.pk, T0, 2**62, big, 2**50, server.pk, T0 + dt.timedelta(days=1), big])
        columns = "complete, warnings, lsn, pages_total, pages_dirty, uptime_s, threads_running, semaphore_longest_wait_s, rows_read"

        def stored():
            with connection.cursor() as cur:
                cur.execute(f"SELECT ts, {columns} FROM {TABLE} WHERE server_id = %s ORDER BY ts", [server.pk])
                return cur.fetchall()

        before = stored()
        assert len(before) == 2
        _migrate("0008_sample_compact_layout")
        assert stored() == before
        assert dict(_columns())["pages_total"] == "integer"
        assert partitions.existing_partition_days(TABLE) == days
        _migrate("0007_rollup_15m")
        assert stored() == before
        assert dict(_columns())["pages_total"] == "bigint"
    finally:
        _migrate("0008_sample_compact_layout")
    assert InnodbSample.objects.filter(server=server).count() == 2


@pytest.mark.django_db(transaction=True)
def test_migration_0008_stops_before_changing_anything_when_a_stored_value_would_not_fit():
    server = Server.objects.create(name="layout-too-big", host="127.0.0.1")
    _migrate("0007_rollup_15m")
    try:
        partitions.ensure_partitions_for({T0}, tables=[TABLE])
        with connection.cursor() as cur:
            cur.execute(f"INSERT INTO {TABLE} (server_id, ts, complete, warnings, pages_dirty) VALUES (%s, %s, true, 0, %s)",
                        [server.pk, T0, 2**31])
        with pytest.raises(RuntimeError, match="pages_dirty"):
            _migrate("0008_sample_compact_layout")
        assert dict(_columns())["pages_dirty"] == "bigint"
        with connection.cursor() as cur:
            cur.execute(f"SELECT pages_dirty FROM {TABLE} WHERE server_id = %s", [server.pk])
            assert cur.fetchall() == [(2**31,)]
            cur.execute(f"UPDATE {TABLE} SET pages_dirty = NULL WHERE server_id = %s", [server.pk])
    finally:
        _migrate("0008_sample_compact_layout")
