"""Effect reports: query raw samples for the windows around a change (each window stops at the
neighbouring change, so it holds one change), derive rates with analysis.rates, judge them with
analysis.effect.judge_change (trend, mechanism, workload), and shape the result as JSON.

Gauges are used as stored; rates come from the stored cumulative counters. Disk w_s and wr_rt
are summed over the server's devices per sample time (pt-diskstats `--group-by sample`)."""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass

from analysis.effect import Report, Stats, judge_change, pages_flushed_per_redo_mb
from analysis.mechanisms import MECHANISMS, acts_on
from analysis.rates import counter_rates
from annotations.models import Annotation
from servers.changes import variables_at
from servers.models import Server, VariableChange
from timeseries.models import DiskSample, InnodbSample
from timeseries.thresholds import server_limits

GAUGES = ("checkpoint_age_bytes", "modified_age_bytes", "pages_dirty", "history_list_length", "threads_running")
# rate name -> stored cumulative counters, first non-empty wins
COUNTERS = {
    "pages_flushed_per_s": ("innodb_buffer_pool_pages_flushed", "pages_written"),
    "redo_bytes_per_s": ("innodb_os_log_written", "lsn"),
    "trx_per_s": ("trx_id_counter", "handler_commit"),
    "commits_per_s": ("com_commit",),
    "flush_adaptive_pages_per_s": ("flush_adaptive_pages",),
    "flush_background_pages_per_s": ("flush_background_pages",),
    "purge_undo_log_pages_per_s": ("purge_undo_log_pages",),
}
ROW_COUNTERS = ("rows_inserted", "rows_updated", "rows_deleted")
ORDER = GAUGES[:2] + ("pages_flushed_per_s", "pages_dirty", "history_list_length", "redo_bytes_per_s",
                      "trx_per_s", "rows_changed_per_s", "threads_running", "commits_per_s",
                      "pages_flushed_per_redo_mb", "flush_adaptive_pages_per_s", "flush_background_pages_per_s",
                      "purge_undo_log_pages_per_s", "disk_w_s", "disk_wr_rt_ms")
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
    cut_by: tuple[str, ...] = ()  # the neighbouring changes that shortened a window


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
    annotation ends at time_end) plus the settle period, for the same length. Each stops at the
    server's neighbouring change (a detected variable change or restart), so it holds one change."""
    if window <= dt.timedelta(0):
        raise EffectError("window must be longer than 0")
    end = annotation.time_end or annotation.time
    before = (annotation.time - window, annotation.time)
    after = (end + settle, end + settle + window)
    cut_by: list[str] = []
    if annotation.server_id:
        others = [a for a in Annotation.objects.filter(
            server_id=annotation.server_id, kind__in=CHANGE_KINDS, time__gt=before[0], time__lt=after[1])
            .exclude(pk=annotation.pk).exclude(time__gte=annotation.time, time__lte=end).order_by("time")
            if _interferes(annotation, a, cut_by)]
        previous = next((a for a in reversed(others) if a.time < annotation.time), None)
        following = next((a for a in others if a.time > end), None)
        if previous is not None:
            before = (previous.time, before[1])
            cut_by.append(f"before window starts at the previous change ({previous.time.isoformat()}: "
                          f"{previous.text.splitlines()[0][:80]})")
        if following is not None:
            after = (after[0], max(following.time, after[0]))
            cut_by.append(f"after window ends at the next change ({following.time.isoformat()}: "
                          f"{following.text.splitlines()[0][:80]})")
    return Windows(annotation.time, before, after, tuple(cut_by))


CHANGE_KINDS = (Annotation.Kind.VARIABLE_CHANGE, Annotation.Kind.RESTART)


def _variables_changed(annotation: Annotation) -> list[str]:
    return list(VariableChange.objects.filter(server_id=annotation.server_id, ts=annotation.time)
                .values_list("name", flat=True))


def _interferes(annotation: Annotation, other: Annotation, notes: list[str]) -> bool:
    """Whether `other` can move what `annotation`'s change acts on: a restart always; a variable
    change when either side's mechanism is unknown or they act on a metric in common. A change that
    cannot is noted, and the windows run across it."""
    if other.kind == Annotation.Kind.RESTART or annotation.kind != Annotation.Kind.VARIABLE_CHANGE:
        return True
    mine, theirs = acts_on(_variables_changed(annotation)), acts_on(_variables_changed(other))
    if mine is None or theirs is None or mine & theirs:
        return True
    notes.append(f"{other.text.splitlines()[0][:80]} at {other.time.isoformat()} acts on other metrics: "
                 f"the window runs across it")
    return False


def _epoch(ts: dt.datetime) -> float:
    return ts.timestamp()


def _innodb_series(server: Server, start: dt.datetime, end: dt.datetime) -> dict[str, Series]:
    columns = list(GAUGES) + sorted({c for cs in COUNTERS.values() for c in cs} | set(ROW_COUNTERS))
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
    changed = [(_epoch(r["ts"]), sum(r[c] for c in ROW_COUNTERS)) for r in rows
               if all(r[c] is not None for c in ROW_COUNTERS)]
    out["rows_changed_per_s"] = [(r.ts, r.per_s) for r in counter_rates(changed, max_gap_s=max_gap)
                                 if r.per_s is not None]
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
                         "change_pct": m.change_pct, "p_value": m.p_value, "significant": m.significant,
                         "verdict": m.verdict, "expected": m.expected,
                         "change_vs_expected_pct": m.change_vs_expected_pct, "reason": m.reason,
                         "trend_per_h": m.trend_per_h}
    spiky = report.extra.get("pages_flushed_per_s")
    if spiky and "pages_flushed_per_s" in metrics:
        metrics["pages_flushed_per_s"]["spikiness"] = spiky
    hll = report.extra.get("history_list_length")
    if hll and "history_list_length" in metrics:
        metrics["history_list_length"]["slope_per_hour"] = {
            "before": hll["slope_per_hour_before"], "after": hll["slope_per_hour_after"]}
    return {"metrics": metrics, "summary": report.summary, "workload_changed": report.workload_changed,
            "workload": report.workload, "mechanism": report.mechanism}


def the_change(server: Server, at: dt.datetime) -> tuple[str | None, str | None, str | None]:
    """(variable, old, new) of the variable change recorded at `at`: one whose mechanism is known
    first, else the first by name; (None, None, None) when no variable changed then."""
    changes = list(VariableChange.objects.filter(server=server, ts=at).order_by("name"))
    if not changes:
        return None, None, None
    change = next((c for c in changes if c.name in MECHANISMS), changes[0])
    return change.name, change.old_value, change.new_value


def _context(server: Server, at: dt.datetime) -> dict[str, float]:
    """The server as it was just before the change: its thresholds come from the variables then in
    force and the last sample before the poll that saw the change (a redo log resize moves them)."""
    sample = InnodbSample.objects.filter(server=server, ts__lt=at).order_by("-ts").first()
    before = copy.copy(server)
    before.variables = variables_at(server, at - dt.timedelta(microseconds=1))
    limits = server_limits(before, sample)
    context = {}
    if limits.async_bytes:
        context["async_point_bytes"] = float(limits.async_bytes)
    if sample is not None and sample.pages_total:
        context["buffer_pool_pages"] = float(sample.pages_total)
    for key, name in (("io_capacity", "innodb_io_capacity"), ("max_purge_lag", "innodb_max_purge_lag"),
                      ("max_purge_lag_delay_us", "innodb_max_purge_lag_delay")):
        try:
            context[key] = float(before.variables[name])
        except (KeyError, ValueError):
            pass  # not on this version (innodb_max_purge_lag_delay: 5.6+), or not a number
    return context


def effect_report(server: Server, windows: Windows) -> tuple[dict, dict[str, Series], dict[str, Series], dict]:
    """The report (JSON body) for two windows of one server, the series behind it, and per metric
    what the before window predicted over the after window."""
    for label, (start, end) in (("before", windows.before), ("after", windows.after)):
        if start > end or (start == end and not windows.cut_by):
            raise EffectError(f"the {label} window must start before it ends")
    before = window_series(server, *windows.before)
    after = window_series(server, *windows.after)
    variable, old, new = the_change(server, windows.change)
    report = judge_change(before, after, change_at=_epoch(windows.change), variable=variable, old=old, new=new,
                          context=_context(server, windows.change))
    body = report_json(report)
    body["change"] = {"variable": variable, "old": old, "new": new}
    body["windows"] = {
        "change": windows.change.isoformat(),
        "before": [t.isoformat() for t in windows.before],
        "after": [t.isoformat() for t in windows.after],
        "cut_by": list(windows.cut_by),
    }
    if not before or not after:
        body["summary"] = f"no samples in the {'before' if not before else 'after'} window. " + body["summary"]
    body["server"] = server.pk
    expected = {name: list(m.counterfactual) for name, m in report.metrics.items() if m.counterfactual}
    return body, before, after, expected


def chart_traces(before: dict[str, Series], after: dict[str, Series], change: dt.datetime,
                 expected: dict[str, Series] | None = None) -> dict:
    """Per metric, both windows as x = seconds relative to the change (before < 0 < after), and
    what the before window predicted for the after window."""
    zero = _epoch(change)
    shift = lambda series: {"x": [round(t - zero, 3) for t, _ in series], "y": [v for _, v in series]}  # noqa: E731
    expected = expected or {}
    return {name: {"before": shift(before.get(name, [])), "after": shift(after.get(name, [])),
                   "expected": shift(expected.get(name, []))}
            for name in ORDER if name in before or name in after}
