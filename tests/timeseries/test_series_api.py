"""The series API refuses bad requests with a 400 and a message that says what to fix."""

from __future__ import annotations

import datetime as dt

import pytest

from servers.models import Server
from timeseries import ingest

T0 = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)


@pytest.fixture
def server(db):
    server = Server.objects.create(name="api-test", host="127.0.0.1", poll_interval_s=10)
    ingest.save_innodb_samples([
        ingest.sample_row(server.pk, T0 + dt.timedelta(seconds=10 * i), checkpoint_age_bytes=i, com_commit=5 * i)
        for i in range(360)
    ])
    return server


def _get(client, api_token, server, **params):
    params.setdefault("metrics", "checkpoint_age_bytes")
    return client.get(f"/api/v1/servers/{server.pk}/series", params, HTTP_AUTHORIZATION=f"Bearer {api_token}")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"start": "yesterday"}, "is not an ISO 8601 date-time"),
        ({"end": "2026-13-45T00:00:00Z"}, "is not an ISO 8601 date-time"),
        ({"start": "2026-07-01T01:00:00Z", "end": "2026-07-01T00:00:00Z"}, "start must be before end"),
        ({"start": "2026-07-01T00:00:00Z", "end": "2026-07-01T00:00:00Z"}, "start must be before end"),
        ({"start": "2024-01-01T00:00:00Z", "end": "2026-07-01T00:00:00Z"}, "range too long"),
        ({"points": "100000"}, "points must be between 1 and 5000"),
        ({"points": "0"}, "points must be between 1 and 5000"),
        ({"points": "many"}, "is not a whole number"),
        ({"metrics": "checkpoint_age_bytes,not_a_metric"}, "unknown metric(s): not_a_metric"),
        ({"metrics": ""}, "metrics is required"),
    ],
    ids=["bad-start", "impossible-end", "reversed", "empty", "too-long", "too-many-points", "zero-points",
         "points-not-a-number", "unknown-metric", "no-metric"],
)
def test_a_bad_request_gets_400_with_a_clear_message(client, api_token, server, params, message):
    response = _get(client, api_token, server, **params)
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_a_good_request_returns_no_more_buckets_than_points(client, api_token, server):
    response = _get(client, api_token, server, metrics="checkpoint_age_bytes,commits_per_s",
                    start="2026-07-01T00:00:00Z", end="2026-07-01T01:00:00Z", points="50")
    assert response.status_code == 200
    data = response.json()["metrics"]
    assert 0 < len(data["checkpoint_age_bytes"]["t"]) <= 50
    assert set(data["commits_per_s"]["avg"]) == {0.5}


def test_the_series_api_needs_a_login_or_token(client, server):
    response = client.get(f"/api/v1/servers/{server.pk}/series", {"metrics": "checkpoint_age_bytes"})
    assert response.status_code in (401, 403)
