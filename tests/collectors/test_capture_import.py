"""Capture files both ways: `capture` records the local MariaDB under load,
`import_capture` replays the file (or a pt-stalk folder) into the same tables."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path

import MySQLdb
import pytest
from django.core.management import call_command

from analysis.diskstats import diskstats_metrics
from annotations.models import Annotation
from collectors.imports import import_capture
from collectors.parsers.diskstats import parse_pt_diskstats_samples
from collectors.parsers.innodb_status import parse_innodb_status
from servers.models import Server, VariableChange
from tests.conftest import MARIADB, write_load
from timeseries.models import DiskSample, InnodbSample, RawStatus

pytestmark = pytest.mark.django_db

PT_STALK = Path(__file__).parents[1] / "fixtures" / "pt_stalk" / "2018_03_05_13_24_55"
PREFIX = PT_STALK / "2018_03_05_13_24_55"
SERIES = ["checkpoint_age_bytes", "history_list_length", "pages_dirty", "commits_per_s", "redo_bytes_per_s",
          "rows_inserted_per_s", "pages_flushed_per_s", "os_log_written_per_s", "threads_running"]
CHANGED = "innodb_max_purge_lag"  # harmless to flip for a second: only matters with a purge lag


def _series(client, server, start, end, metrics=SERIES, **extra):
    params = {"metrics": ",".join(metrics), "start": start.isoformat(), "end": end.isoformat(),
              "points": 5000}
    response = client.get(f"/api/v1/servers/{server.pk}/series", {**params, **extra})
    assert response.status_code == 200, response.content
    return response.json()


def _set_global_later(delay_s: float, name: str, value: int) -> threading.Timer:
    def run():
        conn = MySQLdb.connect(**MARIADB, autocommit=True)
        conn.cursor().execute(f"SET GLOBAL {name} = {int(value)}")
        conn.close()

    timer = threading.Timer(delay_s, run)
    timer.start()
    return timer


def _counts(server) -> dict:
    return {model.__name__: model.objects.filter(server=server).count()
            for model in (InnodbSample, RawStatus, DiskSample, VariableChange, Annotation)}


@pytest.fixture
def purge_lag_restored(mariadb_root):
    cur = mariadb_root.cursor()
    cur.execute(f"SELECT @@GLOBAL.{CHANGED}")
    (before,) = cur.fetchone()
    yield int(before)
    cur.execute(f"SET GLOBAL {CHANGED} = {int(before)}")


def test_capture_under_load_imported_as_a_new_server_gives_the_same_series_as_polling(
    local_server, admin_user, client, tmp_path, purge_lag_restored
):
    out = tmp_path / "incident.jsonl"
    load = write_load(7)
    change = _set_global_later(2.5, CHANGED, purge_lag_restored + 123457)
    # --store: each reading is also stored as a poll of local-mariadb, as the collector does.
    call_command("capture", server=local_server.name, seconds=5, interval=1, out=str(out), store=True)
    change.join()
    load.join()

    call_command("import_capture", str(out), server="incident-copy")
    copy = Server.objects.get(name="incident-copy")
    assert copy.imported and not copy.enabled and copy.poll_interval_s == 1
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    kinds = {line["kind"] for line in lines}
    assert {"innodb_status", "global_status", "variables", "diskstats"} <= kinds
    # Each kind carries the time its own query ran: one poll's lines are milliseconds apart.
    first_poll = {line["kind"]: dt.datetime.fromisoformat(line["ts"]) for line in lines[:4]}
    assert first_poll["innodb_status"] < first_poll["global_status"] < first_poll["variables"]
    assert first_poll["variables"] - first_poll["innodb_status"] < dt.timedelta(milliseconds=500)

    times = sorted(InnodbSample.objects.filter(server=local_server).values_list("ts", flat=True))
    assert len(times) == 5
    assert sorted(InnodbSample.objects.filter(server=copy).values_list("ts", flat=True)) == times
    client.force_login(admin_user)
    start, end = times[0] - dt.timedelta(seconds=1), times[-1] + dt.timedelta(seconds=1)
    polled = _series(client, local_server, start, end)["metrics"]
    imported = _series(client, copy, start, end)["metrics"]
    assert imported == polled
    assert max(polled["commits_per_s"]["max"]) > 0 and len(polled["checkpoint_age_bytes"]["t"]) == 5

    # The SET GLOBAL during the capture is detected on the import exactly as it was live.
    def detected(server):
        changes = VariableChange.objects.filter(server=server)
        return list(changes.values_list("ts", "name", "old_value", "new_value"))

    assert [c[1] for c in detected(copy)] == [CHANGED]
    assert detected(copy) == detected(local_server)
    assert detected(copy)[0][3] == str(purge_lag_restored + 123457)
    assert DiskSample.objects.filter(server=copy).values("ts").distinct().count() == 5


def test_capture_with_trx_records_an_idle_open_transaction_with_its_session(tmp_path):
    from collectors import capture, sources

    holder = MySQLdb.connect(**MARIADB, autocommit=False)
    cur = holder.cursor()
    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    cur.execute("SELECT CONNECTION_ID()")
    (thread_id,) = cur.fetchone()
    out = tmp_path / "trx.jsonl"
    try:
        with out.open("w") as f:
            params = sources.ConnectionParams(MARIADB["host"], MARIADB["port"], MARIADB["user"], MARIADB["password"])
            capture.capture(params, f, seconds=1, interval_s=1, local_host=False, with_trx=True)
    finally:
        holder.rollback()
        holder.close()
    trx = [json.loads(line) for line in out.read_text().splitlines() if '"innodb_trx"' in line]
    assert len(trx) == 1
    held = [row for row in trx[0]["rows"] if row["trx_mysql_thread_id"] == thread_id]
    assert held and held[0]["command"] == "Sleep" and held[0]["user"] == MARIADB["user"]
    assert held[0]["info"] is None and held[0]["trx_started"]


def test_importing_the_same_capture_twice_adds_nothing(local_server, tmp_path):
    out = tmp_path / "short.jsonl"
    call_command("capture", server=local_server.name, seconds=2, interval=1, out=str(out))
    first = import_capture(out, "twice")
    after_first = _counts(first.server)
    second = import_capture(out, "twice")

    assert first.samples == 2 and after_first["RawStatus"] == 2 and after_first["DiskSample"] > 0
    assert second.samples == 0 and second.disk_rows == 0 and second.annotations == 0
    assert _counts(second.server) == after_first

    folder_first = import_capture(PT_STALK, "stalk-twice")
    stalk_counts = _counts(folder_first.server)
    import_capture(PT_STALK, "stalk-twice")
    assert _counts(folder_first.server) == stalk_counts


def test_pt_stalk_folder_import_creates_an_imported_server_with_samples_at_the_captured_times(
    admin_user, client
):
    call_command("import_capture", str(PT_STALK), server="stalked")
    server = Server.objects.get(name="stalked")
    assert server.imported and server.host == ""

    def utc(*parts):
        return dt.datetime(2018, 3, 5, *parts, tzinfo=dt.UTC)

    samples = {s.ts: s for s in InnodbSample.objects.filter(server=server)}
    # mysqladmin -i1: tables at the prefix time + 0, 1, 2, 3 s; status texts at their header times.
    assert sorted(samples) == [utc(13, 24, s) for s in (55, 56, 57, 58)] + [utc(13, 25, 26)]
    status = parse_innodb_status(Path(f"{PREFIX}-innodbstatus1").read_text())
    at_56 = samples[utc(13, 24, 56)]
    assert at_56.lsn == status.log.lsn and at_56.checkpoint_age_bytes == status.log.checkpoint_age_bytes
    assert at_56.uptime_s == 3  # the second mysqladmin table, same second as the status text
    status2 = parse_innodb_status(Path(f"{PREFIX}-innodbstatus2").read_text())
    assert samples[utc(13, 25, 26)].lsn == status2.log.lsn
    assert RawStatus.objects.filter(server=server).count() == 2

    # Uptime 5550 -> 3 -> 4 -> 3: two restarts, each placed at the start time the new uptime implies.
    restarts = sorted(Annotation.objects.filter(server=server, kind=Annotation.Kind.RESTART)
                      .values_list("time", flat=True))
    assert restarts == [utc(13, 24, 53), utc(13, 24, 55)]

    snapshots = parse_pt_diskstats_samples(Path(f"{PREFIX}-diskstats").read_text())
    disk_times = set(DiskSample.objects.filter(server=server).values_list("ts", flat=True))
    assert disk_times == {dt.datetime.fromtimestamp(s.ts, dt.UTC) for s in snapshots}

    # The disk series are pt-diskstats' numbers for that device, interval by interval.
    client.force_login(admin_user)
    first, last = min(disk_times), max(disk_times)
    body = _series(client, server, first, last + dt.timedelta(seconds=1),
                   metrics=["disk_w_s", "disk_wr_rt_ms", "disk_busy_pct"], device="cciss/c0d1")
    expected = [m for m in diskstats_metrics(snapshots) if m.device == "cciss/c0d1"]
    assert body["devices"] == ["cciss/c0d1"]
    assert body["metrics"]["disk_w_s"]["avg"] == pytest.approx([m.wr_s for m in expected], abs=1e-3)
    assert body["metrics"]["disk_wr_rt_ms"]["avg"] == pytest.approx([m.wr_rt for m in expected], abs=1e-3)
    assert body["metrics"]["disk_busy_pct"]["avg"] == pytest.approx([m.busy for m in expected], abs=1e-3)


def test_pt_stalk_variables_file_sets_the_imported_servers_variables_and_the_zone_shifts_times(tmp_path):
    folder = tmp_path / "stalk"
    folder.mkdir()
    for source in PT_STALK.iterdir():
        (folder / source.name).write_bytes(source.read_bytes())
    # pt-stalk writes `mysql -ss -e 'SHOW GLOBAL VARIABLES'`: tab-separated, no header. Real output here.
    conn = MySQLdb.connect(**MARIADB)
    cur = conn.cursor()
    cur.execute("SHOW GLOBAL VARIABLES")
    live = {name: value for name, value in cur.fetchall()}
    conn.close()
    (folder / "2018_03_05_13_24_55-variables").write_text("".join(f"{n}\t{v}\n" for n, v in live.items()))

    result = import_capture(folder, "stalked-paris", tz="Europe/Paris")
    server = result.server
    server.refresh_from_db()
    assert server.variables == live and server.flavor == "mariadb"
    first = InnodbSample.objects.filter(server=server).order_by("ts").values_list("ts", flat=True).first()
    assert first == dt.datetime(2018, 3, 5, 12, 24, 55, tzinfo=dt.UTC)  # 13:24:55 in Paris (CET)
