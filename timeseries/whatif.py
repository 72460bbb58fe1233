"""What-if: a stored range of one server replayed through its page cleaner (analysis.whatif),
with the variables in force and with overrides, next to what was measured; and redo sizing.

The workload (new dirty pages per byte of redo against dirty pages) is fitted on the range itself
with the variables that were in force; the same replay with those variables is the "replayed"
series, and its error against the measured checkpoint age (mean, p95) is reported with every
prediction: a large error says not to trust the override.
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np

from analysis import checkpoint, redo_sizing
from analysis.page_cleaner import FlushSettings
from analysis.whatif import Measured, Replay, Workload, calibrate, fit, replay
from servers.changes import variables_at
from timeseries.models import InnodbSample

# What an override may name, and how its value is read.
OVERRIDABLE = {
    "innodb_io_capacity": int, "innodb_io_capacity_max": int, "innodb_adaptive_flushing": "bool",
    "innodb_adaptive_flushing_lwm": float, "innodb_max_dirty_pages_pct": float,
    "innodb_max_dirty_pages_pct_lwm": float, "innodb_flushing_avg_loops": int,
    "innodb_log_file_size": int, "innodb_redo_log_capacity": int, "innodb_log_files_in_group": int,
    "innodb_cleaner_lsn_age_factor": str,
}
_SIZE_VARS = {"innodb_log_file_size", "innodb_redo_log_capacity", "innodb_log_files_in_group"}
MAX_SAMPLES = 200_000
MIN_SAMPLES = 10


class WhatIfError(ValueError):
    """Bad input or too little history: a 400 with this message."""


def normalise_overrides(raw: dict) -> dict[str, str]:
    """Overrides as the server would print them; unknown names and bad values are errors."""
    if not isinstance(raw, dict):
        raise WhatIfError("overrides must be an object {variable: value}")
    out = {}
    for name, value in raw.items():
        key = str(name).strip().lower()
        kind = OVERRIDABLE.get(key)
        if kind is None:
            raise WhatIfError(f"{name!r} cannot be overridden; known: {', '.join(sorted(OVERRIDABLE))}")
        out[key] = _normalise(key, kind, value)
    return out


def _normalise(name: str, kind, value) -> str:
    text = str(value).strip()
    if kind == "bool":
        if text.upper() in ("ON", "1", "TRUE", "YES"):
            return "ON"
        if text.upper() in ("OFF", "0", "FALSE", "NO"):
            return "OFF"
        raise WhatIfError(f"{name} must be ON or OFF, not {value!r}")
    if kind is str:
        if text.lower() not in ("legacy", "high_checkpoint"):
            raise WhatIfError(f"{name} must be LEGACY or HIGH_CHECKPOINT")
        return text.upper()
    try:
        number = kind(float(text)) if kind is int else kind(text)
    except (TypeError, ValueError):
        raise WhatIfError(f"{name} must be a number, not {value!r}") from None
    if not math.isfinite(number) or number < 0 or (kind is int and number == 0 and name != "innodb_flushing_avg_loops"):
        raise WhatIfError(f"{name} must be a positive number")
    return str(number)


def measured(server, start: dt.datetime, end: dt.datetime) -> tuple[Measured, dict, list[str]]:
    """Samples of [start, end] with the LOG and buffer-pool figures the replay needs. Rows with a
    figure missing are skipped; a restart (LSN went back) keeps only the part after it."""
    rows = list(InnodbSample.objects.filter(server=server, ts__gte=start, ts__lte=end).order_by("ts")
                .values_list("ts", "lsn", "checkpoint_age_bytes", "pages_dirty", "innodb_buffer_pool_pages_flushed",
                             "pages_total", "status_checkpoint_max_age", "flush_adaptive_pages",
                             "flush_background_pages", "flush_sync_pages")[:MAX_SAMPLES])
    warnings = []
    if len(rows) == MAX_SAMPLES:
        warnings.append(f"only the first {MAX_SAMPLES} samples of the range are replayed")
    usable = [r for r in rows if None not in r[1:5]]
    if len(usable) < len(rows):
        warnings.append(f"{len(rows) - len(usable)} samples without LSN, checkpoint, dirty or flushed pages skipped")
    restarts = [i for i in range(1, len(usable)) if usable[i][1] < usable[i - 1][1] or usable[i][4] < usable[i - 1][4]]
    if restarts:
        warnings.append(f"the server restarted at {usable[restarts[-1]][0].isoformat()}: only the range after it is replayed")
        usable = usable[restarts[-1]:]
    if len(usable) < MIN_SAMPLES:
        raise WhatIfError(f"{len(usable)} usable samples in the range; at least {MIN_SAMPLES} are needed")
    cols = list(zip(*usable, strict=True))
    arr = [np.array(c, dtype=float) for c in cols[1:5]]
    m = Measured(np.array([t.timestamp() for t in cols[0]]), arr[0], arr[1], arr[2], arr[3])
    extra = {"pool_pages": max((v for v in cols[5] if v), default=None),
             # the log in force at the start (variables_at(start)); a resize inside the range is not replayed
             "status_max": next((v for v in cols[6] if v), None),
             "by_path": {p: _rates(m.t_s, cols[7 + i]) for i, p in enumerate(("adaptive", "background", "sync"))}}
    return m, extra, warnings


def _rates(t_s: np.ndarray, counter) -> list[float | None] | None:
    """Per-poll rate of an INNODB_METRICS counter (None where it was not read)."""
    if all(v is None for v in counter):
        return None
    out: list[float | None] = [None]
    for i in range(1, len(t_s)):
        a, b, dt_s = counter[i - 1], counter[i], t_s[i] - t_s[i - 1]
        out.append(None if a is None or b is None or dt_s <= 0 or b < a else (b - a) / dt_s)
    return out


def _family(flavor: str, version: str) -> str:
    ver = checkpoint.parse_version(version)
    if flavor == "mariadb":
        if ver < (10, 5, 0):
            return "mysql57"  # MariaDB <= 10.4 still ran the MySQL 5.6/5.7 page cleaner
        return "mariadb"
    return "mysql8" if ver >= (8, 0, 0) else "mysql57"


def flush_settings(server, variables: dict[str, str], pool_pages: int, status_max: int | None) -> FlushSettings:
    """The page cleaner's settings from SHOW GLOBAL VARIABLES (lower-case names)."""
    flavor = server.flavor if server.flavor in ("mysql", "percona", "mariadb") else checkpoint.detect_flavor(
        server.version or "", server.version_comment or "")
    version = server.version or ""
    try:
        family = _family(flavor, version)
    except ValueError:
        raise WhatIfError(f"unknown server version {version!r}: no page cleaner to model") from None
    capacity = checkpoint.redo_capacity_bytes(flavor, version, variables)
    limits = checkpoint.checkpoint_thresholds(
        flavor, version, capacity, status_checkpoint_max_age=status_max,
        log_files_in_group=_num(variables, "innodb_log_files_in_group", 2), page_size=_num(variables, "innodb_page_size", 16384))
    if limits is None:
        raise WhatIfError("the redo log size is not known (no innodb_log_file_size in the variables)")
    return FlushSettings(
        family=family, io_capacity=_num(variables, "innodb_io_capacity", 200),
        io_capacity_max=_num(variables, "innodb_io_capacity_max", 2000),
        adaptive_flushing=variables.get("innodb_adaptive_flushing", "ON").upper() in ("ON", "1"),
        async_bytes=limits.async_bytes, sync_bytes=limits.sync_bytes, max_bytes=limits.max_bytes,
        log_capacity_bytes=limits.log_capacity_bytes or capacity, pool_pages=pool_pages,
        adaptive_flushing_lwm_pct=_num(variables, "innodb_adaptive_flushing_lwm", 10.0, float),
        max_dirty_pages_pct=_num(variables, "innodb_max_dirty_pages_pct", 90.0, float),
        max_dirty_pages_pct_lwm=_num(variables, "innodb_max_dirty_pages_pct_lwm", 0.0, float),
        flushing_avg_loops=_num(variables, "innodb_flushing_avg_loops", 30),
        lsn_age_factor=variables.get("innodb_cleaner_lsn_age_factor", "LEGACY").lower(),
    )


def _num(variables: dict, name: str, default, kind=int):
    try:
        return kind(float(variables[name])) if kind is int else kind(variables[name])
    except (KeyError, ValueError, TypeError):
        return default


def _lower(variables: dict) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (variables or {}).items()}


def _series(r: Replay) -> dict:
    return {"checkpoint_age_bytes": r.age_bytes.round().tolist(), "pages_dirty": r.dirty_pages.round().tolist(),
            "flush_per_s": {p: v.round(1).tolist() for p, v in r.flush_per_s.items()},
            "stall": [bool(s) for s in r.stall], "crossings": r.crossings}


def _peak_pct(age: np.ndarray, async_bytes: int) -> float:
    return round(100.0 * float(age.max()) / async_bytes, 1)


def verdict(measured_pct: float, whatif_pct: float) -> str:
    """The answer in words, e.g. "would have stayed below async: peak 71 % instead of 104 %"."""
    if whatif_pct < 100 <= measured_pct:
        head = "would have stayed below async"
    elif whatif_pct >= 100 > measured_pct:
        head = "would have crossed the async point"
    elif whatif_pct >= 100:
        head = "would still have reached the async point"
    else:
        head = "stays below async either way"
    return f"{head}: peak {whatif_pct:.0f} % instead of {measured_pct:.0f} % of the async point"


def what_if(server, start: dt.datetime, end: dt.datetime, overrides: dict,
            calibrate_on: tuple[dt.datetime, dt.datetime] | None = None) -> dict:
    """Measured, replayed (variables in force) and what-if series over [start, end]; the workload
    is fitted on ``calibrate_on`` (e.g. the hour before a change) or on the range itself."""
    wanted = normalise_overrides(overrides)
    m, extra, warnings = measured(server, start, end)
    real = _lower(variables_at(server, start))
    if not real:
        raise WhatIfError("no SHOW GLOBAL VARIABLES stored for this server: nothing to replay with")
    pool = int(extra["pool_pages"] or 0) or int(max(m.dirty_pages.max() * 4, 1))
    base = flush_settings(server, real, pool, extra["status_max"])
    # A stated max checkpoint age belongs to the log in force, not to a resized one.
    status_max = None if _SIZE_VARS & wanted.keys() else extra["status_max"]
    other = flush_settings(server, {**real, **wanted}, pool, status_max)
    workload = calibrate(measured(server, *calibrate_on)[0] if calibrate_on else m)
    replayed, predicted = replay(m, base, workload), replay(m, other, workload)
    measured_pct, whatif_pct = _peak_pct(m.age_bytes, base.async_bytes), _peak_pct(predicted.age_bytes, other.async_bytes)
    return {
        "server": server.pk, "start": start.isoformat(), "end": end.isoformat(),
        "overrides": wanted, "in_force": {k: real.get(k) for k in wanted},
        "t": (m.t_s * 1000).round().astype(np.int64).tolist(),
        "measured": {"checkpoint_age_bytes": m.age_bytes.tolist(), "pages_dirty": m.dirty_pages.tolist(),
                     "flush_per_s": _measured_flush(m, extra["by_path"])},
        "replayed": _series(replayed), "what_if": _series(predicted),
        "thresholds": {"in_force": _points(base), "what_if": _points(other)},
        "fit": fit(m.age_bytes, replayed.age_bytes),
        "workload": {"pages_per_redo_byte": workload.pages_per_byte,
                     "hot_pages": None if math.isinf(workload.hot_pages) else workload.hot_pages},
        "peak_pct_of_async": {"measured": measured_pct, "replayed": _peak_pct(replayed.age_bytes, base.async_bytes),
                              "what_if": whatif_pct},
        "verdict": verdict(measured_pct, whatif_pct) + _stall_note(predicted),
        "family": base.family, "warnings": warnings,
    }


def _stall_note(r: Replay) -> str:
    if not r.stall.any():
        return ""
    return f"; user threads would have waited for flushing in {int(r.stall.sum())} polls"


def _measured_flush(m: Measured, by_path: dict) -> dict:
    total = np.concatenate([[0.0], np.diff(m.flushed_pages) / np.maximum(np.diff(m.t_s), 1e-9)])
    return {"total": total.round(1).tolist(), **{p: v for p, v in by_path.items() if v is not None}}


def _points(s: FlushSettings) -> dict:
    return {"async_bytes": s.async_bytes, "sync_bytes": s.sync_bytes, "max_bytes": s.max_bytes,
            "adaptive_lwm_bytes": round(s.adaptive_lwm_bytes)}


def worst_hour(server, end: dt.datetime, days: int = 7) -> tuple[dt.datetime, dt.datetime] | None:
    """The hour of the last ``days`` with the highest checkpoint age (default what-if range)."""
    row = (InnodbSample.objects.filter(server=server, ts__gte=end - dt.timedelta(days=days), ts__lte=end,
                                       checkpoint_age_bytes__isnull=False)
           .order_by("-checkpoint_age_bytes", "-ts").values_list("ts", flat=True).first())
    if row is None:
        return None
    first = InnodbSample.objects.filter(server=server, ts__gte=end - dt.timedelta(days=days)).order_by("ts").first()
    start = max(row - dt.timedelta(minutes=30), first.ts)
    return start, min(start + dt.timedelta(hours=1), end)


def redo_advice(server, start: dt.datetime, end: dt.datetime) -> dict:
    """Minutes of the busiest hour the log holds; the smallest size that keeps that hour's peak
    below the async point with the current flushing settings (by replay); how to resize."""
    m, extra, warnings = measured(server, start, end)
    busiest = redo_sizing.busiest_hour(m.t_s, m.lsn)
    real = _lower(variables_at(server, end))
    flavor = server.flavor or checkpoint.detect_flavor(server.version or "")
    capacity = checkpoint.redo_capacity_bytes(flavor, server.version or "", real)
    if busiest is None or not capacity:
        raise WhatIfError("not enough history or no redo log size known")
    hour = (m.t_s >= busiest[0]) & (m.t_s <= busiest[0] + 3600)
    window = Measured(*(a[hour] for a in (m.t_s, m.lsn, m.age_bytes, m.dirty_pages, m.flushed_pages)))
    workload: Workload = calibrate(window)
    pool = int(extra["pool_pages"] or 0) or int(max(window.dirty_pages.max() * 4, 1))
    size_var = "innodb_redo_log_capacity" if "innodb_redo_log_capacity" in real else "innodb_log_file_size"
    files = _num(real, "innodb_log_files_in_group", 1) if size_var == "innodb_log_file_size" and flavor != "mariadb" else 1

    def peak_ratio(size: int) -> float:
        s = flush_settings(server, {**real, size_var: str(size // files)}, pool, None)
        return float(replay(window, s, workload).age_bytes.max()) / s.async_bytes

    smallest = redo_sizing.smallest_capacity(peak_ratio, capacity)
    return {"busiest_hour_start": dt.datetime.fromtimestamp(busiest[0], dt.UTC).isoformat(),
            "busiest_hour_redo_bytes_per_s": round(busiest[1]), "capacity_bytes": capacity,
            "minutes_held": redo_sizing.minutes_held(capacity, busiest[1]),
            "smallest_capacity_below_async_bytes": smallest,
            "resize": redo_sizing.resize_rule(flavor, server.version or ""), "warnings": warnings}
