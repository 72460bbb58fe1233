"""The monitored servers: inventory, encrypted credentials, poll state, and the history of their
global variables."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from servers.crypto import decrypt_secret, encrypt_secret


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
    # Digest of the non-volatile variables in `variables`: a poll rewrites the snapshot only
    # when the digest it reads differs (collectors.poll_state).
    variables_digest = models.CharField(max_length=40, blank=True, editable=False)
    last_sample_at = models.DateTimeField(null=True, blank=True)
    last_poll_at = models.DateTimeField(null=True, blank=True)
    last_poll_status = models.CharField(
        max_length=12, choices=PollStatus.choices, default=PollStatus.NEVER
    )
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "dashboard_server"
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
    """A poll worth a row: every failure and warning with its error, and every change of state
    (the first poll, the first good poll after failures). Good polls in between are counted in
    `PollMinute`, so every poll is still accounted for."""

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
        db_table = "dashboard_collectorrun"
        indexes = [models.Index(fields=["server", "-started_at"], name="run_server_started")]


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
        db_table = "dashboard_variablechange"
        ordering = ["-ts", "name"]
        indexes = [models.Index(fields=["server", "name", "ts"], name="varchange_server_name_ts")]


class PollMinuteQuerySet(models.QuerySet):
    def totals(self) -> dict[str, int]:
        """Polls, failures and warnings summed over the rows."""
        sums = self.aggregate(polls=models.Sum("polls"), failures=models.Sum("failures"),
                              warnings=models.Sum("warnings"))
        return {k: v or 0 for k, v in sums.items()}


class PollMinute(models.Model):
    """The polls of one server in one UTC minute: how many, how many failed or warned, and each
    one's duration (for p50/p95). One row per server-minute instead of one per poll."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="poll_minutes", db_index=False)
    minute = models.DateTimeField()
    polls = models.IntegerField(default=0)
    failures = models.IntegerField(default=0)
    warnings = models.IntegerField(default=0)
    durations_ms = ArrayField(models.FloatField(), default=list)

    objects = PollMinuteQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["server", "minute"], name="pollminute_server_minute")]
        indexes = [models.Index(fields=["minute"], name="pollminute_minute")]

    def quantile_ms(self, q: float) -> float | None:
        values = sorted(self.durations_ms)
        return values[min(len(values) - 1, int(q * len(values)))] if values else None

    @property
    def p50_ms(self) -> float | None:
        return self.quantile_ms(0.5)

    @property
    def p95_ms(self) -> float | None:
        return self.quantile_ms(0.95)
