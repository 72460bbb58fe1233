"""The time series: one wide row per poll, the raw status text, latch waits, disk counters and
their rollups. Samples hold raw values as the server printed them; rates are derived in
analysis/, never stored. Sample tables are range-partitioned by `ts` (timeseries/partitions.py and
the migrations' RunSQL), so their primary key includes `ts`."""

from __future__ import annotations

from django.db import models

from servers.models import Server


def _bigint() -> models.BigIntegerField:
    """LSNs, bytes, cumulative counters, trx ids: anything that can pass 2^31."""
    return models.BigIntegerField(null=True)


def _int() -> models.IntegerField:
    """Values bounded by design: buffer-pool page counts (2^31 16 KiB pages = 32 TiB), thread and
    transaction counts, pending I/Os, seconds (2^31 s = 68 years). 4 bytes instead of 8; a value
    that does not fit is stored NULL with a warning (timeseries.ingest.fit_to_columns)."""
    return models.IntegerField(null=True)


class InnodbSample(models.Model):
    """One poll of one server: SHOW ENGINE INNODB STATUS plus the SHOW GLOBAL STATUS counters
    read in the same poll. Cumulative counters are stored raw; rates are derived.

    The table's columns are not in this order: migration 0008 laid them out 8-byte first, then
    4, 2, 1 (no alignment padding whichever are NULL). A field added later goes last; that is fine."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()
    complete = models.BooleanField(default=True)
    warnings = models.SmallIntegerField(default=0)
    averages_window_s = models.IntegerField(null=True)
    # LOG
    lsn = _bigint()
    flushed_lsn = _bigint()
    pages_flushed_lsn = _bigint()
    checkpoint_lsn = _bigint()
    checkpoint_age_bytes = _bigint()
    modified_age_bytes = _bigint()
    max_checkpoint_age_bytes = _bigint()
    checkpoint_age_target_bytes = _bigint()
    log_ios_done = _bigint()
    pending_log_writes = _int()
    pending_checkpoint_writes = _int()
    # TRANSACTIONS
    history_list_length = _bigint()
    trx_count = _int()
    trx_active = _int()
    trx_oldest_active_s = _int()
    lock_waits = _int()
    # BUFFER POOL AND MEMORY (totals)
    pages_total = _int()
    pages_free = _int()
    pages_data = _int()
    pages_dirty = _int()
    pages_read = _bigint()
    pages_created = _bigint()
    pages_written = _bigint()
    pending_reads = _int()
    pending_writes_lru = _int()
    pending_writes_flush_list = _int()
    # ROW OPERATIONS
    rows_inserted = _bigint()
    rows_updated = _bigint()
    rows_deleted = _bigint()
    rows_read = _bigint()
    # SEMAPHORES
    semaphore_waits = models.IntegerField(null=True)
    semaphore_longest_wait_s = models.FloatField(null=True)
    mutex_os_waits = _bigint()
    rw_shared_os_waits = _bigint()
    rw_excl_os_waits = _bigint()
    # FILE I/O
    os_file_reads = _bigint()
    os_file_writes = _bigint()
    os_fsyncs = _bigint()
    pending_fsyncs_log = _int()
    pending_fsyncs_buffer_pool = _int()
    # SHOW GLOBAL STATUS, same poll
    uptime_s = _int()
    com_commit = _bigint()
    com_rollback = _bigint()
    questions = _bigint()
    threads_running = _int()
    innodb_os_log_written = _bigint()
    innodb_buffer_pool_pages_flushed = _bigint()
    innodb_data_written = _bigint()
    innodb_row_lock_waits = _bigint()
    status_checkpoint_age = _bigint()
    status_checkpoint_max_age = _bigint()
    # INFORMATION_SCHEMA.INNODB_METRICS, where enabled
    flush_adaptive_pages = _bigint()
    flush_background_pages = _bigint()
    flush_lru_pages = _bigint()
    flush_sync_pages = _bigint()
    flush_sync_waits = _bigint()
    # Added later, so last in the table. The workload measured in a way that counts autocommit
    # transactions (Com_commit counts COMMIT statements only), and what purge has done.
    trx_id_counter = _bigint()
    purge_trx_id = _bigint()
    handler_commit = _bigint()
    purge_undo_log_pages = _bigint()
    purge_del_mark_records = _bigint()
    purge_upd_exist_or_extern_records = _bigint()
    # INNODB_METRICS purge_dml_delay_usec (off by default): the delay innodb_max_purge_lag puts on
    # each row change now, in µs; a value InnoDB sets, not a counter.
    purge_dml_delay_usec = _bigint()

    class Meta:
        db_table = "dashboard_innodbsample"


class RawStatus(models.Model):
    """The status text exactly as received (zlib), so history can be re-parsed and read."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()
    parser_version = models.CharField(max_length=20)
    text_zlib = models.BinaryField()

    class Meta:
        db_table = "dashboard_rawstatus"


class SemaphoreWaitSample(models.Model):
    """A thread waiting on a latch at sample time (SEMAPHORES, `--Thread N has waited at`)."""

    pk = models.CompositePrimaryKey("server", "ts", "seq")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()
    seq = models.SmallIntegerField()
    thread_id = models.BigIntegerField(null=True)
    file = models.CharField(max_length=200)
    line = models.IntegerField(null=True)
    seconds = models.FloatField(null=True)
    latch = models.CharField(max_length=40, blank=True)
    mode = models.CharField(max_length=40, blank=True)
    created_file = models.CharField(max_length=200, blank=True)
    created_line = models.IntegerField(null=True)
    holder_thread_id = models.BigIntegerField(null=True)

    class Meta:
        db_table = "dashboard_semaphorewaitsample"


class DiskSample(models.Model):
    """Raw /proc/diskstats counters of one device at one time (fields as the kernel prints)."""

    pk = models.CompositePrimaryKey("server", "device", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    device = models.CharField(max_length=64)
    ts = models.DateTimeField()
    reads = _bigint()
    reads_merged = _bigint()
    sectors_read = _bigint()
    read_ms = _bigint()
    writes = _bigint()
    writes_merged = _bigint()
    sectors_written = _bigint()
    write_ms = _bigint()
    in_progress = _bigint()
    io_ms = _bigint()
    weighted_io_ms = _bigint()
    role = models.CharField(max_length=20, blank=True, help_text="datadir, redo, or blank")

    class Meta:
        db_table = "dashboard_disksample"


class InnodbRollup1m(models.Model):
    """1-minute min/sum/max/count per charted metric (rates: of per-sample rates). Partitioned by day."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()

    class Meta:
        db_table = "dashboard_innodbrollup1m"


class InnodbRollup1h(models.Model):
    """1-hour rollup, built from the 1-minute one. Small (720 rows per server per month): not partitioned."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()

    class Meta:
        db_table = "dashboard_innodbrollup1h"


def _add_rollup_fields(models_: tuple = ()) -> None:
    from timeseries.rollup_schema import rollup_fields

    for model in models_ or (InnodbRollup1m, InnodbRollup1h):
        for name, field in rollup_fields():
            model.add_to_class(name, field)


_add_rollup_fields()


class InnodbRollup15m(models.Model):
    """15-minute rollup, built from the 1-minute one: what a 30-day chart reads (2,880 rows per
    server per month instead of 43,200). Small: not partitioned."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()

    class Meta:
        db_table = "dashboard_innodbrollup15m"


_add_rollup_fields((InnodbRollup15m,))


class RollupState(models.Model):
    """High-water mark per resolution: buckets before `built_until` are final (up to late rows)."""

    resolution = models.CharField(max_length=4, primary_key=True)
    built_until = models.DateTimeField()

    class Meta:
        db_table = "dashboard_rollupstate"


class ReadViewHolder(models.Model):
    """A transaction holding one of the oldest read views at a poll (analysis.purge): who holds purge
    back. Only views open at least analysis.purge.HOLDER_MIN_AGE_S and the few oldest per poll are
    kept, so the table stays small; rows past INNOWATCH_RETENTION_DAYS are deleted."""

    class Source(models.TextChoices):
        STATUS = "status", "SHOW ENGINE INNODB STATUS"
        INNODB_TRX = "innodb_trx", "INFORMATION_SCHEMA.INNODB_TRX"

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="+")
    ts = models.DateTimeField()
    rank = models.SmallIntegerField()  # 0 = the oldest view at this poll
    thread_id = models.BigIntegerField(null=True)
    user = models.CharField(max_length=100, blank=True)
    host = models.CharField(max_length=255, blank=True)
    trx_id = models.CharField(max_length=40, blank=True)
    age_s = models.IntegerField(null=True)
    state = models.CharField(max_length=100, blank=True)
    statement = models.TextField(blank=True)
    rows_locked = models.BigIntegerField(null=True)
    rows_modified = models.BigIntegerField(null=True)
    source = models.CharField(max_length=12, choices=Source.choices, default=Source.STATUS)

    class Meta:
        indexes = [models.Index(fields=["server", "ts"], name="readview_server_ts")]
        constraints = [models.UniqueConstraint(fields=["server", "ts", "rank"], name="readview_server_ts_rank")]
