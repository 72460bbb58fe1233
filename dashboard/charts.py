"""Chart specifications for the server page: which series, on which axis, against which of the
server's own limits. Pure: limits in, plain dicts out; static/js/charts.js draws them."""

from __future__ import annotations

from django.urls import reverse

from timeseries.metrics import METRICS
from timeseries.thresholds import ServerLimits

MiB = 1024 * 1024
# Colours: limits read from calm to alarming; the same everywhere.
LWM, ASYNC, SYNC, MAX = "#6e7781", "#bf8700", "#d1242f", "#82071e"


def _line(y, label: str, color: str, dash: str = "dash", axis: str = "y") -> dict:
    return {"y": y, "label": label, "color": color, "dash": dash, "axis": axis}


def _mb(value: int | None) -> float | None:
    return None if value is None else round(value / MiB, 3)


def checkpoint_chart(limits: ServerLimits) -> dict:
    """Ages with InnoDB's bands: past async the page cleaner flushes hard, past sync users stall."""
    lines, bands = [], []
    if limits.adaptive_lwm_bytes:
        lines.append(_line(_mb(limits.adaptive_lwm_bytes), "adaptive flushing lwm", LWM, "dot"))
    edges = [(limits.async_bytes, "async flush", ASYNC), (limits.sync_bytes, "sync flush (stall)", SYNC),
             (limits.max_bytes, "max checkpoint age", MAX)]
    known = [(v, label, color) for v, label, color in edges if v]
    for i, (value, label, color) in enumerate(known):
        lines.append(_line(_mb(value), label, color))
        upper = known[i + 1][0] if i + 1 < len(known) else value * 1.08
        bands.append({"y0": _mb(value), "y1": _mb(upper), "color": color, "label": label})
    return {
        "id": "chart-checkpoint", "title": "Checkpoint age and modified age", "y_title": "MB",
        "series": [
            {"metric": "checkpoint_age_bytes", "label": "checkpoint age", "scale": 1 / MiB},
            {"metric": "modified_age_bytes", "label": "modified age", "scale": 1 / MiB},
        ],
        "lines": lines, "bands": bands,
        "y_min_top": _mb(limits.max_bytes * 1.08) if limits.max_bytes else None,
    }


def flush_chart(limits: ServerLimits) -> dict:
    lines = []
    if limits.io_capacity:
        lines.append(_line(limits.io_capacity, "innodb_io_capacity", ASYNC))
    if limits.io_capacity_max:
        lines.append(_line(limits.io_capacity_max, "innodb_io_capacity_max", SYNC))
    by_type = [("flush_adaptive_per_s", "adaptive"), ("flush_lru_per_s", "LRU"),
               ("flush_background_per_s", "background"), ("flush_sync_per_s", "sync")]
    return {
        "id": "chart-flush", "title": "Pages flushed per second", "y_title": "pages/s",
        "series": [{"metric": "pages_flushed_per_s", "label": "pages flushed", "scale": 1}]
        + [{"metric": m, "label": label, "scale": 1, "optional": True} for m, label in by_type if m in METRICS],
        "lines": lines,
    }


def dirty_chart(limits: ServerLimits) -> dict:
    lines = []
    if limits.max_dirty_pages_pct is not None:
        lines.append(_line(limits.max_dirty_pages_pct, "innodb_max_dirty_pages_pct", SYNC, axis="y2"))
    if limits.max_dirty_pages_pct_lwm:
        lines.append(_line(limits.max_dirty_pages_pct_lwm, "max_dirty_pages_pct_lwm", LWM, "dot", axis="y2"))
    return {
        "id": "chart-dirty", "title": "Dirty pages", "y_title": "pages", "y2_title": "% of pool",
        "series": [{"metric": "pages_dirty", "label": "dirty pages", "scale": 1}],
        # dirty / (data + free): buf_get_modified_ratio_pct(), what max_dirty_pages_pct limits
        "derived": [{"name": "dirty_pct", "label": "dirty %", "axis": "y2",
                     "inputs": ["pages_dirty", "pages_data", "pages_free"]}],
        "lines": lines,
    }


def hll_chart(limits: ServerLimits) -> dict:
    lines = []
    if limits.max_purge_lag:
        lines.append(_line(limits.max_purge_lag, "innodb_max_purge_lag", SYNC))
    # Purge in one panel: the history list, what purge removes per second where INNODB_METRICS has
    # it, and bands for the sessions that held the oldest read view (charts.js, purge-blockers).
    return {"id": "chart-hll", "title": "Purge: history list length and throughput", "y_title": "undo log units",
            "y2_title": "undo pages/s",
            "series": [{"metric": "history_list_length", "label": "history list length", "scale": 1},
                       {"metric": "purge_undo_log_pages_per_s", "label": "purged undo pages/s", "scale": 1,
                        "axis": "y2", "optional": True}],
            "lines": lines, "blocker_bands": True}


def purge_lag_chart() -> dict:
    """How fast purge falls behind: the history list's growth (least squares over 10 minutes, what
    hll-growing alerts on) and the distance in transaction ids from the trx id counter to what purge
    has finished, which every version prints, INNODB_METRICS or not."""
    return {"id": "chart-purge-lag", "title": "Purge lag: history list growth and transactions behind",
            "y_title": "undo logs/h", "y2_title": "trx ids",
            "series": [{"metric": "hll_growth_per_h", "label": "history list growth /h (10-min fit)", "scale": 1},
                       {"metric": "purge_lag_trx_ids", "label": "trx ids not yet purged", "scale": 1,
                        "axis": "y2", "optional": True}],
            "lines": [_line(0, "no growth", LWM, "dot")], "blocker_bands": True}


def purge_settings_chart() -> dict:
    """What purge was allowed to do, as steps from the variable history (a change is a step at
    the poll that saw it), with the DML delay settings in force at the end of the range."""
    return {"id": "chart-purge-settings", "title": "Purge settings and DML delay",
            "y_title": "purge threads · DML delay (ms)", "y2_title": "batch size (undo log pages)",
            # The delay InnoDB puts on each row change for purge lag, where INNODB_METRICS has it on.
            "series": [{"metric": "purge_dml_delay_usec", "label": "DML delay per row change (ms)", "scale": 0.001,
                        "optional": True}],
            "variable_steps": [{"name": "innodb_purge_threads", "label": "innodb_purge_threads", "axis": "y"},
                               {"name": "innodb_purge_batch_size", "label": "innodb_purge_batch_size",
                                "axis": "y2"}],
            "variable_notes": ["innodb_max_purge_lag", "innodb_max_purge_lag_delay"]}


def simple_charts() -> list[dict]:
    return [
        {"id": "chart-semaphores", "title": "Semaphore waits", "y_title": "threads", "y2_title": "s",
         "series": [{"metric": "semaphore_waits", "label": "waiting threads", "scale": 1},
                    {"metric": "semaphore_longest_wait_s", "label": "longest wait (s)", "scale": 1, "axis": "y2"}]},
        {"id": "chart-trx", "title": "Transactions", "y_title": "transactions", "y2_title": "s",
         "series": [{"metric": "trx_active", "label": "active", "scale": 1},
                    {"metric": "lock_waits", "label": "in lock wait", "scale": 1},
                    {"metric": "trx_oldest_active_s", "label": "oldest active (s)", "scale": 1, "axis": "y2"}]},
        # Transactions from the trx id counter, which autocommit work moves too; COMMIT statements
        # (Com_commit) beside it, since they alone read 0 on an autocommit load.
        {"id": "chart-commits", "title": "Transactions per second", "y_title": "trx/s",
         "series": [{"metric": "trx_per_s", "label": "transactions/s", "scale": 1},
                    {"metric": "commits_per_s", "label": "COMMIT statements/s", "scale": 1}]},
    ]


def disk_chart() -> dict | None:
    """Disk under the datadir / redo log (the disk_* series); None if not served."""
    try:
        from timeseries.metrics import DISK_METRICS
    except ImportError:
        return None
    left = [("disk_r_s", "reads/s"), ("disk_w_s", "writes/s"), ("disk_wr_rt_ms", "wr_rt (ms)")]
    series = [{"metric": m, "label": label, "scale": 1, "optional": True} for m, label in left if m in DISK_METRICS]
    if "disk_busy_pct" in DISK_METRICS:
        series.append({"metric": "disk_busy_pct", "label": "busy %", "scale": 1, "axis": "y2", "optional": True})
    if not series:
        return None
    return {"id": "chart-disk", "title": "Disk (datadir and redo devices)", "y_title": "/s, ms",
            "y2_title": "busy %", "series": series, "separate_fetch": True}


def server_charts(limits: ServerLimits, has_disk: bool = False) -> list[dict]:
    redo = {"id": "chart-redo", "title": "Redo written, and runway to the stall point", "y_title": "MB/s",
            "y2_title": "runway (min)",
            "series": [{"metric": "redo_bytes_per_s", "label": "redo MB/s", "scale": 1 / MiB}],
            # minutes until checkpoint age reaches the sync point (10.5+: max age) at its growth
            "derived": [{"name": "runway_min", "label": "runway (min, ≤ 4 h)", "axis": "y2",
                         "inputs": ["checkpoint_age_bytes"]}]}
    charts = [checkpoint_chart(limits), redo, flush_chart(limits), dirty_chart(limits), hll_chart(limits),
              purge_lag_chart(), purge_settings_chart()]
    charts += simple_charts()
    disk = disk_chart() if has_disk else None
    if disk is not None:
        charts.append(disk)
    return charts


def page_config(server, limits: ServerLimits, has_disk_rows: bool = False) -> dict:
    """Everything charts.js needs, as JSON for json_script (never inlined as markup)."""
    charts = server_charts(limits, has_disk_rows)
    names = {s["metric"] for c in charts for s in c["series"]}
    names |= {n for c in charts for d in c.get("derived", []) for n in d["inputs"]}
    return {
        "server_id": server.pk,
        "series_url": reverse("api-server-series-series", args=[server.pk]),
        "latches_url": reverse("api-server-series-latches", args=[server.pk]),
        "blockers_url": reverse("api-server-series-purge-blockers", args=[server.pk]),
        "steps_url": reverse("api-server-series-variable-steps", args=[server.pk]),
        "raw_url": reverse("raw", args=[server.pk]),
        "annotations_url": "/api/v1/annotations",
        "poll_interval_s": server.poll_interval_s,
        "limits": limits.as_dict(),
        "charts": charts,
        "kinds": {n: METRICS[n].kind for n in sorted(names) if n in METRICS},
        "has_disk": any(c["id"] == "chart-disk" for c in charts),
    }
