"""Triggers, cool-down, the cap, the downloads and the incident page, on real one-second readings
(a capture of the local MariaDB) and the real PostgreSQL."""

from __future__ import annotations

import datetime as dt
import io
import zipfile

import pytest
from django.test import override_settings

from tests.incidents.burst_fixture import make_burst

pytestmark = pytest.mark.django_db
MAX_AGE = 40_050_893  # Innodb_checkpoint_max_age of MariaDB 10.11 with a 48 MiB redo log
ASYNC = MAX_AGE * 7 / 8


@pytest.fixture
def mariadb(db):
    from servers.models import Server

    return Server.objects.create(name="m1", host="127.0.0.1", version="10.11.6-MariaDB", flavor="mariadb",
                                 poll_interval_s=10, variables={"innodb_log_file_size": str(48 * 1024**2)})


def _samples(server, start: dt.datetime, ages_pct: list[float]) -> None:
    from timeseries import ingest

    rows = [ingest.sample_row(server.pk, start + dt.timedelta(seconds=10 * i), checkpoint_age_bytes=int(p / 100 * ASYNC),
                              status_checkpoint_max_age=MAX_AGE, lsn=10**9, checkpoint_lsn=10**9 - int(p / 100 * ASYNC))
            for i, p in enumerate(ages_pct)]
    ingest.save_innodb_samples(rows)


NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)


def test_a_condition_must_hold_for_its_cycles_before_it_starts_anything(mariadb):
    from incidents.triggers import config_for, held_condition

    config = config_for(mariadb)  # the defaults: 90 % of async, 2 polls
    config.runway_minutes = None  # the climb below also makes a short runway: this test is about the age
    _samples(mariadb, NOW - dt.timedelta(seconds=40), [40, 50, 60, 95])
    assert held_condition(mariadb, config, NOW) is None  # one poll past 90 % is a spike
    _samples(mariadb, NOW, [97])
    condition, value = held_condition(mariadb, config, NOW + dt.timedelta(seconds=1))
    assert condition.field == "checkpoint_age_pct_of_async" and value == pytest.approx(97, abs=0.01)
    config.cycles = 3
    assert held_condition(mariadb, config, NOW + dt.timedelta(seconds=1)) is None
    config.cycles, config.runway_minutes = 2, 5.0
    condition, value = held_condition(mariadb, config, NOW - dt.timedelta(seconds=9))
    assert condition.field == "runway_minutes" and value < 5  # 40 -> 95 % in 30 s: the sync point is near


def test_a_second_trigger_inside_the_cool_down_starts_nothing(mariadb):
    from incidents.models import Burst
    from incidents.triggers import check_server, config_for, in_cooldown

    _samples(mariadb, NOW - dt.timedelta(seconds=20), [95, 96, 97])
    config = config_for(mariadb)
    ended = NOW - dt.timedelta(seconds=config.cooldown_s - 5)
    Burst.objects.create(server=mariadb, trigger="manual", reason="x", started_at=ended - dt.timedelta(seconds=120),
                         ends_at=ended, finished_at=ended, status=Burst.Status.DONE)
    assert in_cooldown(mariadb, config, NOW)
    assert check_server(mariadb, NOW) is None and Burst.objects.count() == 1
    assert not in_cooldown(mariadb, config, NOW + dt.timedelta(seconds=10))


@override_settings(INNOWATCH_BURST_MAX_CONCURRENT=1)
def test_one_burst_per_server_and_no_more_than_the_cap_at_once(mariadb):
    from incidents.models import Burst
    from incidents.triggers import BurstRefused, start_burst, start_manual
    from servers.models import Server

    other = Server.objects.create(name="m2", host="127.0.0.1")
    Burst.objects.create(server=mariadb, trigger="manual", reason="x", started_at=NOW,
                         ends_at=NOW + dt.timedelta(seconds=120))
    with pytest.raises(BurstRefused, match="already running"):
        start_manual(mariadb, None)
    with pytest.raises(BurstRefused, match="INNOWATCH_BURST_MAX_CONCURRENT"):
        start_manual(other, None)
    assert start_burst(other, "threads_running", "60 threads running", 60) is None
    assert Burst.objects.count() == 1


@override_settings(INNOWATCH_BURST_MAX_BYTES=1000)
def test_the_size_cap_stops_a_burst_after_the_second_that_reached_it(local_server):
    from django.utils import timezone

    from incidents.bursts import burst_tick
    from incidents.models import Burst, BurstSecond

    now = timezone.now()
    burst = Burst.objects.create(server=local_server, trigger="manual", reason="x", started_at=now,
                                 ends_at=now + dt.timedelta(seconds=120))
    burst_tick(burst.pk, 0)  # one real second of the local MariaDB: tens of kB, past the cap
    burst.refresh_from_db()
    assert burst.status == Burst.Status.CAPPED and burst.finished_at is not None
    assert burst.seconds_read == 1 and burst.size_bytes > 1000, burst.last_error
    assert BurstSecond.objects.filter(burst=burst).count() == 1
    burst_tick(burst.pk, 1)  # a tick sent before the cap was reached reads nothing more
    assert BurstSecond.objects.filter(burst=burst).count() == 1


def test_the_pt_stalk_folder_holds_each_second_as_pt_stalk_names_and_formats_it(mariadb):
    from collectors.parsers import pt_stalk
    from incidents.export import pt_stalk_zip, second_lines
    from incidents.models import BurstSecond

    burst = make_burst(mariadb, count=5)
    names = zipfile.ZipFile(io.BytesIO(pt_stalk_zip(burst))).namelist()
    files = [pt_stalk.parse_file_name(n.split("/")[1]) for n in names]
    assert all(files) and len({n.split("/")[0] for n in names}) == 1
    kinds = sorted({f.kind for f in files})
    assert kinds == ["diskstats", "innodbstatus1", "mysqladmin", "transactions", "variables"]
    assert len({f.prefix for f in files}) == 5  # one collection per second
    zf = zipfile.ZipFile(io.BytesIO(pt_stalk_zip(burst)))
    first = BurstSecond.objects.get(burst=burst, seq=0)
    by_kind = {line["kind"]: line for line in second_lines(first)}
    mysqladmin = next(n for n in names if n.endswith("-mysqladmin"))
    assert pt_stalk.parse_status_tables(zf.read(mysqladmin).decode()) == \
        [{k: str(v) for k, v in by_kind["global_status"]["rows"]}]
    variables = next(n for n in names if n.endswith("-variables"))
    assert pt_stalk.parse_variables(zf.read(variables).decode()) == dict(by_kind["variables"]["rows"])
    assert zf.read(next(n for n in names if n.endswith("-diskstats"))).decode().startswith("TS ")


def test_the_incident_page_needs_login_and_escapes_what_the_server_said(mariadb, client, admin_user):
    from incidents.bursts import BurstSecond  # noqa: F401  (the page reads them)

    def hostile(seq):
        return [{"ts": "2026-11-24T11:13:46.5+00:00", "kind": "processlist",
                 "rows": [{"id": 7, "user": "app", "host": "10.0.0.1", "command": "Query", "time": 42,
                           "state": "updating", "info": "UPDATE t SET a='<script>alert(1)</script>'"}]}]

    burst = make_burst(mariadb, count=3, extra=hostile)
    assert client.get(f"/bursts/{burst.pk}/").status_code == 302
    assert client.get(f"/api/v1/bursts/{burst.pk}/capture").status_code in (401, 403)
    client.force_login(admin_user)
    page = client.get(f"/bursts/{burst.pk}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    detail = client.get(f"/api/v1/bursts/{burst.pk}/seconds/1").json()
    assert detail["seq"] == 1 and "INNODB MONITOR OUTPUT" in detail["innodb_status"]
    assert client.get(f"/api/v1/bursts/{burst.pk}/seconds/99").status_code == 404


def test_capture_now_needs_the_operator_role(mariadb, client, django_user_model):
    from incidents.models import Burst

    viewer = django_user_model.objects.create_user("viewer", password="pw-viewer-123")
    client.force_login(viewer)
    assert client.post(f"/api/v1/servers/{mariadb.pk}/capture", {}, content_type="application/json").status_code == 403
    assert client.post(f"/servers/{mariadb.pk}/capture/").status_code == 403
    assert not Burst.objects.exists()


def test_a_notification_sent_while_a_burst_runs_links_to_it(mariadb):
    from alerting.evaluation import Notice
    from alerting.models import AlertRule, AlertState
    from alerting.notify import build_message
    from incidents.models import Burst

    burst = Burst.objects.create(server=mariadb, trigger="manual", reason="x", started_at=NOW - dt.timedelta(seconds=5),
                                 ends_at=NOW + dt.timedelta(seconds=115))
    rule = AlertRule.objects.create(name="age", metric="checkpoint_age_pct_of_async", op=">", threshold=90)
    state = AlertState.objects.create(rule=rule, server=mariadb, state="firing", last_value=95,
                                      firing_since=NOW.timestamp())
    notices = [Notice("firing", rule, state, None)]
    _, text, payload = build_message(mariadb, notices, NOW)
    assert f"/bursts/{burst.pk}/" in text
    assert payload["evidence"] == [{"label": "one-second capture", "url": payload["evidence"][0]["url"]}]
    _, text, payload = build_message(mariadb, notices, NOW + dt.timedelta(seconds=200))
    assert "/bursts/" not in text and "evidence" not in payload


def test_the_sweep_closes_a_broken_burst_and_drops_bursts_past_their_retention(mariadb):
    from django.conf import settings
    from django.utils import timezone

    from annotations.models import Annotation
    from incidents.bursts import sweep_bursts
    from incidents.models import Burst

    now = timezone.now()
    old_start = now - dt.timedelta(days=settings.INNOWATCH_BURST_RETENTION_DAYS + 1)
    note = Annotation.objects.create(server=mariadb, time=old_start, text="One-second capture: old")
    old = Burst.objects.create(server=mariadb, trigger="manual", reason="old", started_at=old_start,
                               ends_at=old_start + dt.timedelta(seconds=120), status=Burst.Status.DONE, annotation=note)
    broken = Burst.objects.create(server=mariadb, trigger="manual", reason="no worker", started_at=now - dt.timedelta(minutes=5),
                                  ends_at=now - dt.timedelta(minutes=3))
    kept = Burst.objects.create(server=mariadb, trigger="manual", reason="recent", started_at=now,
                                ends_at=now + dt.timedelta(seconds=120))
    sweep_bursts()
    assert not Burst.objects.filter(pk=old.pk).exists() and not Annotation.objects.filter(pk=note.pk).exists()
    broken.refresh_from_db()
    assert broken.status == Burst.Status.FAILED and "innowatch-test-bursts" in broken.last_error
    kept.refresh_from_db()
    assert kept.status == Burst.Status.RUNNING
