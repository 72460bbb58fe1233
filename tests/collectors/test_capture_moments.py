"""Readings of one poll are one moment, whatever the order and spacing of a capture's lines: a real
capture of the local MariaDB, whose kinds are milliseconds apart, imports one row per poll and
every variable change in it."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import random
from pathlib import Path

import pytest

from collectors.imports import POLL_SPREAD, group_readings, import_capture

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
PINNED = CAPTURES / "mariadb-10.11--adaptive-flushing-pinned-at-async.jsonl.gz"
T0 = dt.datetime(2026, 11, 24, 4, 55, 18, 39000, tzinfo=dt.UTC)


def _lines(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def _poll(start: dt.datetime, offsets_ms, variables=None) -> list[tuple]:
    kinds = ["innodb_status", "global_status", "variables", "innodb_metrics"]
    items = {"innodb_status": {"text": "x"}, "global_status": {"rows": [["Uptime", "5"]]},
             "variables": {"rows": sorted((variables or {"innodb_io_capacity": "200"}).items())},
             "innodb_metrics": {"rows": [["buffer_flush_adaptive_total_pages", 0]]}}
    return [(start + dt.timedelta(milliseconds=ms), kind, items[kind]) for kind, ms in zip(kinds, offsets_ms)]


def test_kinds_milliseconds_apart_make_one_moment_at_the_status_time():
    moments = group_readings(_poll(T0, [0, 7, 10, 12]) + _poll(T0 + dt.timedelta(seconds=1), [0, 7, 10, 12]))
    assert [m.ts for m in moments] == [T0, T0 + dt.timedelta(seconds=1)]
    assert all(m.innodb_status and m.global_status and m.variables and m.innodb_metrics for m in moments)


def test_the_order_of_the_lines_does_not_matter():
    readings = _poll(T0, [0, 7, 10, 12]) + _poll(T0 + dt.timedelta(seconds=2), [5, 0, 9, 3])
    shuffled = readings[:]
    random.Random(7).shuffle(shuffled)
    assert [(m.ts, m.global_status) for m in group_readings(shuffled)] == \
        [(m.ts, m.global_status) for m in group_readings(readings)]
    assert len(group_readings(shuffled)) == 2


def test_a_reading_goes_to_the_nearest_status_text_not_the_previous_one():
    # Polls half a second apart: the second poll's global status (read 20 ms before its status
    # text, by a reader that takes it first) belongs to the second poll.
    first = _poll(T0, [0, 7, 10, 12])
    second = _poll(T0 + dt.timedelta(milliseconds=500), [20, 0, 25, 27])
    moments = group_readings(first + second)
    assert len(moments) == 2 and moments[1].ts == T0 + dt.timedelta(milliseconds=520)
    assert moments[1].global_status is not None and moments[0].global_status is not None


def test_readings_far_from_any_status_text_stay_apart():
    lonely = [(T0 + POLL_SPREAD * 5, "global_status", {"rows": [["Uptime", "9"]]})]
    moments = group_readings(_poll(T0, [0, 7, 10, 12]) + lonely)
    assert len(moments) == 2 and moments[1].innodb_status is None


@pytest.mark.django_db
def test_a_real_capture_with_kinds_apart_imports_one_row_per_poll_and_its_variable_change():
    from servers.models import VariableChange
    from timeseries.models import InnodbSample

    lines = _lines(PINNED)
    statuses = [line for line in lines if line["kind"] == "innodb_status"]
    times = {line["ts"] for line in lines if line["kind"] in ("innodb_status", "global_status")}
    assert len(times) > len(statuses), "the capture's kinds must carry their own times"
    result = import_capture(PINNED, "pinned-copy")
    server = result.server
    assert InnodbSample.objects.filter(server=server).count() == len(statuses)
    assert InnodbSample.objects.filter(server=server, uptime_s__isnull=True).count() == 0
    change = VariableChange.objects.get(server=server, name="innodb_adaptive_flushing")
    assert (change.old_value, change.new_value) == ("OFF", "ON")
