"""Bursts: a server read every second for a while, because a trigger held or a DBA asked.

A burst keeps each second's raw readings (gzip'd capture lines, the format of collectors.capture)
for its own retention, and stores each second as an ordinary sample too, so every chart shows
the one-second detail while the normal samples are kept."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotations.models import Annotation
from servers.models import Server


class TriggerConfig(models.Model):
    """When a server's polls start a burst. A blank threshold switches that trigger off. A server
    without a row uses these defaults."""

    server = models.OneToOneField(Server, on_delete=models.CASCADE, primary_key=True, related_name="burst_trigger")
    enabled = models.BooleanField(default=True)
    checkpoint_age_pct_of_async = models.FloatField(
        null=True, blank=True, default=90.0, help_text="checkpoint age above this % of the async flush point")
    runway_minutes = models.FloatField(
        null=True, blank=True, default=5.0, help_text="sync point reached in under this many minutes")
    semaphore_wait_s = models.FloatField(null=True, blank=True, default=30.0,
                                         help_text="a thread waited on a latch longer than this")
    threads_running = models.PositiveIntegerField(null=True, blank=True, default=50)
    hll_growth_per_h = models.FloatField(
        null=True, blank=True, default=1_000_000.0, help_text="history list growing faster than this per hour")
    # pt-stalk's --cycles: a condition must hold at this many consecutive polls.
    cycles = models.PositiveSmallIntegerField(default=2)
    # pt-stalk's --sleep: no new triggered burst until this long after the last one ended.
    cooldown_s = models.PositiveIntegerField(default=600)
    duration_s = models.PositiveIntegerField(default=120)

    def __str__(self) -> str:
        return f"burst trigger of {self.server}"


class Burst(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"
        CAPPED = "capped", "stopped at the size cap"
        FAILED = "failed", "failed"

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="bursts")
    trigger = models.CharField(max_length=40, help_text="the metric that held, or 'manual'")
    reason = models.TextField()
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    started_at = models.DateTimeField()
    ends_at = models.DateTimeField(help_text="the hard end: no reading is taken after it")
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    seconds_read = models.PositiveIntegerField(default=0)
    failed_reads = models.PositiveIntegerField(default=0)
    size_bytes = models.BigIntegerField(default=0)
    last_error = models.TextField(blank=True)
    annotation = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["server", "-started_at"], name="burst_server_started"),
                   models.Index(fields=["status"], name="burst_status")]

    def __str__(self) -> str:
        return f"{self.server} burst at {self.started_at:%Y-%m-%d %H:%M:%S}"


class BurstSecond(models.Model):
    """One second of a burst: its capture lines (JSON lines, gzip), and the few figures the
    incident page ranks seconds by."""

    burst = models.ForeignKey(Burst, on_delete=models.CASCADE, related_name="seconds")
    seq = models.PositiveIntegerField()
    ts = models.DateTimeField()
    lines_gz = models.BinaryField()
    checkpoint_age_bytes = models.BigIntegerField(null=True)
    threads_running = models.IntegerField(null=True)
    semaphore_longest_wait_s = models.FloatField(null=True)
    history_list_length = models.BigIntegerField(null=True)

    class Meta:
        ordering = ["burst", "seq"]
        constraints = [models.UniqueConstraint(fields=["burst", "seq"], name="burst_second_once")]
