"""The metrics the series API serves: stored gauges, and rates derived from stored counters."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    name: str
    column: str
    kind: str  # "gauge": as stored; "rate": per-second rate of a counter; "slope": rolling least squares
    unit: str
    label: str
    scale: float = 1.0  # applied to the rate or slope (e.g. per second -> per hour: 3600)
    minus: str | None = None  # a gauge that is `column` minus this column of the same sample
    window_s: int = 0  # "slope": the trailing window the least-squares line is fitted over


# The history list's growth: least squares over the trailing 10 minutes (the hll-growing alert's too).
HLL_SLOPE_WINDOW_S = 600


_METRICS = [
    Metric("checkpoint_age_bytes", "checkpoint_age_bytes", "gauge", "bytes", "Checkpoint age"),
    Metric("modified_age_bytes", "modified_age_bytes", "gauge", "bytes", "Modified age"),
    Metric("history_list_length", "history_list_length", "gauge", "undo logs", "History list length"),
    Metric("pages_dirty", "pages_dirty", "gauge", "pages", "Dirty pages"),
    Metric("pages_data", "pages_data", "gauge", "pages", "Data pages"),
    Metric("pages_free", "pages_free", "gauge", "pages", "Free pages"),
    Metric("pages_total", "pages_total", "gauge", "pages", "Buffer pool pages"),
    Metric("trx_active", "trx_active", "gauge", "transactions", "Active transactions"),
    Metric("trx_oldest_active_s", "trx_oldest_active_s", "gauge", "s", "Oldest active transaction"),
    Metric("lock_waits", "lock_waits", "gauge", "transactions", "Transactions in lock wait"),
    Metric("semaphore_waits", "semaphore_waits", "gauge", "threads", "Threads waiting on latches"),
    Metric("semaphore_longest_wait_s", "semaphore_longest_wait_s", "gauge", "s", "Longest latch wait"),
    Metric("threads_running", "threads_running", "gauge", "threads", "Threads running"),
    Metric("status_checkpoint_age", "status_checkpoint_age", "gauge", "bytes", "Innodb_checkpoint_age"),
    Metric("pages_flushed_per_s", "innodb_buffer_pool_pages_flushed", "rate", "pages/s", "Pages flushed"),
    Metric("pages_written_per_s", "pages_written", "rate", "pages/s", "Pages written"),
    Metric("redo_bytes_per_s", "lsn", "rate", "bytes/s", "Redo written"),
    Metric("commits_per_s", "com_commit", "rate", "/s", "Commits"),
    # Every read-write transaction takes an id, autocommit ones included: the workload's real
    # transaction rate (Com_commit counts COMMIT statements only, ~0 on an autocommit load).
    Metric("trx_per_s", "trx_id_counter", "rate", "trx/s", "Transactions"),
    Metric("handler_commits_per_s", "handler_commit", "rate", "/s", "Handler_commit"),
    Metric("rows_inserted_per_s", "rows_inserted", "rate", "rows/s", "Rows inserted"),
    Metric("rows_updated_per_s", "rows_updated", "rate", "rows/s", "Rows updated"),
    Metric("rows_deleted_per_s", "rows_deleted", "rate", "rows/s", "Rows deleted"),
    Metric("rows_read_per_s", "rows_read", "rate", "rows/s", "Rows read"),
    Metric("flush_adaptive_per_s", "flush_adaptive_pages", "rate", "pages/s", "Adaptive flush"),
    Metric("flush_background_per_s", "flush_background_pages", "rate", "pages/s", "Background flush"),
    Metric("flush_lru_per_s", "flush_lru_pages", "rate", "pages/s", "LRU flush"),
    Metric("flush_sync_per_s", "flush_sync_pages", "rate", "pages/s", "Sync flush"),
    Metric("flush_sync_waits_per_s", "flush_sync_waits", "rate", "/s", "Sync flush waits"),
    Metric("os_log_written_per_s", "innodb_os_log_written", "rate", "bytes/s", "Innodb_os_log_written"),
    Metric("purge_dml_delay_usec", "purge_dml_delay_usec", "gauge", "µs", "DML delay per row change"),
    Metric("purge_undo_log_pages_per_s", "purge_undo_log_pages", "rate", "pages/s", "Purged undo log pages"),
    Metric("purge_del_mark_records_per_s", "purge_del_mark_records", "rate", "records/s",
           "Purged delete-marked records"),
    Metric("purge_upd_exist_or_extern_records_per_s", "purge_upd_exist_or_extern_records", "rate", "records/s",
           "Purged updated records"),
    # How far purge is behind in transaction ids: Trx id counter minus "Purge done for trx's n:o <".
    Metric("purge_lag_trx_ids", "trx_id_counter", "gauge", "trx ids", "Purge lag", minus="purge_trx_id"),
    Metric("hll_growth_per_h", "history_list_length", "slope", "undo logs/h", "History list growth",
           scale=3600.0, window_s=HLL_SLOPE_WINDOW_S),
]
METRICS: dict[str, Metric] = {m.name: m for m in _METRICS}


# --- disk metrics: derived from DiskSample counters by timeseries.disk_series --------


@dataclass(frozen=True)
class DiskMetric:
    name: str
    key: str  # the analysis.diskstats.metrics_for column (pt-diskstats name)
    unit: str
    label: str


_DISK_METRICS = [
    DiskMetric("disk_r_s", "rd_s", "/s", "Disk reads"),
    DiskMetric("disk_w_s", "wr_s", "/s", "Disk writes"),
    DiskMetric("disk_rd_rt_ms", "rd_rt", "ms", "Disk read response time"),
    DiskMetric("disk_wr_rt_ms", "wr_rt", "ms", "Disk write response time"),
    DiskMetric("disk_busy_pct", "busy", "%", "Disk busy"),
    DiskMetric("disk_wr_mb_s", "wr_mb_s", "MB/s", "Disk write throughput"),
]
DISK_METRICS: dict[str, DiskMetric] = {m.name: m for m in _DISK_METRICS}
