"""Annotations: moments and ranges worth marking on every chart (deploys, detected variable
changes, restarts, maintenance)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from servers.models import Server


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
        db_table = "dashboard_annotation"
        ordering = ["-time"]
        indexes = [models.Index(fields=["server", "time"], name="annotation_server_time")]

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M} {self.text[:60]}"
