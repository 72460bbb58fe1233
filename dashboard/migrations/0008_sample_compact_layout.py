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
_WIDTH = {"bigint": 8, "double precision": 8, "timestamp with time zone": 8, "integer": 4, "smallint": 2,
          "boolean": 1}


def _columns(cur, table):
    """[(name, type, not_null)] of `table`, in column order."""
    cur.execute(
        "SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum", [table])
    return cur.fetchall()


def _compact(columns):
    """Key first (server_id, ts), then by width, widest first; stable within a width."""
    columns = [(n, "integer" if n in NARROWED else t, nn) for n, t, nn in columns]
    key = {"server_id": 0, "ts": 1}
    return sorted(columns, key=lambda c: (c[0] not in key, key.get(c[0], 0), -_WIDTH[c[1]]))


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
    old_columns = _columns(cur, TABLE)
    new_columns = layout(old_columns)
    assert sorted(c[0] for c in new_columns) == sorted(c[0] for c in old_columns), "unexpected columns"
    _check_fits(cur, old_columns)
    cur.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass ORDER BY c.relname", [TABLE])
    parts = cur.fetchall()
    cur.execute("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = %s::regclass AND contype = 'f'", [TABLE])
    foreign_keys = cur.fetchall()

    # 1. Move the old table, its partitions and their index names aside.
    old = f"{TABLE}_old0008"
    cur.execute(f'ALTER TABLE "{TABLE}" RENAME TO "{old}"')
    cur.execute(f'ALTER INDEX "{TABLE}_pkey" RENAME TO "{old}_pkey"')
    for name, _ in foreign_keys:
        cur.execute(f'ALTER TABLE "{old}" DROP CONSTRAINT "{name}"')  # re-added below under its name
    for name, _ in parts:
        cur.execute(f'ALTER TABLE "{name}" RENAME TO "{name}_old"')
        cur.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass", [f"{name}_old"])
        for (index,) in cur.fetchall():
            cur.execute(f'ALTER INDEX {index} RENAME TO "{index.strip(chr(34))}_old"')

    # 2. The new parent, same constraints, same partitions; copy each partition's rows.
    ddl = ", ".join(f'"{n}" {t}{" NOT NULL" if nn else ""}' for n, t, nn in new_columns)
    cur.execute(f'CREATE TABLE "{TABLE}" ({ddl}, CONSTRAINT "{TABLE}_pkey" PRIMARY KEY (server_id, ts)) '
                "PARTITION BY RANGE (ts)")
    names = ", ".join(f'"{n}"' for n, _, _ in new_columns)
    for name, bound in parts:
        cur.execute(f'CREATE TABLE "{name}" PARTITION OF "{TABLE}" {bound}')
        cur.execute(f'INSERT INTO "{name}" ({names}) SELECT {names} FROM "{name}_old"')
    # After the copy: one validation per partition instead of a deferred check per row.
    for name, fk in foreign_keys:
        cur.execute(f'ALTER TABLE "{TABLE}" ADD CONSTRAINT "{name}" {fk}')

    # 3. Drop the old table (and its partitions) and give the planner fresh statistics.
    cur.execute(f'DROP TABLE "{old}"')
    cur.execute(f'ANALYZE "{TABLE}"')


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
