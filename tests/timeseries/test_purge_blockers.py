"""What holds purge back, through the API, on a real capture of the local MariaDB: a reporting
session (thread 1539, reporting@127.0.0.1) holds a consistent snapshot for 150 s under 1,000
autocommit updates/s (tests/fixtures/captures/PROVENANCE.md)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from collectors.imports import import_capture
from timeseries.models import ReadViewHolder

CAPTURE = Path(__file__).resolve().parent.parent / "fixtures" / "captures" / "mariadb-10.11--held-snapshot.jsonl.gz"
HELD_FROM = dt.datetime(2026, 11, 24, 11, 32, 25, tzinfo=dt.UTC)
COMMITTED = dt.datetime(2026, 11, 24, 11, 34, 55, tzinfo=dt.UTC)
pytestmark = pytest.mark.django_db


def _blockers(client, token, server, start, end):
    response = client.get(f"/api/v1/servers/{server.pk}/purge-blockers",
                          {"start": start.isoformat(), "end": end.isoformat()}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_held_snapshot_is_named_while_open_and_not_after_it_commits(client, api_token):
    server = import_capture(CAPTURE, "held-snapshot").server
    during = _blockers(client, api_token, server, HELD_FROM, COMMITTED)
    assert len(during) == 1
    holder = during[0]
    assert (holder["thread_id"], holder["user"], holder["host"]) == (1539, "reporting", "127.0.0.1")
    # Named from the poll its view turned 10 s old until the last poll before the COMMIT.
    first, last = (dt.datetime.fromisoformat(holder[k]) for k in ("first_seen", "last_seen"))
    assert HELD_FROM + dt.timedelta(seconds=9) <= first <= HELD_FROM + dt.timedelta(seconds=13)
    assert COMMITTED - dt.timedelta(seconds=3) <= last < COMMITTED
    assert 145 <= holder["max_age_s"] <= 151
    assert _blockers(client, api_token, server, COMMITTED + dt.timedelta(seconds=1),
                     COMMITTED + dt.timedelta(minutes=2)) == []
    # Bounded storage: one row a poll while it held the view, nothing before or after.
    assert ReadViewHolder.objects.filter(server=server).count() == pytest.approx(140, abs=6)
