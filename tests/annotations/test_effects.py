"""Effect reports on fixed series stored in InnodbSample/DiskSample, checked against values
computed by hand."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from annotations.models import Annotation
from timeseries import ingest
from timeseries.models import DiskSample
from timeseries.partitions import ensure_partitions_for

CHANGE = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
OFFSETS = (10, 20, 30, 40, 50)  # seconds from the start of each 60 s window


def _store(server, start: dt.datetime, columns: dict[str, list]) -> None:
    rows = []
    for i, offset in enumerate(OFFSETS):
        row = {"server_id": server.pk, "ts": start + dt.timedelta(seconds=offset)}
        row.update({name: values[i] for name, values in columns.items()})
        rows.append(row)
    ingest.save_innodb_samples(rows)


BEFORE = {
    # Not a ramp: alternating values keep the lag-1 autocorrelation negative, so n stays 5.
    "checkpoint_age_bytes": [50, 10, 40, 20, 30],
    # pages flushed per 10 s: 100, 0, 300, 0 -> 10, 0, 30, 0 pages/s (spiky)
    "innodb_buffer_pool_pages_flushed": [0, 100, 100, 400, 400],
    "innodb_os_log_written": [0, 10_000, 20_000, 30_000, 40_000],  # 1,000 B/s
    "com_commit": [0, 100, 200, 300, 400],  # 10/s
    "history_list_length": [100, 200, 300, 400, 500],  # +10/s = +36,000/h
}
AFTER = {
    "checkpoint_age_bytes": [3, 1, 4, 2, 5],
    "innodb_buffer_pool_pages_flushed": [0, 100, 200, 300, 400],  # steady 10 pages/s
    "innodb_os_log_written": [0, 10_000, 20_000, 30_000, 40_000],
    "com_commit": [0, 100, 200, 300, 400],
    "history_list_length": [500, 500, 500, 500, 500],
}


@pytest.fixture
def change(local_server):
    local_server.poll_interval_s = 10
    local_server.save()
    _store(local_server, CHANGE - dt.timedelta(seconds=60), BEFORE)
    _store(local_server, CHANGE, AFTER)
    return Annotation.objects.create(server=local_server, time=CHANGE, kind=Annotation.Kind.VARIABLE_CHANGE,
                                     text="innodb_adaptive_flushing: OFF → ON")


def _auth(key):
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


def _effect(client, key, annotation, **params):
    params = {"window": "60s", "settle": "0", **params}
    response = client.get(f"/api/v1/annotations/{annotation.pk}/effect", params, **_auth(key))
    assert response.status_code == 200, response.content
    return response.json()


def test_gauge_statistics_match_hand_computed_values(client, api_token, change):
    m = _effect(client, api_token, change)["metrics"]["checkpoint_age_bytes"]
    sd = math.sqrt(250)  # sample variance of 10..50: (400+100+0+100+400)/4
    assert m["before"] == pytest.approx({"mean": 30, "p50": 30, "p95": 48, "max": 50, "stddev": sd,
                                         "cv": sd / 30, "n": 5})
    assert m["after"]["mean"] == 3 and m["after"]["max"] == 5
    assert m["change_pct"] == pytest.approx(-90)
    # Five points a window: too few to tell a change from the series' own wander.
    assert (m["verdict"], m["expected"], m["p_value"]) == ("inconclusive", None, None)


def test_rates_come_from_counters_and_spikiness_is_reported(client, api_token, change):
    m = _effect(client, api_token, change)["metrics"]["pages_flushed_per_s"]
    assert m["before"]["mean"] == pytest.approx(10) and m["before"]["max"] == pytest.approx(30)
    assert m["before"]["p50"] == pytest.approx(5)
    assert m["after"]["stddev"] == pytest.approx(0)
    spiky = m["spikiness"]
    assert spiky["cv_before"] == pytest.approx(math.sqrt(200) / 10)  # stddev of 10, 0, 30, 0
    assert spiky["peak_over_median_before"] == pytest.approx(6)  # 30 / 5
    assert spiky["peak_over_median_after"] == pytest.approx(1)


def test_hll_slope_per_hour_and_normalised_flushing(client, api_token, change):
    body = _effect(client, api_token, change)
    hll = body["metrics"]["history_list_length"]["slope_per_hour"]
    assert hll == pytest.approx({"before": 36_000, "after": 0})
    # 10 pages/s over 1,000 B/s of redo = 10,000 pages per MB, both windows on average
    norm = body["metrics"]["pages_flushed_per_redo_mb"]
    assert norm["before"]["mean"] == pytest.approx(10_000) and norm["after"]["mean"] == pytest.approx(10_000)
    assert body["workload_changed"] is False
    assert body["summary"].startswith("No metric moved because of this change")


def test_workload_change_is_warned_about_from_transactions_not_commit_statements(client, api_token, local_server):
    local_server.poll_interval_s = 5
    local_server.save()
    rows = []
    for start, trx_per_5s in ((CHANGE - dt.timedelta(seconds=60), 50), (CHANGE, 150)):  # 10/s -> 30/s
        rows += [{"server_id": local_server.pk, "ts": start + dt.timedelta(seconds=5 * i), "com_commit": 7,
                  "trx_id_counter": 1000 + i * trx_per_5s} for i in range(1, 12)]
    ingest.save_innodb_samples(rows)
    annotation = Annotation.objects.create(server=local_server, time=CHANGE, text="deploy")
    body = _effect(client, api_token, annotation)
    assert body["metrics"]["trx_per_s"]["after"]["mean"] == pytest.approx(30)
    assert body["metrics"]["commits_per_s"]["after"]["mean"] == 0  # autocommit: no COMMIT statements
    assert body["workload_changed"] is True and body["workload"]["trx_per_s"] == pytest.approx(200)
    assert "workload changed (transactions +200 %)" in body["summary"]


def test_disk_write_rate_and_latency_from_disk_samples(client, api_token, change, local_server):
    rows = []
    for start, writes_per_10s, ms_per_write in ((CHANGE - dt.timedelta(seconds=60), 100, 0.5), (CHANGE, 300, 2)):
        for i, offset in enumerate(OFFSETS):
            writes = i * writes_per_10s
            rows.append(DiskSample(server=local_server, device="sda", ts=start + dt.timedelta(seconds=offset),
                                   writes=writes, writes_merged=0, write_ms=int(writes * ms_per_write)))
    ensure_partitions_for({r.ts for r in rows}, tables=["dashboard_disksample"])
    DiskSample.objects.bulk_create(rows)
    m = _effect(client, api_token, change)["metrics"]
    assert m["disk_w_s"]["before"]["mean"] == pytest.approx(10) and m["disk_w_s"]["after"]["mean"] == pytest.approx(30)
    assert m["disk_wr_rt_ms"]["before"]["mean"] == pytest.approx(0.5)
    assert m["disk_wr_rt_ms"]["after"]["mean"] == pytest.approx(2)


def test_two_chosen_windows_give_the_same_report(client, api_token, change, local_server):
    params = {"before_start": "2026-11-20T11:59:00Z", "before_end": "2026-11-20T12:00:00Z",
              "after_start": "2026-11-20T12:00:00Z", "after_end": "2026-11-20T12:01:00Z"}
    response = client.get(f"/api/v1/servers/{local_server.pk}/effect", params, **_auth(api_token))
    assert response.status_code == 200
    assert response.json()["metrics"] == _effect(client, api_token, change)["metrics"]
    del params["after_end"]
    bad = client.get(f"/api/v1/servers/{local_server.pk}/effect", params, **_auth(api_token))
    assert bad.status_code == 400 and "after_end" in bad.json()["error"]


def test_effect_api_needs_auth_and_a_valid_window(client, api_token, change):
    url = f"/api/v1/annotations/{change.pk}/effect"
    assert client.get(url).status_code == 401
    bad = client.get(url, {"window": "half an hour"}, **_auth(api_token))
    assert bad.status_code == 400 and "duration" in bad.json()["error"]


def test_effect_page_shows_the_table_and_chart_data(client, admin_user, change):
    url = f"/annotations/{change.pk}/effect/?window=60s&settle=0"
    assert client.get(url).status_code == 302  # login required
    client.force_login(admin_user)
    page = client.get(url).content.decode()
    assert 'id="effect-table"' in page and "checkpoint_age_bytes" in page
    assert 'id="effect-data"' in page and "plotly-3.3.1.min.js" in page and "js/effect.js" in page
    assert "OFF → ON" in page
