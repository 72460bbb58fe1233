"""Before/after effect reports: query raw samples for two windows, derive rates with
analysis.rates, compare with analysis.effect.compare_windows, and shape the result as JSON.

Gauges are used as stored; rates come from the stored cumulative counters. Disk w_s and wr_rt
are summed over the server's devices per sample time (pt-diskstats `--group-by sample`)."""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass

from analysis.effect import Report, Stats, compare_windows, pages_flushed_per_redo_mb
from analysis.rates import counter_rates
from annotations.models import Annotation
from servers.models import Server
from timeseries.models import DiskSample, InnodbSample

GAUGES = ("checkpoint_age_bytes", "modified_age_bytes", "pages_dirty", "history_list_length")
# rate name -> stored cumulative counters, first non-empty wins
COUNTERS = {
    "pages_flushed_per_s": ("innodb_buffer_pool_pages_flushed", "pages_written"),
    "redo_bytes_per_s": ("innodb_os_log_written", "lsn"),
    "commits_per_s": ("com_commit",),
}
ORDER = GAUGES[:2] + ("pages_flushed_per_s", "pages_dirty", "history_list_length", "redo_bytes_per_s",
                      "commits_per_s", "pages_flushed_per_redo_mb", "disk_w_s", "disk_wr_rt_ms")
DEFAULT_WINDOW = dt.timedelta(minutes=30)
DEFAULT_SETTLE = dt.timedelta(minutes=2)
MAX_WINDOW = dt.timedelta(days=7)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}

Series = list[tuple[float, float | None]]


class EffectError(ValueError):
    """A request we cannot answer: bad duration or window (the API returns 400)."""


@dataclass(frozen=True)
class Windows:
    change: dt.datetime  # x = 0 on the chart
    before: tuple[dt.datetime, dt.datetime]
    after: tuple[dt.datetime, dt.datetime]


def parse_duration(value: str | None, default: dt.timedelta, name: str) -> dt.timedelta:
    """`30m`, `2m`, `90s`, `1h`, `1d`, or plain seconds."""
    if value is None or value == "":
        return default
    match = _DURATION.match(value)
    if not match:
        raise EffectError(f"{name}={value!r} is not a duration such as 30m, 90s or 1h")
    duration = dt.timedelta(seconds=float(match[1]) * _UNIT_S[match[2]])
    if duration > MAX_WINDOW:
        raise EffectError(f"{name} is longer than {MAX_WINDOW.days} days")
    return duration


def annotation_windows(annotation: Annotation, window: dt.timedelta, settle: dt.timedelta) -> Windows:
    """Before: the window ending at the change. After: from the end of the change (a range
    annotation ends at time_end) plus the settle period, for the same length."""
    if window <= dt.timedelta(0):
        raise EffectError("window must be longer than 0")
    end = annotation.time_end or annotation.time
    return Windows(annotation.time, (annotation.time - window, annotation.time),
                   (end + settle, end + settle + window))


def _epoch(ts: dt.datetime) -> float:
    return ts.timestamp()


def _innodb_series(server: Server, start: dt.datetime, end: dt.datetime) -> dict[str, Series]:
    columns = list(GAUGES) + sorted({c for cs in COUNTERS.values() for c in cs})
    rows = list(
        InnodbSample.objects.filter(server=server, ts__gte=start, ts__lte=end)
        .order_by("ts").values("ts", *columns)
    )
    out: dict[str, Series] = {g: [(_epoch(r["ts"]), r[g]) for r in rows if r[g] is not None] for g in GAUGES}
    max_gap = 3 * max(server.poll_interval_s, 1)
    for name, candidates in COUNTERS.items():
        column = next((c for c in candidates if any(r[c] is not None for r in rows)), None)
        samples = [(_epoch(r["ts"]), r[column]) for r in rows] if column else []
        out[name] = [(r.ts, r.per_s) for r in counter_rates(samples, max_gap_s=max_gap) if r.per_s is not None]
    return {k: v for k, v in out.items() if v}


def _disk_series(server: Server, start: dt.datetime, end: dt.datetime) -> dict[str, Series]:
    """w_s and wr_rt_ms (ms per write, merged writes counted) over all devices per sample."""
    totals: dict[float, list[int]] = defaultdict(lambda: [0, 0, 0])
    rows = DiskSample.objects.filter(server=server, ts__gte=start, ts__lte=end).values_list(
        "ts", "writes", "writes_merged", "write_ms")
    for ts, writes, merged, ms in rows:
        acc = totals[_epoch(ts)]
        acc[0] += writes or 0
        acc[1] += merged or 0
        acc[2] += ms or 0
    points = sorted(totals.items())
    w_s, rt = [], []
    for (t0, a), (t1, b) in zip(points, points[1:]):
        d_w, d_m, d_ms = (b[i] - a[i] for i in range(3))
        if t1 <= t0 or min(d_w, d_m, d_ms) < 0:
            continue  # counters reset (reboot): no rate for this interval
        w_s.append((t1, d_w / (t1 - t0)))
        if d_w + d_m > 0:
            rt.append((t1, d_ms / (d_w + d_m)))
    return {k: v for k, v in (("disk_w_s", w_s), ("disk_wr_rt_ms", rt)) if v}


def window_series(server: Server, start: dt.datetime, end: dt.datetime) -> dict[str, Series]:
    series = {**_innodb_series(server, start, end), **_disk_series(server, start, end)}
    if "pages_flushed_per_s" in series and "redo_bytes_per_s" in series:
        series["pages_flushed_per_redo_mb"] = pages_flushed_per_redo_mb(
            series["pages_flushed_per_s"], series["redo_bytes_per_s"])
    return series


def _stats_json(s: Stats) -> dict:
    return {"mean": s.mean, "p50": s.p50, "p95": s.p95, "max": s.max, "stddev": s.stddev, "cv": s.cv, "n": s.n}


def report_json(report: Report) -> dict:
    metrics = {}
    for name in sorted(report.metrics, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n)):
        m = report.metrics[name]
        metrics[name] = {"before": _stats_json(m.before), "after": _stats_json(m.after),
                         "change_pct": m.change_pct, "p_value": m.p_value, "significant": m.significant}
    spiky = report.extra.get("pages_flushed_per_s")
    if spiky and "pages_flushed_per_s" in metrics:
        metrics["pages_flushed_per_s"]["spikiness"] = spiky
    hll = report.extra.get("history_list_length")
    if hll and "history_list_length" in metrics:
        metrics["history_list_length"]["slope_per_hour"] = {
            "before": hll["slope_per_hour_before"], "after": hll["slope_per_hour_after"]}
    return {"metrics": metrics, "summary": report.summary, "workload_changed": report.workload_changed}


def effect_report(server: Server, windows: Windows) -> tuple[dict, dict[str, Series], dict[str, Series]]:
    """The report (JSON body) for two windows of one server, and the series behind it."""
    for label, (start, end) in (("before", windows.before), ("after", windows.after)):
        if start >= end:
            raise EffectError(f"the {label} window must start before it ends")
    before = window_series(server, *windows.before)
    after = window_series(server, *windows.after)
    body = report_json(compare_windows(before, after))
    body["windows"] = {
        "change": windows.change.isoformat(),
        "before": [t.isoformat() for t in windows.before],
        "after": [t.isoformat() for t in windows.after],
    }
    if not before or not after:
        body["summary"] = f"no samples in the {'before' if not before else 'after'} window. " + body["summary"]
    body["server"] = server.pk
    return body, before, after


def chart_traces(before: dict[str, Series], after: dict[str, Series], change: dt.datetime) -> dict:
    """Per metric, both windows as x = seconds relative to the change (before < 0 < after)."""
    zero = _epoch(change)
    shift = lambda series: {"x": [round(t - zero, 3) for t, _ in series], "y": [v for _, v in series]}  # noqa: E731
    return {name: {"before": shift(before.get(name, [])), "after": shift(after.get(name, []))}
            for name in ORDER if name in before or name in after}
