"""Detected tuning changes (issue 7): a SHOW GLOBAL VARIABLES diff between polls becomes
VariableChange rows plus one annotation per poll; a restart (Uptime went down) becomes one too.
Also reconstructs the variables in force at any past moment from the latest snapshot and the
recorded changes ("what was innodb_io_capacity on the 3rd?")."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from django.db import transaction

from dashboard.models import Annotation, InnodbSample, Server, VariableChange

# Shown in the annotation text; the full list is always in VariableChange.
MAX_LISTED = 20
# Variables that change on their own without anyone setting anything: not tuning changes.
VOLATILE = frozenset({"gtid_binlog_pos", "gtid_current_pos", "gtid_binlog_state", "gtid_slave_pos",
                      "gtid_executed", "gtid_purged", "timestamp", "warning_count", "error_count"})


def diff_variables(old: Mapping[str, str], new: Mapping[str, str]) -> list[tuple[str, str | None, str | None]]:
    """(name, old, new) for every variable whose value differs; None = absent on that side."""
    names = sorted(set(old) | set(new))
    return [(n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n) and n not in VOLATILE]


def _arrow(name: str, old: str | None, new: str | None) -> str:
    return f"{name}: {'(unset)' if old is None else old} → {'(unset)' if new is None else new}"


def record_variable_changes(
    server: Server,
    ts: dt.datetime,
    old: Mapping[str, str],
    new: Mapping[str, str],
    setters: Mapping[str, str] | None = None,
) -> Annotation | None:
    """Store each changed variable and one annotation listing them; None when nothing changed."""
    changes = diff_variables(old, new)
    if not changes:
        return None
    setters = setters or {}
    lines = [_arrow(n, o, v) + (f" (by {setters[n]})" if setters.get(n) else "") for n, o, v in changes]
    if len(lines) > MAX_LISTED:
        lines = lines[:MAX_LISTED] + [f"… and {len(changes) - MAX_LISTED} more"]
    with transaction.atomic():
        VariableChange.objects.bulk_create(
            VariableChange(server=server, ts=ts, name=n, old_value=o, new_value=v, set_by=setters.get(n, "")[:200])
            for n, o, v in changes
        )
        return Annotation.objects.create(
            server=server, time=ts, text="\n".join(lines), kind=Annotation.Kind.VARIABLE_CHANGE,
            tags=["variable_change"] + sorted({n for n, _, _ in changes})[:10],
        )


def previous_uptime_s(server: Server, ts: dt.datetime) -> int | None:
    row = (
        InnodbSample.objects.filter(server=server, ts__lt=ts, uptime_s__isnull=False)
        .order_by("-ts").values_list("uptime_s", flat=True).first()
    )
    return row


def detect_restart(server: Server, ts: dt.datetime, uptime_s: int | None) -> Annotation | None:
    """A restart annotation when Uptime is lower than in the previous stored sample. It is
    placed at the start time the new uptime implies (ts − uptime), not at the poll."""
    if uptime_s is None:
        return None
    before = previous_uptime_s(server, ts)
    if before is None or uptime_s >= before:
        return None
    started = ts - dt.timedelta(seconds=uptime_s)
    return Annotation.objects.create(
        server=server, time=started, kind=Annotation.Kind.RESTART, tags=["restart"],
        text=f"server restarted (uptime {before} s → {uptime_s} s at the poll of {ts.isoformat()})",
    )


def uptime_from_status(global_status: Mapping[str, str] | None) -> int | None:
    try:
        return int((global_status or {})["Uptime"])
    except (KeyError, ValueError):
        return None


def after_poll(server: Server, ts: dt.datetime, *, old_variables: Mapping[str, str] | None,
               new_variables: Mapping[str, str] | None, global_status: Mapping[str, str] | None,
               setters: Mapping[str, str] | None = None) -> list[Annotation]:
    """Called by the collector once a poll is stored; returns the annotations it created."""
    made = [detect_restart(server, ts, uptime_from_status(global_status))]
    # The first snapshot of a server has nothing to diff against.
    if old_variables and new_variables is not None:
        made.append(record_variable_changes(server, ts, old_variables, new_variables, setters))
    return [a for a in made if a is not None]


def variables_at(server: Server, at: dt.datetime) -> dict[str, str]:
    """The variables in force at `at`: the latest snapshot with every change recorded after
    `at` undone, newest first. A variable absent at `at` is left out."""
    values = dict(server.variables or {})
    later = VariableChange.objects.filter(server=server, ts__gt=at).order_by("-ts", "-pk")
    for change in later.only("name", "old_value"):
        if change.old_value is None:
            values.pop(change.name, None)
        else:
            values[change.name] = change.old_value
    return values
