"""What a poll writes, and how often: a CollectorRun row only for failures, warnings and changes
of state, every poll counted per minute, the variables snapshot only when it changed, a restart
found from the poll state, and a batch of polls stored in a fixed number of statements."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from collectors import batch, poll_state
from collectors.tasks import poll_batched, poll_once
from servers.models import CollectorRun, PollMinute, Server
from timeseries.models import InnodbSample, RawStatus

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_state(redis_client):
    redis_client.delete(poll_state.STATE_KEY)
    yield
    redis_client.delete(poll_state.STATE_KEY)


def test_good_polls_are_counted_and_only_failures_and_changes_of_state_get_a_run_row(local_server):
    assert poll_once(local_server).status != CollectorRun.Status.FAILED
    assert poll_once(local_server).status != CollectorRun.Status.FAILED
    runs = CollectorRun.objects.filter(server=local_server)
    assert runs.count() == 1  # the first poll (a change from "never"); the second is only counted
    good_password = local_server.password_encrypted
    local_server.set_password("wrong")
    failed = poll_once(local_server)
    assert (failed.status, failed.error_kind) == (CollectorRun.Status.FAILED, "auth")
    local_server.password_encrypted = good_password
    assert poll_once(local_server).status != CollectorRun.Status.FAILED  # back to good: a change of state
    assert list(runs.order_by("started_at").values_list("status", "error_kind")) == [
        ("ok", ""), ("failed", "auth"), ("ok", "")]
    assert "Access denied" in runs.get(status="failed").error
    assert PollMinute.objects.filter(server=local_server).totals() == {"polls": 4, "failures": 1, "warnings": 0}
    minute = PollMinute.objects.filter(server=local_server).latest("minute")
    assert minute.p50_ms > 0 and minute.p95_ms >= minute.p50_ms
    local_server.refresh_from_db()
    assert local_server.last_poll_status == "ok" and local_server.last_sample_at is not None


def test_the_variables_snapshot_is_written_only_when_its_digest_changes(local_server, redis_client):
    Server.objects.filter(pk=local_server.pk).update(poll_interval_s=10)
    local_server.poll_interval_s = 10
    poll_once(local_server)
    stored = Server.objects.get(pk=local_server.pk)
    assert stored.variables and stored.variables_digest == poll_state.variables_digest(stored.variables)
    first_at = stored.variables_at
    poll_once(local_server)
    assert Server.objects.get(pk=local_server.pk).variables_at == first_at  # unchanged: not rewritten
    # A state lost (Redis flushed) falls back to the row's digest: still no rewrite, no change recorded.
    redis_client.delete(poll_state.STATE_KEY)
    poll_once(local_server)
    assert Server.objects.get(pk=local_server.pk).variables_at == first_at
    assert not local_server.variable_changes.exists()


def _variables_reads(cur) -> int:
    """How often the server has been asked for its variables (its own count of SHOW VARIABLES)."""
    cur.execute("SHOW GLOBAL STATUS LIKE 'Com_show_variables'")
    return int(cur.fetchone()[1])


def test_variables_are_read_after_a_set_statement_and_otherwise_once_a_minute(
        local_server, mariadb_root, redis_client):
    Server.objects.filter(pk=local_server.pk).update(poll_interval_s=10)
    local_server.poll_interval_s = 10
    cur = mariadb_root.cursor()
    cur.execute("SELECT @@GLOBAL.innodb_io_capacity")
    original = int(cur.fetchone()[0])
    poll_once(local_server)  # the first poll reads them
    asked = _variables_reads(cur)
    poll_once(local_server)
    poll_once(local_server)
    assert _variables_reads(cur) == asked  # no SET since: not asked again within the minute
    try:
        cur.execute(f"SET GLOBAL innodb_io_capacity = {original + 7}")
        poll_once(local_server)
        assert _variables_reads(cur) == asked + 1
    finally:
        cur.execute(f"SET GLOBAL innodb_io_capacity = {original}")
    poll_once(local_server)  # the restore was a SET too
    assert _variables_reads(cur) == asked + 2
    assert list(local_server.variable_changes.filter(name="innodb_io_capacity").order_by("ts")
                .values_list("old_value", "new_value")) == [(str(original), str(original + 7)),
                                                            (str(original + 7), str(original))]
    state = poll_state.decode(redis_client.hget(poll_state.STATE_KEY, local_server.pk))
    state["va"] -= 61  # as if the last read were a minute ago
    redis_client.hset(poll_state.STATE_KEY, local_server.pk, json.dumps(state))
    poll_once(local_server)
    assert _variables_reads(cur) == asked + 3


def test_a_server_polled_every_second_reads_variables_after_a_set_at_most_every_few_seconds():
    fast, usual = Server(poll_interval_s=1), Server(poll_interval_s=10)
    status = {"Com_set_option": "12", "Com_install_plugin": "0", "Com_uninstall_plugin": "0"}
    state = {"va": 1000.0, "sets": "11,0,0"}
    assert poll_state.variables_due(usual, state, 1001.0, status)  # a SET since: read now
    assert not poll_state.variables_due(fast, state, 1001.0, status)
    assert poll_state.variables_due(fast, state, 1000.0 + poll_state.SET_READ_MIN_GAP_S, status)
    assert not poll_state.variables_due(usual, {**state, "sets": "12,0,0"}, 1001.0, status)
    assert poll_state.variables_due(usual, {**state, "sets": "12,0,0"}, 1060.0, status)  # once a minute
    # No SET counter on this server: every poll at 10 s, as before; once a minute when faster.
    assert poll_state.variables_due(usual, state, 1001.0, {"Uptime": "5"})
    assert not poll_state.variables_due(fast, state, 1001.0, {"Uptime": "5"})


def test_a_restart_is_found_from_the_poll_state_without_reading_samples(local_server, redis_client):
    from annotations.models import Annotation

    poll_once(local_server)
    state = poll_state.decode(redis_client.hget(poll_state.STATE_KEY, local_server.pk))
    assert state["up"] > 0 and state["st"] == "ok"
    # As if the previous poll had seen a server up for ten years: this one's lower Uptime is a restart.
    state["up"] = 10 * 365 * 86400
    redis_client.hset(poll_state.STATE_KEY, local_server.pk, json.dumps(state))
    InnodbSample.objects.filter(server=local_server).delete()  # nothing to query: the state decides
    poll_once(local_server)
    restart = Annotation.objects.get(server=local_server, kind=Annotation.Kind.RESTART)
    assert restart.time < dt.datetime.now(dt.UTC)


def test_a_batch_of_polls_is_stored_in_a_fixed_number_of_statements(
        local_server, monitor_account, django_assert_max_num_queries):
    servers = [local_server]
    for n in range(4):
        server = Server(name=f"more-{n}", host="127.0.0.1", user=monitor_account["user"], poll_interval_s=1)
        server.set_password(monitor_account["password"])
        server.save()
        servers.append(server)
    writer = batch.PollWriter(max_polls=10_000, max_age_s=3600)
    batch.WRITER, saved = writer, batch.WRITER
    try:
        poll_batched([(s, None) for s in servers])  # first polls: the state comes from PostgreSQL once
        writer.flush()
        with django_assert_max_num_queries(0):  # the next polls need nothing from PostgreSQL
            for _ in range(4):
                poll_batched([(s, None) for s in servers])
        assert writer.pending() == 20
        with django_assert_max_num_queries(10):  # savepoints and 5 statements, whatever the batch size
            assert writer.flush() == 20
    finally:
        batch.WRITER = saved
    assert InnodbSample.objects.filter(server__in=servers).count() == 25
    assert RawStatus.objects.filter(server__in=servers).count() == 25
    assert PollMinute.objects.filter(server__in=servers).totals()["polls"] == 25


def test_a_failed_poll_stored_twice_is_recorded_and_counted_once(local_server):
    from collectors import polling
    from timeseries.poll_store import store_polls

    local_server.set_password("wrong")
    run, entry, _ = polling.poll(local_server, {})
    assert run.status == CollectorRun.Status.FAILED
    text = json.dumps(entry, default=str)
    store_polls([json.loads(text)])
    store_polls([json.loads(text)])  # a journal replayed after its batch was stored
    assert CollectorRun.objects.filter(server=local_server, status="failed").count() == 1
    assert PollMinute.objects.filter(server=local_server).totals() == {"polls": 1, "failures": 1, "warnings": 0}


def test_every_pool_setting_reaches_the_pool_even_when_one_equals_its_default(local_server, settings):
    from collectors import sources

    settings.INNOWATCH_POOL_MAX_IDLE = sources.POOL.max_idle  # the one the pool was configured by before
    settings.INNOWATCH_POOL_IDLE_TIMEOUT_S = 45
    settings.INNOWATCH_POOL_MAX_IDLE_PER_SERVER = 3
    assert poll_once(local_server).status != CollectorRun.Status.FAILED
    assert (sources.POOL.idle_timeout_s, sources.POOL.max_idle_per_server) == (45, 3)
    # the next poll after this test, with the settings restored, configures the pool back


def test_a_batch_copy_cannot_read_is_inserted_instead_and_a_replay_stores_nothing_twice(local_server):
    from collectors import polling
    from timeseries.poll_store import store_polls

    entries = [json.loads(json.dumps(polling.poll(local_server, {})[1], default=str)) for _ in range(3)]
    assert all(e["sample"] for e in entries)
    # A float in an integer column: COPY refuses the text "12.6" where an INSERT casts it.
    entries[1]["sample"]["history_list_length"] = 12.6
    assert store_polls([dict(e) for e in entries]) == 3
    stored = InnodbSample.objects.filter(server=local_server).order_by("ts")
    assert [s.history_list_length for s in stored][1] == 13
    assert store_polls([dict(e) for e in entries]) == 0
    assert stored.count() == 3 and RawStatus.objects.filter(server=local_server).count() == 3


def test_a_redelivered_task_polls_no_slot_twice_and_reads_each_servers_poll_state(
        local_server, monitor_account, redis_client):
    other = Server(name="claim-other", host="127.0.0.1", user=monitor_account["user"], poll_interval_s=5)
    other.set_password(monitor_account["password"])
    other.save()
    slot = 123456789
    first = poll_batched([(local_server, slot), (other, slot)])
    assert [r.server_id for r in first] == [local_server.pk, other.pk]
    assert redis_client.ttl(f"iw:polled:{other.pk}:{slot}") in range(9, 11)  # two intervals
    # The same message delivered again: both slots are taken, nothing is polled.
    assert poll_batched([(local_server, slot), (other, slot)]) == []
    # A poll outside any slot (poll_once, the demo) is never refused; the next slot is new.
    again = poll_batched([(local_server, None), (other, slot + 1)])
    assert [r.server_id for r in again] == [local_server.pk, other.pk]
    from collectors.tasks import _claim_slots
    states = dict((s.pk, state) for s, state in _claim_slots([(local_server, None), (other, None)]))
    assert states[local_server.pk]["st"] == CollectorRun.Status.OK and states[other.pk]["st"] == CollectorRun.Status.OK


def test_a_number_past_64_bits_is_journaled_and_stored_null_with_a_warning(local_server, redis_client):
    from collectors import polling

    run, entry, state = polling.poll(local_server, {})
    entry["sample"]["history_list_length"] = 2**70  # a garbled status text's number
    writer = batch.PollWriter(max_polls=10_000, max_age_s=3600)
    writer.add(entry, {local_server.pk: state})
    journal = writer._journal
    assert json.loads(redis_client.lrange(journal, 0, -1)[0])["sample"]["history_list_length"] == 2**70
    assert poll_state.decode(redis_client.hget(poll_state.STATE_KEY, local_server.pk)) == state
    assert writer.flush() == 1
    stored = InnodbSample.objects.get(server=local_server)
    assert stored.history_list_length is None and stored.warnings >= 1
    assert not redis_client.exists(journal)
