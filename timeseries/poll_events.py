"""What a stored poll reveals about its server: a restart (Uptime lower than in the previous
stored sample) and changed global variables. Called by the collector and the capture import once a
poll is stored; both are announced through the servers app's signals."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from servers import changes
from servers.models import Server
from servers.signals import first_response, server_restarted
from timeseries.models import InnodbSample


def previous_uptime_s(server: Server, ts: dt.datetime) -> int | None:
    return (
        InnodbSample.objects.filter(server=server, ts__lt=ts, uptime_s__isnull=False)
        .order_by("-ts").values_list("uptime_s", flat=True).first()
    )


def detect_restart(server: Server, ts: dt.datetime, uptime_s: int | None):
    """Announce a restart when Uptime is lower than in the previous stored sample. It is placed at
    the start time the new uptime implies (ts − uptime), not at the poll. Returns the annotation
    a receiver made, or None."""
    if uptime_s is None:
        return None
    return announce_restart(server, ts, uptime_s, previous_uptime_s(server, ts))


def announce_restart(server: Server, ts: dt.datetime, uptime_s: int | None, before: int | None):
    """The restart announcement when `uptime_s` is lower than the previous sample's `before`
    (which the collector keeps in its poll state instead of querying it); None otherwise."""
    if uptime_s is None or before is None or uptime_s >= before:
        return None
    return first_response(server_restarted.send(
        sender=Server, server=server, started_at=ts - dt.timedelta(seconds=uptime_s), polled_at=ts,
        uptime_before_s=before, uptime_after_s=uptime_s))


def uptime_from_status(global_status: Mapping[str, str] | None) -> int | None:
    try:
        return int((global_status or {})["Uptime"])
    except (KeyError, ValueError):
        return None


def after_poll(server: Server, ts: dt.datetime, *, old_variables: Mapping[str, str] | None,
               new_variables: Mapping[str, str] | None, global_status: Mapping[str, str] | None,
               setters: Mapping[str, str] | None = None) -> list:
    """Called once a poll is stored; returns the annotations the announcements produced."""
    made = [detect_restart(server, ts, uptime_from_status(global_status))]
    # The first snapshot of a server has nothing to diff against.
    if old_variables and new_variables is not None:
        made.append(changes.record_variable_changes(server, ts, old_variables, new_variables, setters))
    return [a for a in made if a is not None]
