"""pt-diskstats' metrics from /proc/diskstats samples, and its text output.

Definitions (percona-toolkit lib/Diskstats.pm; DESIGN.md §2 "Disk"), for one interval of Δt seconds
and the counter deltas Δ of a device (or of a group of devices, summed):

    rd_s    = Δreads / Δt                       wr_s, wr_avkb, ... the same with the write counters
    rd_avkb = Δsectors_read / 2 / Δreads        (KiB per read)
    rd_mb_s = Δsectors_read / 2 / 1024 / Δt
    rd_mrg  = 100 Δreads_merged / (Δreads + Δreads_merged)
    rd_cnc  = Δread_ms / 1000 / Δt / devices    (average reads in flight)
    rd_rt   = Δread_ms / (Δreads + Δreads_merged)
    busy    = 100 Δio_ms / (1000 Δt devices)
    in_prg  = in_progress of the later sample (a gauge; summed over a group)
    io_s    = rd_s + wr_s
    stime   = Δio_ms / n,  qtime = Δweighted_io_ms / (n + Δin_progress) - stime,  n = Δ(reads+writes+both merged)

Every ratio with a zero denominator is 0, as in pt-diskstats. Unlike pt-diskstats, a counter that
goes down (reboot, device re-created, 32-bit wrap) drops that device from that interval instead of
printing a negative or huge rate, and an interval of Δt <= 0 is skipped.

Groupings (`--group-by`): `all` = each device each interval; `disk` = each device over the whole
span (the first sample is the baseline); `sample` = all shown devices summed per interval.
Pure: any objects with the attributes of `collectors.parsers.diskstats` records will do.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal, Protocol

GroupBy = Literal["all", "disk", "sample"]
GROUPINGS: tuple[GroupBy, ...] = ("all", "disk", "sample")

# The cumulative counters pt-diskstats uses, in /proc/diskstats order (in_progress is a gauge).
COUNTERS = (
    "reads", "reads_merged", "sectors_read", "read_ms",
    "writes", "writes_merged", "sectors_written", "write_ms",
    "io_ms", "weighted_io_ms",
)  # fmt: skip
_MIN_FULL_FIELDS = 14  # 7-field partition lines (2.6.0-2.6.24) have no time counters


class DiskCounters(Protocol):
    device: str
    reads: int
    reads_merged: int
    sectors_read: int
    read_ms: int
    writes: int
    writes_merged: int
    sectors_written: int
    write_ms: int
    in_progress: int
    io_ms: int
    weighted_io_ms: int
    field_count: int


class DiskSample(Protocol):
    @property
    def ts(self) -> float | None: ...
    @property
    def rows(self) -> Sequence[DiskCounters]: ...


@dataclass(frozen=True, slots=True)
class Delta:
    """Counter deltas of one device (or a sum of devices) over one span."""

    reads: int = 0
    reads_merged: int = 0
    sectors_read: int = 0
    read_ms: int = 0
    writes: int = 0
    writes_merged: int = 0
    sectors_written: int = 0
    write_ms: int = 0
    io_ms: int = 0
    weighted_io_ms: int = 0
    in_progress_change: int = 0  # Δin_progress: pt-diskstats' qtime uses it
    in_progress: float = 0  # the gauge at the end of the span (summed over a group)

    def __add__(self, other: Delta) -> Delta:
        return Delta(*(a + b for a, b in zip(_values(self), _values(other), strict=True)))


def _values(delta: Delta) -> tuple[float, ...]:
    return tuple(getattr(delta, name) for name in (*COUNTERS, "in_progress_change", "in_progress"))


@dataclass(frozen=True, slots=True)
class DiskstatsMetrics:
    """One printed pt-diskstats line: `device` is a name, or `{N}` for a group of N devices."""

    ts: float  # end of the span (epoch s)
    elapsed_s: float
    since_first_s: float  # ts minus the baseline sample's ts: pt-diskstats' #ts column
    device: str
    devices: int
    intervals: int
    rd_s: float
    rd_avkb: float
    rd_mb_s: float
    rd_mrg: float
    rd_cnc: float
    rd_rt: float
    wr_s: float
    wr_avkb: float
    wr_mb_s: float
    wr_mrg: float
    wr_cnc: float
    wr_rt: float
    busy: float
    in_prg: float
    io_s: float
    qtime: float
    stime: float


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def counter_delta(curr: DiskCounters, prev: DiskCounters) -> Delta | None:
    """Deltas between two readings of one device; None if a counter went down (reset)."""
    values = [getattr(curr, name) - getattr(prev, name) for name in COUNTERS]
    if any(v < 0 for v in values):
        return None
    return Delta(*values, curr.in_progress - prev.in_progress, curr.in_progress)


def metrics_for(delta: Delta, elapsed_s: float, devices: int = 1) -> dict[str, float]:
    """The 17 pt-diskstats columns for a delta over `elapsed_s` seconds, shared by `devices` devices."""
    rd = _direction(delta.reads, delta.reads_merged, delta.sectors_read, delta.read_ms, elapsed_s, devices)
    wr = _direction(delta.writes, delta.writes_merged, delta.sectors_written, delta.write_ms, elapsed_s, devices)
    requests = delta.reads + delta.writes + delta.reads_merged + delta.writes_merged
    stime = _ratio(delta.io_ms, requests)
    # pt-diskstats divides by requests + Δin_progress (not the queue itself): kept for equal output.
    qtime = _ratio(delta.weighted_io_ms, requests + delta.in_progress_change) - stime if requests else 0.0
    return {
        **{f"rd_{k}": v for k, v in rd.items()},
        **{f"wr_{k}": v for k, v in wr.items()},
        "busy": _ratio(100 * delta.io_ms, 1000 * elapsed_s * devices),
        "in_prg": delta.in_progress,
        "io_s": rd["s"] + wr["s"],
        "qtime": qtime,
        "stime": stime,
    }


def _direction(ios: int, merged: int, sectors: int, ms: int, elapsed_s: float, devices: int) -> dict[str, float]:
    kib = sectors / 2
    requests = ios + merged
    return {
        "s": _ratio(ios, elapsed_s),
        "avkb": _ratio(kib, ios),
        "mb_s": _ratio(kib / 1024, elapsed_s),
        "mrg": _ratio(100 * merged, requests),
        "cnc": _ratio(ms / 1000, elapsed_s) / devices,
        "rt": _ratio(ms, requests),
    }


# --- walking the samples ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Interval:
    ts: float
    elapsed_s: float
    deltas: dict[str, Delta]  # device -> delta, in first-seen device order


def _intervals(
    samples: Sequence[DiskSample], device_regex: str | None, show_inactive: bool
) -> tuple[float, list[_Interval]]:
    """The baseline ts and, per later sample, the deltas of the devices shown in it."""
    timed = [s for s in samples if s.ts is not None]
    if len(timed) != len(samples):
        raise ValueError("every sample needs a timestamp (TS line, or an interval given by the caller)")
    if not timed:
        return 0.0, []
    pattern = re.compile(device_regex) if device_regex else None
    active: set[str] = set()
    prev, prev_ts = _by_device(timed[0], pattern), float(timed[0].ts)  # type: ignore[arg-type]
    intervals: list[_Interval] = []
    for sample in timed[1:]:
        curr, ts = _by_device(sample, pattern), float(sample.ts)  # type: ignore[arg-type]
        deltas: dict[str, Delta] = {}
        for device, row in curr.items():
            before = prev.get(device)
            delta = counter_delta(row, before) if before is not None else None
            if delta is None:
                continue
            if _moved(delta, row, before):
                active.add(device)  # pt-diskstats: once a device moves it stays shown
            if show_inactive or device in active:
                deltas[device] = delta
        if ts > prev_ts:
            intervals.append(_Interval(ts, ts - prev_ts, deltas))
        prev, prev_ts = curr, ts
    return float(timed[0].ts), intervals  # type: ignore[arg-type]


def _moved(delta: Delta, curr: DiskCounters, prev: DiskCounters | None) -> bool:
    return any(_values(delta)[:-1]) or prev is None


def _by_device(sample: DiskSample, pattern: re.Pattern[str] | None) -> dict[str, DiskCounters]:
    return {
        row.device: row
        for row in sample.rows
        if row.field_count >= _MIN_FULL_FIELDS and (pattern is None or pattern.search(row.device))
    }


def diskstats_metrics(
    samples: Sequence[DiskSample],
    group_by: GroupBy = "all",
    *,
    device_regex: str | None = None,
    show_inactive: bool = True,
) -> list[DiskstatsMetrics]:
    """pt-diskstats' lines for `samples` (the first one is the baseline), grouped as `group_by`."""
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {GROUPINGS}, not {group_by!r}")
    first_ts, intervals = _intervals(samples, device_regex, show_inactive)
    if group_by == "all":
        return [_line(i.ts, i.elapsed_s, first_ts, dev, 1, 1, d) for i in intervals for dev, d in i.deltas.items()]
    if group_by == "sample":
        return [_sample_line(i, first_ts) for i in intervals if i.deltas]
    return _disk_lines(intervals, first_ts)


def _line(
    ts: float, elapsed: float, first_ts: float, device: str, devices: int, intervals: int, delta: Delta
) -> DiskstatsMetrics:
    values = metrics_for(delta, elapsed, devices)
    return DiskstatsMetrics(ts, elapsed, ts - first_ts, device, devices, intervals, **values)


def _sample_line(interval: _Interval, first_ts: float) -> DiskstatsMetrics:
    total = sum(interval.deltas.values(), Delta())
    # pt-diskstats' sample grouping puts the summed queue (not its change) in qtime's divisor.
    total = dataclasses.replace(total, in_progress_change=int(total.in_progress))
    count = len(interval.deltas)
    label = f"{{{count}}}" if count > 1 else next(iter(interval.deltas))
    return _line(interval.ts, interval.elapsed_s, first_ts, label, count, 1, total)


def _disk_lines(intervals: list[_Interval], first_ts: float) -> list[DiskstatsMetrics]:
    # Summing per-interval deltas equals last-minus-first when no counter reset, and skips resets.
    totals: dict[str, Delta] = {}
    elapsed: dict[str, float] = {}
    in_progress: dict[str, list[int | float]] = {}
    for interval in intervals:
        for device, delta in interval.deltas.items():
            totals[device] = totals.get(device, Delta()) + Delta(*_values(delta)[:-1])
            elapsed[device] = elapsed.get(device, 0.0) + interval.elapsed_s
            in_progress.setdefault(device, []).append(delta.in_progress)
    if not intervals:
        return []
    last_ts = intervals[-1].ts
    lines = []
    for device, total in totals.items():
        # in_prg over a span: the mean queue depth seen at the samples (pt-diskstats prints 0 here).
        mean_in_progress = sum(in_progress[device]) / len(in_progress[device])
        with_gauge = Delta(*_values(total)[:-1], in_progress=mean_in_progress)
        lines.append(_line(last_ts, elapsed[device], first_ts, device, 1, len(intervals), with_gauge))
    return lines


# --- pt-diskstats' text ---------------------------------------------------------------------------

# (header as pt-diskstats prints it, printf format, metric)
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("   rd_s", "%7.1f", "rd_s"),
    ("rd_avkb", "%7.1f", "rd_avkb"),
    ("rd_mb_s", "%7.1f", "rd_mb_s"),
    ("rd_mrg", "%5.0f%%", "rd_mrg"),
    ("rd_cnc", "%6.1f", "rd_cnc"),
    ("  rd_rt", "%7.1f", "rd_rt"),
    ("   wr_s", "%7.1f", "wr_s"),
    ("wr_avkb", "%7.1f", "wr_avkb"),
    ("wr_mb_s", "%7.1f", "wr_mb_s"),
    ("wr_mrg", "%5.0f%%", "wr_mrg"),
    ("wr_cnc", "%6.1f", "wr_cnc"),
    ("  wr_rt", "%7.1f", "wr_rt"),
    ("busy", "%3.0f%%", "busy"),
    ("in_prg", "%6d", "in_prg"),
    ("   io_s", "%7.1f", "io_s"),
    (" qtime", "%6.1f", "qtime"),
    ("stime", "%5.1f", "stime"),
)


def format_pt_diskstats(
    rows: Sequence[DiskstatsMetrics],
    group_by: GroupBy = "all",
    *,
    columns_regex: str = ".",
    header: Literal["once", "each_sample", "none"] = "once",
) -> str:
    """pt-diskstats' text for `rows`: `#ts device` then the columns whose header matches `columns_regex`.

    `header="each_sample"` repeats the header before each sample, as interactive pt-diskstats does.
    """
    columns = [c for c in COLUMNS if re.search(columns_regex, c[0])]
    width = max([6, *(len(r.device) for r in rows)])
    head = f"{'#ts':>5} {'device':<{width}} " + " ".join(c[0] for c in columns)
    lines: list[str] = [head] if header == "once" and rows else []
    previous_ts: float | None = None
    for row in rows:
        if header == "each_sample" and (previous_ts != row.ts or not lines):
            lines.append(head)
        previous_ts = row.ts
        lines.append(_format_row(row, group_by, width, columns))
    return "".join(line + "\n" for line in lines)


def _format_row(row: DiskstatsMetrics, group_by: GroupBy, width: int, columns: Iterable[tuple[str, str, str]]) -> str:
    label = f"{{{row.intervals}}}" if group_by == "disk" else "%5.1f" % row.since_first_s
    values = " ".join(fmt % _printable(getattr(row, name), fmt) for _, fmt, name in columns)
    return f"{label:>5} {row.device:<{width}} {values}"


def _printable(value: float, fmt: str) -> float | int:
    return int(value) if fmt.endswith("d") else value  # Perl's %d truncates a float


def metrics_to_dicts(rows: Iterable[DiskstatsMetrics]) -> list[dict[str, object]]:
    """JSON-ready rows: ts, device, then the 17 metrics in pt-diskstats' column order."""
    keep = ("ts", "device", *(name for _, _, name in COLUMNS))
    return [{k: v for k, v in asdict(row).items() if k in keep} for row in rows]
