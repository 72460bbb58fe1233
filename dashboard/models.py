"""innowatch's tables. Samples hold raw values as the server printed them; rates are derived
in analysis/, never stored. Sample tables are range-partitioned by `ts` (see dashboard/partitions.py
and the migrations' RunSQL), so their primary key includes `ts`."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from dashboard.crypto import decrypt_secret, encrypt_secret


class Server(models.Model):
    class Flavor(models.TextChoices):
        MYSQL = "mysql", "MySQL"
        PERCONA = "percona", "Percona Server"
        MARIADB = "mariadb", "MariaDB"
        UNKNOWN = "unknown", "unknown"

    class PollStatus(models.TextChoices):
        NEVER = "never", "never polled"
        OK = "ok", "ok"
        UNREACHABLE = "unreachable", "unreachable"
        AUTH = "auth", "authentication failed"
        PRIVILEGE = "privilege", "missing privilege"
        TIMEOUT = "timeout", "timed out"
        PARSE = "parse", "parse error"
        ERROR = "error", "error"

    name = models.SlugField(max_length=100, unique=True)
    host = models.CharField(max_length=255, blank=True)
    port = models.PositiveIntegerField(default=3306, validators=[MaxValueValidator(65535)])
    user = models.CharField(max_length=80, blank=True)
    password_encrypted = models.TextField(blank=True, editable=False)
    poll_interval_s = models.PositiveIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(3600)]
    )
    enabled = models.BooleanField(default=True)
    tags = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    # Celery queue suffix of the agent on the database host (`host.<name>`); blank: this host.
    host_agent = models.CharField(max_length=100, blank=True)
    imported = models.BooleanField(default=False, help_text="Created by a capture import; never polled.")
    synthetic = models.BooleanField(default=False, help_text="History made by generate_history.")
    flavor = models.CharField(max_length=10, choices=Flavor.choices, default=Flavor.UNKNOWN)
    version = models.CharField(max_length=100, blank=True)
    version_comment = models.CharField(max_length=200, blank=True)
    variables = models.JSONField(default=dict, blank=True)
    variables_at = models.DateTimeField(null=True, blank=True)
    last_sample_at = models.DateTimeField(null=True, blank=True)
    last_poll_at = models.DateTimeField(null=True, blank=True)
    last_poll_status = models.CharField(
        max_length=12, choices=PollStatus.choices, default=PollStatus.NEVER
    )
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def set_password(self, raw_password: str) -> None:
        self.password_encrypted = encrypt_secret(raw_password) if raw_password else ""

    def get_password(self) -> str:
        return decrypt_secret(self.password_encrypted)

    def is_stale(self, now=None) -> bool:
        """No good sample for more than 3 poll intervals (DESIGN §1)."""
        if self.last_sample_at is None:
            return True
        now = now or timezone.now()
        return (now - self.last_sample_at).total_seconds() > 3 * self.poll_interval_s


class CollectorRun(models.Model):
    """One row per poll, success or failure: every poll is accounted for."""

    class Kind(models.TextChoices):
        INNODB_STATUS = "innodb", "InnoDB status"
        DISKSTATS = "disk", "diskstats"
        IMPORT = "import", "capture import"

    class Status(models.TextChoices):
        OK = "ok", "ok"
        WARNING = "warning", "ok with warnings"
        FAILED = "failed", "failed"

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="runs")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    error_kind = models.CharField(max_length=12, choices=Server.PollStatus.choices, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField(null=True)

    class Meta:
        indexes = [models.Index(fields=["server", "-started_at"], name="run_server_started")]


def _bigint() -> models.BigIntegerField:
    """LSNs, bytes, cumulative counters, trx ids: anything that can pass 2^31."""
    return models.BigIntegerField(null=True)


def _int() -> models.IntegerField:
    """Values bounded by design: buffer-pool page counts (2^31 16 KiB pages = 32 TiB), thread and
    transaction counts, pending I/Os, seconds (2^31 s = 68 years). 4 bytes instead of 8; a value
    that does not fit is stored NULL with a warning (dashboard.ingest.fit_to_columns)."""
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


class RawStatus(models.Model):
    """The status text exactly as received (zlib), so history can be re-parsed and read."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()
    parser_version = models.CharField(max_length=20)
    text_zlib = models.BinaryField()


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


class ApiToken(models.Model):
    """A bearer token for tools. Only its SHA-256 is stored; the token is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=8)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def hash_key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    @classmethod
    def issue(cls, user, name: str = "") -> tuple[ApiToken, str]:
        key = "iw_" + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, prefix=key[:8], key_hash=cls.hash_key(key))
        return token, key


# --- Alerting (issue 8): rules, per-(rule, server) state, events, silences, notifications ---


class AlertRule(models.Model):
    """``metric op threshold`` held for ``for_s`` fires (analysis.alert_rules.RuleSpec).
    Scope: the listed servers and servers carrying any of ``tags``; both empty = every server."""

    class Severity(models.TextChoices):
        INFO = "info", "info"
        WARNING = "warning", "warning"
        CRITICAL = "critical", "critical"

    class Op(models.TextChoices):
        GT = ">", ">"
        LT = "<", "<"
        GE = ">=", ">="
        LE = "<=", "<="

    name = models.CharField(max_length=100, unique=True)
    metric = models.CharField(max_length=60)
    op = models.CharField(max_length=2, choices=Op.choices, default=Op.GT)
    threshold = models.FloatField()
    for_s = models.PositiveIntegerField(default=0)
    keep_firing_s = models.PositiveIntegerField(default=0)
    severity = models.CharField(max_length=10, choices=Severity.choices, default=Severity.WARNING)
    servers = models.ManyToManyField(Server, blank=True, related_name="alert_rules")
    tags = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    description = models.TextField(blank=True)
    enabled = models.BooleanField(default=True)
    builtin = models.BooleanField(default=False, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AlertState(models.Model):
    """Where one rule stands on one server (persisted analysis.alert_rules.AlertState)."""

    class State(models.TextChoices):
        INACTIVE = "inactive", "inactive"
        PENDING = "pending", "pending"
        FIRING = "firing", "firing"

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="states")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="alert_states")
    state = models.CharField(max_length=10, choices=State.choices, default=State.INACTIVE)
    active_since = models.FloatField(null=True)
    firing_since = models.FloatField(null=True)
    false_since = models.FloatField(null=True)
    last_ts = models.FloatField(null=True)
    last_value = models.FloatField(null=True)
    # "firing" once a firing notice went out: a resolved notice only follows a firing one.
    notified = models.CharField(max_length=10, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ack_note = models.TextField(blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rule", "server"], name="alertstate_rule_server")]


class AlertEvent(models.Model):
    """A transition of one (rule, server): pending, firing, resolved, inactive."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="events")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="alert_events")
    ts = models.DateTimeField()
    state = models.CharField(max_length=10)
    value = models.FloatField(null=True)
    severity = models.CharField(max_length=10, choices=AlertRule.Severity.choices)
    silenced = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["-ts"], name="alertevent_ts")]


class Silence(models.Model):
    """Mutes notifications of matching alerts between ``starts_at`` and ``ends_at``.
    Every non-blank matcher must match; blank matchers match everything."""

    rule_name = models.CharField(max_length=100, blank=True)
    server = models.ForeignKey(Server, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    tag = models.CharField(max_length=50, blank=True)
    severity = models.CharField(max_length=10, choices=AlertRule.Severity.choices, blank=True)
    starts_at = models.DateTimeField(default=timezone.now)
    ends_at = models.DateTimeField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    comment = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-starts_at"]


class NotificationChannel(models.Model):
    class Kind(models.TextChoices):
        EMAIL = "email", "email"
        WEBHOOK = "webhook", "webhook (JSON, Slack-compatible)"

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    target = models.TextField(help_text="Email addresses (comma-separated) or the webhook URL.")
    min_severity = models.CharField(
        max_length=10, choices=AlertRule.Severity.choices, default=AlertRule.Severity.WARNING
    )
    send_resolved = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.name


class NotificationDelivery(models.Model):
    """One grouped message (one server, one evaluation) to one channel, and how sending went."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"

    channel = models.ForeignKey(NotificationChannel, on_delete=models.CASCADE, related_name="deliveries")
    server = models.ForeignKey(Server, null=True, on_delete=models.SET_NULL, related_name="+")
    events = models.ManyToManyField(AlertEvent, related_name="deliveries")
    kind = models.CharField(max_length=10)  # firing / resolved / mixed
    subject = models.CharField(max_length=300)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_code = models.IntegerField(null=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True)


# --- rollups (issue 5; columns in dashboard/rollup_schema.py, builder in dashboard/rollups.py) ---


class InnodbRollup1m(models.Model):
    """1-minute min/sum/max/count per charted metric (rates: of per-sample rates). Partitioned by day."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()


class InnodbRollup1h(models.Model):
    """1-hour rollup, built from the 1-minute one. Small (720 rows per server per month): not partitioned."""

    pk = models.CompositePrimaryKey("server", "ts")
    server = models.ForeignKey(Server, on_delete=models.CASCADE, db_index=False)
    ts = models.DateTimeField()


def _add_rollup_fields(models_: tuple = ()) -> None:
    from dashboard.rollup_schema import rollup_fields

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


_add_rollup_fields((InnodbRollup15m,))


class RollupState(models.Model):
    """High-water mark per resolution: buckets before `built_until` are final (up to late rows)."""

    resolution = models.CharField(max_length=4, primary_key=True)
    built_until = models.DateTimeField()


# --- tuning changes (issue 7): annotations and the variable history ---


class Annotation(models.Model):
    """A moment or range worth marking on the charts. Scope: `server` set = that server;
    `scope_tag` set = every server with that tag; neither = all servers."""

    class Kind(models.TextChoices):
        MANUAL = "manual", "manual"
        DEPLOY = "deploy", "deploy"
        VARIABLE_CHANGE = "variable_change", "variable change"
        RESTART = "restart", "restart"
        ALERT = "alert", "alert"
        MAINTENANCE = "maintenance", "maintenance"

    time = models.DateTimeField()
    time_end = models.DateTimeField(null=True, blank=True)
    text = models.TextField()
    tags = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    # None: written by innowatch itself (detected changes).
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    server = models.ForeignKey(
        Server, null=True, blank=True, on_delete=models.CASCADE, related_name="annotations"
    )
    scope_tag = models.CharField(max_length=50, blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.MANUAL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-time"]
        indexes = [models.Index(fields=["server", "time"], name="annotation_server_time")]

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M} {self.text[:60]}"


class VariableChange(models.Model):
    """One global variable that differed between two polls (SHOW GLOBAL VARIABLES diff).
    `set_by` comes from performance_schema.variables_info on MySQL 8.0+ where readable."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="variable_changes")
    ts = models.DateTimeField()
    name = models.CharField(max_length=100)
    old_value = models.TextField(null=True, blank=True)
    new_value = models.TextField(null=True, blank=True)
    set_by = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-ts", "name"]
        indexes = [models.Index(fields=["server", "name", "ts"], name="varchange_server_name_ts")]
