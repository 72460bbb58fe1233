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
