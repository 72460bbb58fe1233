"""The workload and purge counters added in 0002 (8-byte bigints) came after the 4-, 2- and 1-byte
columns: each row paid alignment padding. Rebuild the partitioned sample table widest first again
(timeseries.migration_ops.rebuild_partitioned: same rows, same partitions, in the migration's
transaction). The reverse leaves the order as it is: any order holds the same data."""

from django.db import migrations

from timeseries.migration_ops import rebuild_partitioned, table_columns, widest_first

TABLE = "dashboard_innodbsample"


def widest_first_layout(apps, schema_editor):
    cur = schema_editor.connection.cursor()
    columns = table_columns(cur, TABLE)
    if columns != widest_first(columns):
        rebuild_partitioned(cur, TABLE, widest_first(columns), "old0004")


class Migration(migrations.Migration):
    dependencies = [("timeseries", "0003_read_view_holders")]
    operations = [migrations.RunPython(widest_first_layout, migrations.RunPython.noop)]
