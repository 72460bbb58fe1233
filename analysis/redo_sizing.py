"""Redo log sizing from a server's own history: how long the log holds the busiest hour's writes,
and the smallest size that would have kept that hour's peak below the async point (by replay)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from analysis.checkpoint import parse_version

MIB = 1 << 20


def minutes_held(capacity_bytes: int, redo_bytes_per_s: float) -> float | None:
    """Minutes of writes at ``redo_bytes_per_s`` that fill the log (None: no writes)."""
    if redo_bytes_per_s <= 0:
        return None
    return capacity_bytes / redo_bytes_per_s / 60.0


def busiest_hour(t_s: np.ndarray, lsn: np.ndarray) -> tuple[float, float] | None:
    """(start epoch s, redo bytes/s) of the hour-long window with the most redo written."""
    if len(t_s) < 2:
        return None
    ends = np.searchsorted(t_s, t_s + 3600, side="right") - 1
    written = lsn[ends] - lsn
    span = np.maximum(t_s[ends] - t_s, 1.0)
    best = int(np.argmax(written))
    return float(t_s[best]), float(max(written[best], 0.0) / span[best])


def smallest_capacity(peak_ratio: Callable[[int], float], current_bytes: int,
                      step_bytes: int = 16 * MIB, limit_bytes: int = 512 * 1024 * MIB) -> int | None:
    """The smallest multiple of ``step_bytes`` whose replayed peak age stays below the async point
    (``peak_ratio(capacity)`` < 1): doubling from the current size, then bisection. None when even
    ``limit_bytes`` would not do."""
    low, high = 0, max(current_bytes, step_bytes)
    while peak_ratio(high) >= 1.0:
        low, high = high, high * 2
        if high > limit_bytes:
            return None
    while high - low > step_bytes:
        mid = (low + high) // 2 // step_bytes * step_bytes
        if mid <= low:
            break
        if peak_ratio(mid) < 1.0:
            high = mid
        else:
            low = mid
    return high


def resize_rule(flavor: str, version: str) -> str:
    """How this version changes its redo size."""
    try:
        ver = parse_version(version)
    except ValueError:
        return "unknown version: see the server's manual"
    if flavor == "mariadb":
        if ver >= (10, 11, 0):
            return "dynamic: SET GLOBAL innodb_log_file_size (MariaDB 10.11+), no restart"
        if ver >= (10, 5, 0):
            return "restart: innodb_log_file_size in the config file (one file since 10.5)"
        return "restart: innodb_log_file_size × innodb_log_files_in_group in the config file"
    if ver >= (8, 0, 30):
        return "dynamic: SET GLOBAL innodb_redo_log_capacity (MySQL 8.0.30+), no restart"
    return "restart: innodb_log_file_size × innodb_log_files_in_group in the config file"
