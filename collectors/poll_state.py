"""What the collector remembers of each server between polls, in one Redis hash (`iw:poll-state`,
field = server id), so that a poll needs no PostgreSQL query to know what changed:

- `up`: Uptime of the previous poll. Lower now = a restart (announced as today).
- `vd` / `va`: digest of the variables last stored and when they were last read. A snapshot is
  written to the server row (and diffed into VariableChange rows) only when the digest changed.
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
VARIABLES_EVERY_S = 60  # below a 10 s interval, variables are read once a minute


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
    text = "\0".join(itertools.chain.from_iterable(sorted(kept.items())))  # ~650 variables, every poll
    return hashlib.sha1(text.encode(errors="surrogatepass"), usedforsecurity=False).hexdigest()


def variables_due(server: Server, state: dict, now_s: float) -> bool:
    # Variables are cheap but not free: read every poll at >= 10 s, else once a minute.
    if server.poll_interval_s >= 10 or not state.get("va"):
        return True
    return now_s - state["va"] >= VARIABLES_EVERY_S


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
            new.update(vd=digest, va=ts.timestamp())
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
