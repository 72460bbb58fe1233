"""Alerting: rules, per-(rule, server) state, events, silences, notification channels and the
delivery log."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from servers.crypto import decrypt_secret, encrypt_secret
from servers.models import Server


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
    servers = models.ManyToManyField(Server, blank=True, related_name="alert_rules",
                                     db_table="dashboard_alertrule_servers")
    tags = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    description = models.TextField(blank=True)
    enabled = models.BooleanField(default=True)
    builtin = models.BooleanField(default=False, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "dashboard_alertrule"
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
    # The worst value since the incident went pending (highest, or lowest for "<" rules): the
    # peak a resolved notice reports.
    peak_value = models.FloatField(null=True)
    # "firing" once a firing notice went out: a resolved notice only follows a firing one.
    notified = models.CharField(max_length=10, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ack_note = models.TextField(blank=True)

    class Meta:
        db_table = "dashboard_alertstate"
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
        db_table = "dashboard_alertevent"
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
        db_table = "dashboard_silence"
        ordering = ["-starts_at"]


def masked_url(url: str) -> str:
    """An Apprise URL as shown back: the scheme and host, the rest (tokens, passwords) hidden."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host[:3]}…" if rest else "…"


class NotificationChannel(models.Model):
    class Kind(models.TextChoices):
        EMAIL = "email", "email"
        WEBHOOK = "webhook", "webhook (JSON, Alertmanager-compatible, signed)"
        APPRISE = "apprise", "Apprise URL (Slack, PagerDuty, Opsgenie, Teams, Telegram, ntfy, mailto, ...)"

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    target = models.TextField(blank=True, help_text="Email addresses (comma-separated) or the webhook URL. "
                                                    "Apprise URLs carry secrets: they are stored encrypted.")
    apprise_url_encrypted = models.TextField(blank=True, editable=False)
    min_severity = models.CharField(
        max_length=10, choices=AlertRule.Severity.choices, default=AlertRule.Severity.WARNING
    )
    send_resolved = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)
    # Webhooks are signed with HMAC-SHA256 of the body under this secret (encrypted at rest like
    # server passwords, never shown back); empty: unsigned.
    signing_secret_encrypted = models.TextField(blank=True, editable=False)

    class Meta:
        db_table = "dashboard_notificationchannel"

    def __str__(self) -> str:
        return self.name

    def set_apprise_url(self, url: str) -> None:
        self.apprise_url_encrypted = encrypt_secret(url) if url else ""

    def apprise_url(self) -> str:
        return decrypt_secret(self.apprise_url_encrypted) if self.apprise_url_encrypted else ""

    def set_signing_secret(self, secret: str) -> None:
        self.signing_secret_encrypted = encrypt_secret(secret) if secret else ""

    def signing_secret(self) -> str:
        return decrypt_secret(self.signing_secret_encrypted) if self.signing_secret_encrypted else ""


class NotificationDelivery(models.Model):
    """One grouped message (one server, one evaluation) to one channel, and how sending went."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"

    channel = models.ForeignKey(NotificationChannel, on_delete=models.CASCADE, related_name="deliveries")
    server = models.ForeignKey(Server, null=True, on_delete=models.SET_NULL, related_name="+")
    events = models.ManyToManyField(AlertEvent, related_name="deliveries",
                                    db_table="dashboard_notificationdelivery_events")
    kind = models.CharField(max_length=10)  # firing / resolved / mixed
    subject = models.CharField(max_length=300)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_code = models.IntegerField(null=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True)

    class Meta:
        db_table = "dashboard_notificationdelivery"
