"""The what-if API's input checks, login, and redo sizing on a real capture."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.imports import import_capture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    return import_capture(CAPTURES / "mariadb-10.11--redo-log-resize.jsonl.gz", "redo-log-resize").server


def _post(client, token, server, body):
    return client.post(f"/api/v1/servers/{server.pk}/what-if", body, content_type="application/json",
                       HTTP_AUTHORIZATION=f"Bearer {token}")


def test_what_if_needs_a_login(client, server):
    response = client.post(f"/api/v1/servers/{server.pk}/what-if", {}, content_type="application/json")
    assert response.status_code == 401


@pytest.mark.parametrize("overrides,message", [
    ({"innodb_buffer_pool_size": 1}, "cannot be overridden"),
    ({"innodb_io_capacity": "lots"}, "must be a number"),
    ({"innodb_io_capacity": -5}, "positive"),
    ({"innodb_adaptive_flushing": "maybe"}, "ON or OFF"),
])
def test_bad_overrides_are_a_400_that_names_the_variable(client, api_token, server, overrides, message):
    response = _post(client, api_token, server, {"start": "2026-11-24T11:47:40Z", "end": "2026-11-24T11:50:20Z",
                                                  "overrides": overrides})
    assert response.status_code == 400 and message in response.json()["error"]


def test_the_default_range_is_the_hour_around_the_highest_checkpoint_age(server):
    import datetime as dt

    from timeseries.models import InnodbSample
    from timeseries.whatif import worst_hour

    last = InnodbSample.objects.filter(server=server).order_by("-ts").first().ts
    start, end = worst_hour(server, last + dt.timedelta(hours=1))
    peak = InnodbSample.objects.filter(server=server).order_by("-checkpoint_age_bytes").first().ts
    assert start <= peak <= end and end - start <= dt.timedelta(hours=1)


def test_redo_sizing_on_a_log_that_hit_its_async_point(client, api_token, server):
    response = client.get(f"/api/v1/servers/{server.pk}/redo-sizing?start=2026-11-24T11:47:00Z&end=2026-11-24T11:50:20Z",
                          HTTP_AUTHORIZATION=f"Bearer {api_token}")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["resize"].startswith("dynamic: SET GLOBAL innodb_log_file_size")
    # ~455 KB/s of redo: the 48 MB log holds under 2 minutes of it
    assert 1.0 < body["minutes_held"] < 2.5
    assert body["capacity_bytes"] == 48 << 20
    assert body["smallest_capacity_below_async_bytes"] > 48 << 20


def test_a_restart_inside_the_range_replays_the_part_after_it_and_says_so(client, api_token, server):
    import datetime as dt

    from django.db.models import F

    from timeseries.models import InnodbSample

    # The counters of a restarted server start again from a lower value.
    cut = dt.datetime(2026, 11, 24, 11, 49, 0, tzinfo=dt.UTC)
    InnodbSample.objects.filter(server=server, ts__gte=cut).update(
        lsn=F("lsn") - 4_000_000_000, innodb_buffer_pool_pages_flushed=F("innodb_buffer_pool_pages_flushed") - 400_000)
    response = _post(client, api_token, server, {"start": "2026-11-24T11:47:40Z", "end": "2026-11-24T11:50:20Z",
                                                  "overrides": {"innodb_io_capacity": 400}})
    assert response.status_code == 200, response.content
    body = response.json()
    assert any("restarted at 2026-11-24T11:49:0" in w for w in body["warnings"])
    assert body["t"][0] >= cut.timestamp() * 1000
    assert len(body["t"]) == len(body["what_if"]["checkpoint_age_bytes"]) == len(body["measured"]["pages_dirty"])
