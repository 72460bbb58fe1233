"""The workload and purge counters added in 0002 (8-byte bigints) came after the 4-, 2- and 1-byte
columns: each row paid alignment padding. Rebuild the partitioned sample table widest first again
(timeseries.migration_ops.rebuild_partitioned: same rows, same partitions, in the migration's
transaction). The reverse leaves the order as it is: any order holds the same data."""

from django.db import migrations

from timeseries.migration_ops import lay_out_widest_first

TABLE = "dashboard_innodbsample"


def widest_first_layout(apps, schema_editor):
    lay_out_widest_first(schema_editor.connection.cursor(), TABLE, "old0004")


class Migration(migrations.Migration):
    dependencies = [("timeseries", "0003_read_view_holders")]
    operations = [migrations.RunPython(widest_first_layout, migrations.RunPython.noop)]
