"""generate_history writes realistic, clearly synthetic history, fast and with rollups."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command

from analysis.rates import counter_rates
from annotations.models import Annotation
from dashboard.history import ASYNC_POINT
from servers.models import Server
from timeseries import rollups
from timeseries.models import InnodbRollup1h, InnodbSample

START = dt.datetime(2026, 4, 1, tzinfo=dt.UTC)


@pytest.fixture
def history(db):
    call_command("generate_history", servers=2, days=14, interval=120, start=START.isoformat())
    return Server.objects.filter(synthetic=True).order_by("name")


def _values(server, column):
    return list(InnodbSample.objects.filter(server=server).order_by("ts").values_list("ts", column))


def test_generated_servers_are_marked_synthetic_and_get_every_sample(history):
    assert [s.name for s in history] == ["synthetic-001", "synthetic-002"]
    assert all(s.synthetic and not s.enabled for s in history)
    assert InnodbSample.objects.filter(server=history[0]).count() == 14 * 720


def test_checkpoint_age_saws_up_to_the_async_point_before_the_change_and_stays_low_after(history):
    server = history[0]
    change = Annotation.objects.get(server=server).time
    before = [v for ts, v in _values(server, "checkpoint_age_bytes") if ts < change]
    after = [v for ts, v in _values(server, "checkpoint_age_bytes") if ts > change + dt.timedelta(hours=1)]
    assert max(before) >= ASYNC_POINT * 0.99
    storms = sum(1 for a, b in zip(before, before[1:]) if b < a * 0.7)
    assert storms >= 10
    assert max(after) < ASYNC_POINT * 0.3


def test_restarts_reset_counters_and_rates_never_go_negative(history):
    uptime = [v for _, v in _values(history[0], "uptime_s")]
    assert any(b < a for a, b in zip(uptime, uptime[1:]))
    commits = [(ts.timestamp(), v) for ts, v in _values(history[0], "com_commit")]
    assert all(r.per_s is None or r.per_s >= 0 for r in counter_rates(commits, max_gap_s=360))


def test_history_list_length_grows_before_the_change_and_drains_after(history):
    server = history[0]
    change = Annotation.objects.get(server=server).time
    hll = _values(server, "history_list_length")
    peak_before = max(v for ts, v in hll if ts < change)
    last_day = [v for ts, v in hll if ts > change + dt.timedelta(days=4)]
    assert peak_before > 10 * max(last_day)


def test_history_is_rolled_up_for_long_charts(history):
    assert InnodbRollup1h.objects.filter(server=history[0]).count() == 14 * 24
    # The high-water marks moved past the history, so reads use these rollups.
    assert rollups.built_until("1h") == START + dt.timedelta(days=14)
