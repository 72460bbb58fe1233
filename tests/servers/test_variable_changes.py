"""Detected tuning changes: SET GLOBAL on the real MariaDB between two polls, restarts, and the
variable history API."""

from __future__ import annotations

import datetime as dt

import pytest

from annotations.models import Annotation
from collectors.tasks import poll_once
from servers import changes
from servers.models import CollectorRun, VariableChange
from timeseries import ingest, poll_events

T0 = dt.datetime(2026, 11, 3, 12, 0, tzinfo=dt.UTC)


def _global(cur, name: str) -> str:
    cur.execute(f"SELECT @@GLOBAL.{name}")
    return str(cur.fetchone()[0])


def test_set_global_between_two_polls_becomes_a_variable_change_and_an_annotation(local_server, mariadb_root):
    cur = mariadb_root.cursor()
    original = int(_global(cur, "innodb_io_capacity"))
    changed = original + 123
    # At a 1 s interval variables are read once a minute; at 10 s every poll reads them.
    local_server.poll_interval_s = 10
    local_server.save()
    try:
        assert poll_once(local_server).status != CollectorRun.Status.FAILED
        assert not VariableChange.objects.filter(name="innodb_io_capacity").exists()
        cur.execute(f"SET GLOBAL innodb_io_capacity = {changed}")
        run = poll_once(local_server)
        assert run.status != CollectorRun.Status.FAILED, run.error
    finally:
        cur.execute(f"SET GLOBAL innodb_io_capacity = {original}")
    change = VariableChange.objects.get(server=local_server, name="innodb_io_capacity")
    assert (change.old_value, change.new_value) == (str(original), str(changed))
    annotation = Annotation.objects.get(server=local_server, kind=Annotation.Kind.VARIABLE_CHANGE)
    assert f"innodb_io_capacity: {original} → {changed}" in annotation.text
    assert annotation.time == change.ts and annotation.author is None


def test_first_poll_of_a_server_records_no_changes(local_server):
    poll_once(local_server)
    assert not VariableChange.objects.exists() and not Annotation.objects.exists()


def test_diff_lists_added_removed_and_changed_but_not_volatile_gtid_positions():
    old = {"a": "1", "b": "OFF", "gone": "x", "gtid_current_pos": "0-1-5"}
    new = {"a": "1", "b": "ON", "new": "y", "gtid_current_pos": "0-1-9"}
    assert changes.diff_variables(old, new) == [("b", "OFF", "ON"), ("gone", "x", None), ("new", None, "y")]


def test_setter_from_variables_info_is_kept_with_the_change(local_server):
    made = poll_events.after_poll(
        local_server, T0, old_variables={"innodb_adaptive_flushing": "OFF"},
        new_variables={"innodb_adaptive_flushing": "ON"}, global_status={},
        setters={"innodb_adaptive_flushing": "dba@10.0.0.9 (DYNAMIC)"},
    )
    assert [a.text for a in made] == ["innodb_adaptive_flushing: OFF → ON (by dba@10.0.0.9 (DYNAMIC))"]
    assert VariableChange.objects.get().set_by == "dba@10.0.0.9 (DYNAMIC)"


def _store_sample(server, ts, uptime_s):
    ingest.save_innodb_samples([{"server_id": server.pk, "ts": ts, "uptime_s": uptime_s}])


def test_uptime_going_down_between_two_samples_is_a_restart_annotation(local_server):
    _store_sample(local_server, T0, 86_400)
    _store_sample(local_server, T0 + dt.timedelta(seconds=10), 3)
    made = poll_events.after_poll(local_server, T0 + dt.timedelta(seconds=10), old_variables=None,
                              new_variables=None, global_status={"Uptime": "3"})
    assert [a.kind for a in made] == [Annotation.Kind.RESTART]
    # Placed when the server came back up, not at the poll that noticed it.
    assert made[0].time == T0 + dt.timedelta(seconds=7)
    assert "86400 s → 3 s" in made[0].text


def test_uptime_going_up_is_not_a_restart(local_server):
    _store_sample(local_server, T0, 100)
    assert poll_events.after_poll(local_server, T0 + dt.timedelta(seconds=10), old_variables=None,
                              new_variables=None, global_status={"Uptime": "110"}) == []


@pytest.fixture
def history(local_server):
    """io_capacity 200 → 400 on the 3rd, → 1000 on the 5th; the snapshot shows 1000."""
    local_server.variables = {"innodb_io_capacity": "1000", "innodb_flush_neighbors": "0"}
    local_server.variables_at = T0 + dt.timedelta(days=3)
    local_server.save()
    changes.record_variable_changes(local_server, T0, {"innodb_io_capacity": "200"}, {"innodb_io_capacity": "400"})
    changes.record_variable_changes(local_server, T0 + dt.timedelta(days=2), {"innodb_io_capacity": "400"},
                                    {"innodb_io_capacity": "1000", "innodb_flush_neighbors": "0"})
    return local_server


def test_variables_at_a_past_time_undo_later_changes(history):
    assert changes.variables_at(history, T0 - dt.timedelta(hours=1)) == {"innodb_io_capacity": "200"}
    assert changes.variables_at(history, T0 + dt.timedelta(days=1))["innodb_io_capacity"] == "400"
    assert changes.variables_at(history, T0 + dt.timedelta(days=3))["innodb_io_capacity"] == "1000"


def test_variables_api_answers_what_was_set_on_the_3rd(client, api_token, history):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api_token}"}
    url = f"/api/v1/servers/{history.pk}/variables"
    body = client.get(url, {"at": "2026-11-03T18:00:00Z", "name": "innodb_io_capacity"}, **auth).json()
    assert body["variables"] == {"innodb_io_capacity": "400"}
    assert client.get(url, {"at": "the 3rd"}, **auth).status_code == 400
    assert client.get(url).status_code == 401
    rows = client.get(f"/api/v1/servers/{history.pk}/variable-changes", {"name": "innodb_io_capacity"},
                      **auth).json()["changes"]
    assert [(r["old_value"], r["new_value"]) for r in rows] == [("400", "1000"), ("200", "400")]
