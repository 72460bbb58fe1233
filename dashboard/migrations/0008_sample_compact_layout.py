"""InnodbSample: 4-byte `integer` for values bounded by design, and columns laid out without
alignment padding (8-byte first, then 4, 2, 1), to keep bytes per stored value low.

PostgreSQL cannot reorder columns, and a bigint -> integer change rewrites every row anyway, so the
partitioned table is rebuilt: the old parent and its daily partitions are renamed aside, the new
parent is created with the same constraints and the same partitions (same bounds), every partition's
rows are copied across, then the old table is dropped. It all runs in the migration's transaction: a
failure leaves the old table as it was. Needs free disk about the table's size while it runs, and
holds the table locked (polls wait; those that time out go to the spool). A value an `integer`
column cannot hold stops the migration with the column's name before anything is changed.

Reversible: the reverse rebuilds the 0007 layout (all bigint, original order), which always fits.
"""

from django.db import migrations, models

from timeseries.migration_ops import rebuild_partitioned, table_columns, widest_first

TABLE = "dashboard_innodbsample"

NARROWED = (
    "pending_log_writes", "pending_checkpoint_writes", "trx_count", "trx_active", "trx_oldest_active_s",
    "lock_waits", "pages_total", "pages_free", "pages_data", "pages_dirty", "pending_reads",
    "pending_writes_lru", "pending_writes_flush_list", "pending_fsyncs_log", "pending_fsyncs_buffer_pool",
    "uptime_s", "threads_running",
)

# The 0007 layout, in column order (what the reverse restores).
LAYOUT_0007 = (
    "ts", "complete", "warnings", "averages_window_s", "lsn", "flushed_lsn", "pages_flushed_lsn",
    "checkpoint_lsn", "checkpoint_age_bytes", "modified_age_bytes", "max_checkpoint_age_bytes",
    "checkpoint_age_target_bytes", "log_ios_done", "pending_log_writes", "pending_checkpoint_writes",
    "history_list_length", "trx_count", "trx_active", "trx_oldest_active_s", "lock_waits", "pages_total",
    "pages_free", "pages_data", "pages_dirty", "pages_read", "pages_created", "pages_written", "pending_reads",
    "pending_writes_lru", "pending_writes_flush_list", "rows_inserted", "rows_updated", "rows_deleted",
    "rows_read", "semaphore_waits", "semaphore_longest_wait_s", "mutex_os_waits", "rw_shared_os_waits",
    "rw_excl_os_waits", "os_file_reads", "os_file_writes", "os_fsyncs", "pending_fsyncs_log",
    "pending_fsyncs_buffer_pool", "uptime_s", "com_commit", "com_rollback", "questions", "threads_running",
    "innodb_os_log_written", "innodb_buffer_pool_pages_flushed", "innodb_data_written", "innodb_row_lock_waits",
    "status_checkpoint_age", "status_checkpoint_max_age", "flush_adaptive_pages", "flush_background_pages",
    "flush_lru_pages", "flush_sync_pages", "flush_sync_waits", "server_id",
)
def _compact(columns):
    """Key first (server_id, ts), then by width, widest first; stable within a width."""
    return widest_first([(n, "integer" if n in NARROWED else t, nn) for n, t, nn in columns])


def _original(columns):
    by_name = {n: (n, "bigint" if n in NARROWED else t, nn) for n, t, nn in columns}
    return [by_name[n] for n in LAYOUT_0007]


def _check_fits(cur, columns):
    narrowing = [n for n, t, _ in columns if n in NARROWED and t == "bigint"]
    if not narrowing:
        return
    counts = ", ".join(f'count(*) FILTER (WHERE "{n}" NOT BETWEEN -2147483648 AND 2147483647)' for n in narrowing)
    cur.execute(f'SELECT {counts} FROM "{TABLE}"')
    bad = {n: c for n, c in zip(narrowing, cur.fetchone()) if c}
    if bad:
        raise RuntimeError(
            f"{TABLE}: values too large for an integer column {bad} (column: rows); nothing was changed. "
            "Set them to NULL (or delete those samples) and migrate again.")


def _rebuild(apps, schema_editor, layout):
    cur = schema_editor.connection.cursor()
    old_columns = table_columns(cur, TABLE)
    _check_fits(cur, old_columns)
    rebuild_partitioned(cur, TABLE, layout(old_columns), "old0008")


def compact(apps, schema_editor):
    _rebuild(apps, schema_editor, _compact)


def restore(apps, schema_editor):
    _rebuild(apps, schema_editor, _original)


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0007_rollup_15m")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField("innodbsample", name, models.IntegerField(null=True)) for name in NARROWED
            ],
            database_operations=[migrations.RunPython(compact, restore)],
        ),
    ]
