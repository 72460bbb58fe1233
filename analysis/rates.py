"""Per-second rates from cumulative counters sampled by the collector.

Rates are Δvalue/Δt between our own samples (never the server's "per second averages",
whose window any client can reset). A counter that goes down (server restart, FLUSH STATUS)
starts a new series: that interval is skipped, so there is neither a negative rate nor a spike.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rate:
    """Rate over the interval ending at ``ts`` (epoch seconds); ``per_s`` None = a break."""

    ts: float
    per_s: float | None


Sample = tuple[float, int | float | None]


def counter_rates(samples: Sequence[Sample], *, max_gap_s: float | None = None) -> list[Rate]:
    """Per-second rates between consecutive samples, stamped at the later sample.

    ``samples`` are (epoch seconds, cumulative value) ordered by time. A None value is missing
    data: the next rate is computed from the last known value unless the gap is too long.
    An interval longer than ``max_gap_s`` (callers pass 3 × poll interval) yields
    ``Rate(ts, None)`` so a chart does not draw a line across it; a zero or negative Δt is
    skipped (the sample is ignored); a negative Δvalue (restart) skips that interval and the
    series restarts from that sample.
    """
    out: list[Rate] = []
    prev: tuple[float, float] | None = None
    for ts, value in samples:
        if value is None:
            continue
        cur = (ts, float(value))
        if prev is not None:
            dt = cur[0] - prev[0]
            if dt <= 0:
                continue
            rate = _interval_rate(prev, cur, dt, max_gap_s)
            if rate is not None:
                out.append(rate)
        prev = cur
    return out


def _interval_rate(
    prev: tuple[float, float], cur: tuple[float, float], dt: float, max_gap_s: float | None
) -> Rate | None:
    """The rate for one interval; None when it must be skipped (counter went down)."""
    if max_gap_s is not None and dt > max_gap_s:
        return Rate(cur[0], None)
    delta = cur[1] - prev[1]
    if delta < 0:
        return None
    return Rate(cur[0], delta / dt)


def infer_interval_s(timestamps: Sequence[float]) -> float | None:
    """The sampling interval in seconds: median of positive Δt; None with < 2 samples."""
    deltas = [b - a for a, b in itertools.pairwise(timestamps) if b - a > 0]
    if not deltas:
        return None
    return float(statistics.median(deltas))


def gauge_series(
    samples: Sequence[tuple[float, float | None]], *, max_gap_s: float | None = None
) -> list[tuple[float, float | None]]:
    """A gauge (checkpoint age, HLL) with a None inserted where the gap exceeds ``max_gap_s``."""
    out: list[tuple[float, float | None]] = []
    last_ts: float | None = None
    for ts, value in samples:
        if value is None:
            continue
        if last_ts is not None and max_gap_s is not None and ts - last_ts > max_gap_s:
            out.append((ts, None))
        out.append((ts, float(value)))
        last_ts = ts
    return out
