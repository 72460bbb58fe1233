"""What the collector remembers of each server between polls, in one Redis hash (`iw:poll-state`,
field = server id), so that a poll needs no PostgreSQL query to know what changed:

- `up`: Uptime of the previous poll. Lower now = a restart (announced as today).
- `vd` / `va` / `sets`: digest of the variables last stored, when they were last read and the
  server's count of SET statements then (`variables_due`). A snapshot is written to the server
  row (and diffed into VariableChange rows) only when the digest changed.
- `ver`: the server version string, written to the row only when it changed.
- `st`: the previous poll's outcome; a change of state is worth a CollectorRun row.

Any worker may poll any server next, so the state lives in Redis, not in a process. Without it
(first poll, Redis flushed) the poll falls back to PostgreSQL once: the previous uptime from the
samples, the digest from the server row. Writes that announce something (a restart, changed
variables) happen at once; when PostgreSQL is down they are retried on the next poll.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import logging
from collections.abc import Mapping

from collectors import sources, spool
from servers import changes
from servers.models import Server
from timeseries import poll_events

log = logging.getLogger(__name__)

STATE_KEY = "iw:poll-state"
VARIABLES_EVERY_S = 60  # variables are read at least once a minute
# After a SET, the variables are read on the next poll, but at most this often for servers polled
# faster than every 10 s (a client issuing SETs every second would otherwise mean every poll).
SET_READ_MIN_GAP_S = 9
# Com_set_option counts every SET statement (SET GLOBAL included, from stored programs and
# prepared statements too); new connections often send one (SET NAMES, autocommit), so on a busy
# server the variables are read at almost every poll, as before.
_SETTING_COUNTERS = ("Com_set_option", "Com_install_plugin", "Com_uninstall_plugin")


def decode(raw: bytes | str | None) -> dict:
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return {}


def variables_digest(variables: Mapping[str, str]) -> str:
    """Digest of the variables a DBA sets (the ever-moving GTID positions left out), in name order
    (PostgreSQL's jsonb keeps its own key order)."""
    kept = dict(variables)
    for name in changes.VOLATILE:
        kept.pop(name, None)
    text = "\0".join(itertools.chain.from_iterable(sorted(kept.items())))  # ~650 variables
    return hashlib.sha1(text.encode(errors="surrogatepass"), usedforsecurity=False).hexdigest()


def set_statements(global_status: Mapping[str, str] | None) -> str | None:
    """The server's count of statements that can change a global variable (SET, and plugins
    installed or removed, which add or drop variables), as one comparable value."""
    if not global_status:
        return None
    counts = [global_status.get(name, "") for name in _SETTING_COUNTERS]
    return ",".join(counts) if any(counts) else None


def variables_due(server: Server, state: dict, now_s: float, global_status: Mapping[str, str] | None = None) -> bool:
    """Read the variables on the first poll, once a minute, and whenever a SET statement has run
    on the server since the last read (GLOBAL STATUS, read just before, says so): a SET GLOBAL
    is then seen by the next poll, as if the variables were read every poll, while a server
    nobody reconfigures is asked for its ~650 variables once a minute (as PMM's low resolution)."""
    last = state.get("va")
    if not last or now_s - last >= VARIABLES_EVERY_S:
        return True
    sets = set_statements(global_status)
    if sets is None:  # no such counters here (or no status): reading them is the only way to know
        return server.poll_interval_s >= 10
    return sets != state.get("sets") and (server.poll_interval_s >= 10 or now_s - last >= SET_READ_MIN_GAP_S)


def after_reading(server: Server, reading: sources.ServerReading, state: dict) -> dict:
    """Announce what this reading reveals (restart, changed variables, new version) and return
    the state to keep for the next poll."""
    new = dict(state)
    ts = reading.captured_at
    uptime = poll_events.uptime_from_status(reading.global_status)
    if _guarded(server, "restart", lambda: _restart(server, ts, uptime, state)):
        new["up"] = uptime
    if reading.variables is not None:
        digest = variables_digest(reading.variables)
        if digest == state.get("vd") or _guarded(server, "variables", lambda: _store_variables(server, reading, digest)):
            # The SET count as of this read: a different one later means a SET ran since.
            new.update(vd=digest, va=ts.timestamp(), sets=set_statements(reading.global_status))
    if reading.version != state.get("ver") and _guarded(server, "version", lambda: _store_identity(server, reading)):
        new["ver"] = reading.version
    return new


def _guarded(server: Server, what: str, write) -> bool:
    """Run a PostgreSQL write; False (retried on the next poll) when PostgreSQL is unavailable."""
    try:
        write()
        return True
    except spool.DB_UNAVAILABLE as exc:
        spool.forget_connection_if_broken()
        log.warning("%s of %s not recorded yet, PostgreSQL unavailable: %s", what, server.name, exc)
        return False


def _restart(server: Server, ts: dt.datetime, uptime: int | None, state: dict) -> None:
    before = state["up"] if "up" in state else poll_events.previous_uptime_s(server, ts)
    poll_events.announce_restart(server, ts, uptime, before)


def _store_variables(server: Server, reading: sources.ServerReading, digest: str) -> None:
    """A new snapshot: diffed against the stored one (VariableChange rows, announcements), then
    written with its digest. The first snapshot of a server has nothing to diff against."""
    row = Server.objects.filter(pk=server.pk).values("variables", "variables_digest").first()
    if row is None or row["variables_digest"] == digest:
        return
    if row["variables"]:
        changes.record_variable_changes(server, reading.captured_at, row["variables"], reading.variables,
                                        reading.variable_setters)
    Server.objects.filter(pk=server.pk).update(variables=reading.variables, variables_at=reading.captured_at,
                                               variables_digest=digest)


def _store_identity(server: Server, reading: sources.ServerReading) -> None:
    Server.objects.filter(pk=server.pk).update(
        version=reading.version[:100], version_comment=reading.version_comment[:200],
        flavor=sources.flavor_of(reading.version, reading.version_comment))


def record_reading(server: Server, reading: sources.ServerReading) -> None:
    """What a reading stored outside a poll (a capture) reveals, as a poll would, state kept."""
    client = spool._redis()
    state = decode(client.hget(STATE_KEY, server.pk))
    client.hset(STATE_KEY, server.pk, json.dumps(after_reading(server, reading, state)))
