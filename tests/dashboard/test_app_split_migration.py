"""A database holding data from before the domain apps (every model in `dashboard`, migrations
0001-0008) migrates to the new layout without losing a row, and back."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("dashboard", "0008_sample_compact_layout"), ("accounts", None), ("servers", None),
          ("timeseries", None), ("annotations", None), ("alerting", None)]
T0 = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps


def _latest():
    executor = MigrationExecutor(connection)
    return [key for key in executor.loader.graph.leaf_nodes()]


@pytest.mark.django_db(transaction=True)
def test_rows_written_under_the_old_layout_are_read_through_the_new_models():
    from timeseries.partitions import ensure_partitions

    old = _migrate(BEFORE)
    server = old.get_model("dashboard", "Server").objects.create(name="db-old", host="10.0.0.9", tags=["prod"])
    old.get_model("dashboard", "VariableChange").objects.create(
        server=server, ts=T0, name="innodb_io_capacity", old_value="200", new_value="400")
    old.get_model("dashboard", "Annotation").objects.create(server=server, time=T0, text="deploy v41")
    rule = old.get_model("dashboard", "AlertRule").objects.create(name="old-rule", metric="history_list_length",
                                                                   threshold=5)
    rule.servers.add(server)
    ensure_partitions("dashboard_innodbsample", T0.date(), T0.date())
    old.get_model("dashboard", "InnodbSample").objects.create(server=server, ts=T0, checkpoint_age_bytes=123_456)
    # A database from before the move has its content types under "dashboard" (a test that
    # flushed the tables since may have left the new apps' ones instead).
    ContentType = old.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="servers", model="server").delete()
    server_type, _ = ContentType.objects.get_or_create(app_label="dashboard", model="server")

    _migrate(_latest())

    from alerting.models import AlertRule
    from annotations.models import Annotation
    from servers.models import Server, VariableChange
    from timeseries.models import InnodbSample

    moved = Server.objects.get(name="db-old")
    assert (moved.pk, moved.host, moved.tags) == (server.pk, "10.0.0.9", ["prod"])
    assert VariableChange.objects.get(server=moved).new_value == "400"
    assert Annotation.objects.get(server=moved).text == "deploy v41"
    assert list(AlertRule.objects.get(name="old-rule").servers.all()) == [moved]
    assert InnodbSample.objects.get(server=moved, ts=T0).checkpoint_age_bytes == 123_456
    # Permissions granted on the old content type (the admin role's) now name the new app.
    from django.contrib.contenttypes.models import ContentType as CurrentContentType

    assert CurrentContentType.objects.get(pk=server_type.pk).app_label == "servers"


@pytest.mark.django_db(transaction=True)
def test_the_move_can_be_undone():
    from django.contrib.contenttypes.models import ContentType

    _migrate(_latest())
    ContentType.objects.get_or_create(app_label="annotations", model="annotation")
    ContentType.objects.filter(app_label="dashboard", model="annotation").delete()
    _migrate(BEFORE)
    assert ContentType.objects.filter(app_label="dashboard", model="annotation").exists()
    assert not ContentType.objects.filter(app_label="annotations", model="annotation").exists()
    _migrate(_latest())
    assert ContentType.objects.filter(app_label="annotations", model="annotation").exists()
    assert not ContentType.objects.filter(app_label="dashboard", model="annotation").exists()
