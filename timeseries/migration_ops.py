"""A CreateModel that makes a PostgreSQL table range-partitioned by `ts`."""

import datetime as dt

from django.db.migrations.operations import CreateModel

from timeseries.partitions import ensure_partitions


class CreatePartitionedModel(CreateModel):
    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.name)
        sql, params = schema_editor.table_sql(model)
        schema_editor.execute(f"{sql} PARTITION BY RANGE (ts)", params or None)
        schema_editor.deferred_sql.extend(schema_editor._model_indexes_sql(model))
        today = dt.datetime.now(dt.UTC).date()
        # Open the table for today and the next days; the periodic task keeps it ahead.
        ensure_partitions(
            model._meta.db_table,
            today - dt.timedelta(days=1),
            today + dt.timedelta(days=3),
            cursor=schema_editor.connection.cursor(),
        )

    def describe(self):
        return f"Create partitioned model {self.name}"


# --- rebuilding the partitioned sample table with its columns in another order ---------------
# PostgreSQL cannot reorder columns: a layout without alignment padding (8-byte first, then 4, 2,
# 1) needs the table rebuilt. Used by dashboard 0008 (which also narrowed columns) and again when
# columns added later must move ahead of the narrower ones.

WIDTH = {"bigint": 8, "double precision": 8, "timestamp with time zone": 8, "integer": 4, "smallint": 2,
         "boolean": 1}


def table_columns(cur, table):
    """[(name, type, not_null)] of `table`, in column order."""
    cur.execute(
        "SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum", [table])
    return cur.fetchall()


def widest_first(columns):
    """Key first (server_id, ts), then by width, widest first; stable within a width."""
    key = {"server_id": 0, "ts": 1}
    return sorted(columns, key=lambda c: (c[0] not in key, key.get(c[0], 0), -WIDTH[c[1]]))


def lay_out_widest_first(cur, table, aside_suffix):
    """Rebuild `table` widest first (rebuild_partitioned) unless it already is: after a migration
    added an 8-byte column behind narrower ones, rows would pay alignment padding."""
    columns = table_columns(cur, table)
    if columns != widest_first(columns):
        rebuild_partitioned(cur, table, widest_first(columns), aside_suffix)


def rebuild_partitioned(cur, table, new_columns, aside_suffix):
    """Rebuild range-partitioned `table` with `new_columns` [(name, type, not_null)] in that order:
    the old parent and partitions are renamed aside, the new ones created with the same bounds,
    primary key (server_id, ts) and foreign keys, every row copied, the old table dropped. Runs in
    the caller's transaction: a failure leaves the old table as it was."""
    old_columns = table_columns(cur, table)
    assert sorted(c[0] for c in new_columns) == sorted(c[0] for c in old_columns), "unexpected columns"
    cur.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass ORDER BY c.relname", [table])
    parts = cur.fetchall()
    cur.execute("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = %s::regclass AND contype = 'f'", [table])
    foreign_keys = cur.fetchall()

    # 1. Move the old table, its partitions and their index names aside.
    old = f"{table}_{aside_suffix}"
    cur.execute(f'ALTER TABLE "{table}" RENAME TO "{old}"')
    cur.execute(f'ALTER INDEX "{table}_pkey" RENAME TO "{old}_pkey"')
    for name, _ in foreign_keys:
        cur.execute(f'ALTER TABLE "{old}" DROP CONSTRAINT "{name}"')  # re-added below under its name
    for name, _ in parts:
        cur.execute(f'ALTER TABLE "{name}" RENAME TO "{name}_old"')
        cur.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass", [f"{name}_old"])
        for (index,) in cur.fetchall():
            cur.execute(f'ALTER INDEX {index} RENAME TO "{index.strip(chr(34))}_old"')

    # 2. The new parent, same constraints, same partitions; copy each partition's rows.
    ddl = ", ".join(f'"{n}" {t}{" NOT NULL" if nn else ""}' for n, t, nn in new_columns)
    cur.execute(f'CREATE TABLE "{table}" ({ddl}, CONSTRAINT "{table}_pkey" PRIMARY KEY (server_id, ts)) '
                "PARTITION BY RANGE (ts)")
    names = ", ".join(f'"{n}"' for n, _, _ in new_columns)
    for name, bound in parts:
        cur.execute(f'CREATE TABLE "{name}" PARTITION OF "{table}" {bound}')
        cur.execute(f'INSERT INTO "{name}" ({names}) SELECT {names} FROM "{name}_old"')
    # After the copy: one validation per partition instead of a deferred check per row.
    for name, fk in foreign_keys:
        cur.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {fk}')

    # 3. Drop the old table (and its partitions) and give the planner fresh statistics.
    cur.execute(f'DROP TABLE "{old}"')
    cur.execute(f'ANALYZE "{table}"')
