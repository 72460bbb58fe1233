"""Variable history: a SHOW GLOBAL VARIABLES diff between polls becomes VariableChange rows (and
a `variables_changed` signal, which the annotations app marks on the charts); the variables in
force at any past moment are rebuilt from the latest snapshot and the recorded changes ("what was
innodb_io_capacity on the 3rd?")."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from django.db import transaction

from servers.models import Server, VariableChange
from servers.signals import first_response, variables_changed

# Variables that change on their own without anyone setting anything: not tuning changes.
VOLATILE = frozenset({"gtid_binlog_pos", "gtid_current_pos", "gtid_binlog_state", "gtid_slave_pos",
                      "gtid_executed", "gtid_purged", "timestamp", "warning_count", "error_count"})


def diff_variables(old: Mapping[str, str], new: Mapping[str, str]) -> list[tuple[str, str | None, str | None]]:
    """(name, old, new) for every variable whose value differs; None = absent on that side."""
    names = sorted(set(old) | set(new))
    return [(n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n) and n not in VOLATILE]


def record_variable_changes(
    server: Server,
    ts: dt.datetime,
    old: Mapping[str, str],
    new: Mapping[str, str],
    setters: Mapping[str, str] | None = None,
):
    """Store each changed variable and announce them; returns the annotation a receiver made
    (None when nothing changed)."""
    changes = diff_variables(old, new)
    if not changes:
        return None
    setters = setters or {}
    with transaction.atomic():
        VariableChange.objects.bulk_create(
            VariableChange(server=server, ts=ts, name=n, old_value=o, new_value=v, set_by=setters.get(n, "")[:200])
            for n, o, v in changes
        )
        return first_response(variables_changed.send(
            sender=Server, server=server, ts=ts, changes=changes, setters=setters))


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
