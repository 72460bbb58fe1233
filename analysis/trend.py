"""Least-squares trend of a series: shared by runway, before/after reports and alert rules."""

from __future__ import annotations

import math
from collections.abc import Iterable


def slope_per_s(points: Iterable[tuple[float, float]]) -> float | None:
    """Least-squares slope in units per second of (epoch seconds, value) points;
    None with fewer than two points or when all points share one time."""
    pts = list(points)
    n = len(pts)
    if n < 2:
        return None
    mean_t = math.fsum(t for t, _ in pts) / n
    mean_v = math.fsum(v for _, v in pts) / n
    sxx = math.fsum((t - mean_t) ** 2 for t, _ in pts)
    if sxx <= 0:
        return None
    return math.fsum((t - mean_t) * (v - mean_v) for t, v in pts) / sxx
