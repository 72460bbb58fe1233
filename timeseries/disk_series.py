"""Read path of the disk metrics (`disk_*` in the series API): derived from raw DiskSample counters.

Each per-interval value comes from analysis.diskstats (`counter_delta` + `metrics_for`: the
pt-diskstats formulas, not repeated here). Several devices are summed the way pt-diskstats'
`--group-by sample` sums them (busy and concurrency averaged over the devices). A counter that
went down (reboot, device re-created) or a gap longer than 3 poll intervals gives no value, as
for the InnoDB rates. Values are bucketed into min/avg/max like timeseries.series.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

from django.db.models import Max, Min

from analysis.diskstats import counter_delta, metrics_for
from analysis.downsample import bucket_width_s
from timeseries.disk_ingest import COUNTER_COLUMNS
from timeseries.metrics import DISK_METRICS
from timeseries.models import DiskSample


def default_devices(server, start: dt.datetime, end: dt.datetime) -> list[str]:
    """The datadir/redo device(s); for a capture without roles, the busiest device of the range."""
    in_range = DiskSample.objects.filter(server=server, ts__gte=start, ts__lt=end)
    tagged = sorted(set(in_range.exclude(role="").values_list("device", flat=True)))
    if tagged:
        return tagged
    spans = in_range.values("device").annotate(lo=Min("io_ms"), hi=Max("io_ms"))
    busiest = max(spans, key=lambda s: ((s["hi"] or 0) - (s["lo"] or 0), s["device"]), default=None)
    return [busiest["device"]] if busiest else []


def disk_series_for(
    server, names: Sequence[str], start: dt.datetime, end: dt.datetime, points: int,
    devices: Sequence[str] | None = None,
) -> tuple[dict, list[str]]:
    """({metric: {"t", "min", "avg", "max"}}, devices used) for the `disk_*` metric names."""
    devices = list(devices) if devices else default_devices(server, start, end)
    values = interval_metrics(server, devices, start, end)
    width = bucket_width_s(start.timestamp(), end.timestamp(), points)
    return {name: _bucketed(values, DISK_METRICS[name].key, width) for name in names}, devices


def interval_metrics(
    server, devices: Sequence[str], start: dt.datetime, end: dt.datetime
) -> list[tuple[float, dict]]:
    """[(epoch s at the end of the interval, pt-diskstats metrics)] for intervals ending in [start, end)."""
    max_gap_s = 3 * server.poll_interval_s
    lookback = start - dt.timedelta(seconds=max_gap_s)
    rows = (DiskSample.objects.filter(server=server, device__in=devices, ts__gte=lookback, ts__lt=end)
            .order_by("ts").only("device", "ts", *COUNTER_COLUMNS))
    snapshots: dict[dt.datetime, dict[str, DiskSample]] = {}
    for row in rows:
        snapshots.setdefault(row.ts, {})[row.device] = row
    out = []
    previous: tuple[dt.datetime, dict[str, DiskSample]] | None = None
    for ts, by_device in snapshots.items():
        if previous is not None and ts >= start:
            value = _interval(previous[1], by_device, (ts - previous[0]).total_seconds(), max_gap_s)
            if value is not None:
                out.append((ts.timestamp(), value))
        previous = (ts, by_device)
    return out


def _interval(before: dict, after: dict, elapsed_s: float, max_gap_s: float) -> dict | None:
    if elapsed_s <= 0 or elapsed_s > max_gap_s:
        return None
    total, count = None, 0
    for device, row in after.items():
        prev = before.get(device)
        delta = counter_delta(row, prev) if prev is not None and _complete(row, prev) else None
        if delta is None:
            continue  # a reset or a device that appeared: no value rather than a spike
        total = delta if total is None else total + delta
        count += 1
    return metrics_for(total, elapsed_s, count) if total is not None else None


def _complete(*rows) -> bool:
    return all(getattr(r, c) is not None for r in rows for c in COUNTER_COLUMNS)


def _bucketed(values: list[tuple[float, dict]], key: str, width: int) -> dict:
    buckets: dict[int, list[float]] = {}
    for ts, metrics in values:
        buckets.setdefault(math.floor(ts / width) * width, []).append(metrics[key])
    series: dict[str, list] = {"t": [], "min": [], "avg": [], "max": []}
    for bucket, items in sorted(buckets.items()):
        series["t"].append(bucket * 1000)
        series["min"].append(_num(min(items)))
        series["avg"].append(_num(math.fsum(items) / len(items)))
        series["max"].append(_num(max(items)))
    return series


def _num(value: float):
    number = float(value)
    return int(number) if number.is_integer() else round(number, 3)
