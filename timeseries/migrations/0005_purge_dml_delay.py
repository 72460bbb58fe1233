"""The DML delay purge lag causes (INNODB_METRICS purge_dml_delay_usec), a bigint; the table is then
laid out widest first again, as 0004 did, so the new 8-byte column does not make every row pay
alignment padding behind the narrow ones."""

from django.db import migrations, models

from timeseries.migration_ops import lay_out_widest_first

TABLE = "dashboard_innodbsample"


def widest_first_layout(apps, schema_editor):
    lay_out_widest_first(schema_editor.connection.cursor(), TABLE, "old0005")


class Migration(migrations.Migration):
    dependencies = [("timeseries", "0004_sample_layout_widest_first")]
    operations = [
        migrations.AddField(model_name="innodbsample", name="purge_dml_delay_usec",
                            field=models.BigIntegerField(null=True)),
        migrations.RunPython(widest_first_layout, migrations.RunPython.noop),
    ]
