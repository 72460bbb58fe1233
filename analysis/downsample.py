"""Downsampling for charts: min/avg/max buckets of round widths, from raw points or rollups.

Buckets are aligned to multiples of their width in epoch seconds (so 1 d buckets start at UTC
midnight) and keep the max and min of every point in them: a 1-second spike survives on a
30-day chart. Rollup rows (1 m / 15 m / 1 h min, sum, max, count) merge into the same buckets with
exactly the same result as the raw points, as long as the bucket width is a multiple of the
rollup width and the range is aligned to the rollup width.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

ROUND_WIDTHS_S: tuple[int, ...] = (
    1,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    21600,
    43200,
    86400,
)
Resolution = Literal["raw", "1m", "15m", "1h"]
RESOLUTION_S: dict[Resolution, int] = {"raw": 0, "1m": 60, "15m": 900, "1h": 3600}


@dataclass(frozen=True, slots=True)
class Buckets:
    """Columnar buckets: ``t`` is each bucket's start (epoch seconds), ``width_s`` seconds."""

    width_s: int
    t: list[float]
    min: list[float]
    avg: list[float]
    max: list[float]
    count: list[int]


@dataclass(frozen=True, slots=True)
class RollupRow:
    """One pre-aggregated row: bucket start ``ts`` (epoch s) and min/sum/max/count of values."""

    ts: float
    min: float
    sum: float
    max: float
    count: int


def _bucket_count(start: float, end: float, width: int) -> int:
    return math.floor(end / width) - math.floor(start / width) + 1


def bucket_width_s(start: float, end: float, points: int, *, min_width_s: int = 1) -> int:
    """Smallest round width ≥ ``min_width_s`` whose aligned buckets over [start, end] are
    at most ``points``; past 1 d, whole multiples of a day."""
    points = max(points, 1)
    for width in ROUND_WIDTHS_S:
        if width >= min_width_s and _bucket_count(start, end, width) <= points:
            return width
    days = max(1, math.ceil((end - start) / 86400 / max(points - 1, 1)))
    while _bucket_count(start, end, days * 86400) > points:
        days += 1
    return days * 86400


class _Acc:
    """Accumulator for one bucket; sums with math.fsum-friendly partials for exactness."""

    __slots__ = ("hi", "lo", "n", "parts")

    def __init__(self) -> None:
        self.lo = math.inf
        self.hi = -math.inf
        self.parts: list[float] = []
        self.n = 0

    def add(self, lo: float, total: float, hi: float, n: int) -> None:
        self.lo = min(self.lo, lo)
        self.hi = max(self.hi, hi)
        self.parts.append(total)
        self.n += n


def _to_buckets(width: int, accs: dict[int, _Acc]) -> Buckets:
    keys = sorted(accs)
    out = Buckets(width, [], [], [], [], [])
    for key in keys:
        acc = accs[key]
        out.t.append(float(key * width))
        out.min.append(acc.lo)
        out.max.append(acc.hi)
        out.avg.append(math.fsum(acc.parts) / acc.n if acc.n else math.nan)
        out.count.append(acc.n)
    return out


def downsample(
    ts: Sequence[float],
    values: Sequence[float | None],
    *,
    start: float,
    end: float,
    points: int,
) -> Buckets:
    """At most ``points`` buckets over [start, end] (epoch seconds, inclusive).

    None values and points outside the range are ignored; empty buckets are omitted.
    """
    width = bucket_width_s(start, end, points)
    accs: dict[int, _Acc] = {}
    for t, v in zip(ts, values):
        if v is None or t < start or t > end or (isinstance(v, float) and math.isnan(v)):
            continue
        acc = accs.get(int(t // width))
        if acc is None:
            acc = accs[int(t // width)] = _Acc()
        acc.add(v, v, v, 1)
    return _to_buckets(width, accs)


def rollup(ts: Sequence[float], values: Sequence[float | None], width_s: int) -> list[RollupRow]:
    """Aggregate raw points into aligned (min, sum, max, count) rows of ``width_s`` seconds."""
    accs: dict[int, _Acc] = {}
    for t, v in zip(ts, values):
        if v is None:
            continue
        accs.setdefault(int(t // width_s), _Acc()).add(v, v, v, 1)
    return [
        RollupRow(float(k * width_s), a.lo, math.fsum(a.parts), a.hi, a.n)
        for k, a in sorted(accs.items())
    ]


def merge_rollup_buckets(
    rows: Iterable[RollupRow],
    *,
    start: float,
    end: float,
    points: int,
    rollup_width_s: int,
) -> Buckets:
    """Combine rollup rows into at most ``points`` coarser buckets, exactly.

    Rows whose bucket start lies in [start, end] are used. The bucket width is a round width
    at least ``rollup_width_s`` (all round widths ≥ 60 are multiples of 60, ≥ 900 of 900,
    ≥ 3600 of 3600),
    so each rollup row falls into exactly one output bucket: min of mins, max of maxes,
    Σsum / Σcount.
    """
    width = bucket_width_s(start, end, points, min_width_s=rollup_width_s)
    accs: dict[int, _Acc] = {}
    for row in rows:
        if row.count <= 0 or row.ts < start or row.ts > end:
            continue
        accs.setdefault(int(row.ts // width), _Acc()).add(row.min, row.sum, row.max, row.count)
    return _to_buckets(width, accs)


def choose_resolution(
    start: float, end: float, points: int, raw_interval_s: float | None = None
) -> Resolution:
    """Which stored resolution to read for a chart of ``points`` buckets over [start, end].

    Seconds per bucket = (end - start) / points: under 60 s (or under the raw sampling
    interval, when raw rows are already that sparse) read raw rows; under 3600 s the
    1-minute rollup; under 3600 s the 15-minute rollup; else the 1-hour rollup. Each choice
    still yields ≥ ``points`` rows. The 15-minute level exists for the 30-day chart (1728 s per
    bucket at 1500 points): 2,880 rows instead of 43,200 one-minute rows.
    """
    span = (end - start) / max(points, 1)
    if span < max(60.0, raw_interval_s or 0.0):
        return "raw"
    if span < 900:
        return "1m"
    if span < 3600:
        return "15m"
    return "1h"
