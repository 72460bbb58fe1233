"""Detected changes become annotations: every SET GLOBAL seen between two polls, and every restart."""

from __future__ import annotations

from django.dispatch import receiver

from annotations.models import Annotation
from servers.signals import server_restarted, variables_changed

# Shown in the annotation text; the full list is always in VariableChange.
MAX_LISTED = 20


def _arrow(name: str, old: str | None, new: str | None) -> str:
    return f"{name}: {'(unset)' if old is None else old} → {'(unset)' if new is None else new}"


@receiver(variables_changed, dispatch_uid="annotate-variable-changes")
def annotate_variable_changes(sender, *, server, ts, changes, setters, **kwargs) -> Annotation:
    lines = [_arrow(n, o, v) + (f" (by {setters[n]})" if setters.get(n) else "") for n, o, v in changes]
    if len(lines) > MAX_LISTED:
        lines = lines[:MAX_LISTED] + [f"… and {len(changes) - MAX_LISTED} more"]
    return Annotation.objects.create(
        server=server, time=ts, text="\n".join(lines), kind=Annotation.Kind.VARIABLE_CHANGE,
        tags=["variable_change"] + sorted({n for n, _, _ in changes})[:10],
    )


@receiver(server_restarted, dispatch_uid="annotate-restart")
def annotate_restart(sender, *, server, started_at, polled_at, uptime_before_s, uptime_after_s,
                     **kwargs) -> Annotation:
    return Annotation.objects.create(
        server=server, time=started_at, kind=Annotation.Kind.RESTART, tags=["restart"],
        text=f"server restarted (uptime {uptime_before_s} s → {uptime_after_s} s at the poll of "
             f"{polled_at.isoformat()})",
    )
