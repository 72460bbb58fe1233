"""One poll of one server: read (on a pooled connection), parse, and turn into the rows to store.

`poll` never writes samples itself: it returns the poll's outcome as a JSON-ready entry
(timeseries.poll_store.poll_entry) that the caller stores now (`tasks.poll_once`) or batches
(`tasks.poll_batched`). Every outcome is an entry, failures included, so every poll is accounted
for. `sample_entry` is the step from a reading to rows, for any caller that already holds one
(another reader, a burst of polls on one connection).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

from collectors import poll_state, sources
from collectors.parsers.innodb_status import PARSER_VERSION, ParseError, parse_innodb_status
from servers.crypto import SecretDecryptionError, decrypt_secret
from servers.models import CollectorRun, Server
from timeseries import ingest
from timeseries.poll_store import poll_entry

log = logging.getLogger(__name__)
# INNODB_TRX rows read per poll, oldest first: enough to name who holds the oldest read views.
OLDEST_TRX_ROWS = 5


@lru_cache(maxsize=4096)
def _password(encrypted: str) -> str:
    # Decrypting costs about as much as a small query; the ciphertext changes with the password.
    return decrypt_secret(encrypted)


_servers: dict[tuple, Server] = {}


def server_from_roster(entry: dict) -> Server:
    """The (unsaved) Server a roster entry describes, one instance per distinct entry."""
    key = tuple(entry.items())
    server = _servers.get(key)
    if server is None:
        if len(_servers) > 20_000:
            _servers.clear()
        server = _servers[key] = Server(**entry)
    return server


def connection_params(server: Server) -> sources.ConnectionParams:
    return sources.ConnectionParams(server.host, server.port, server.user, _password(server.password_encrypted),
                                    settings.INNOWATCH_POLL_TIMEOUT_S)


@dataclass
class PollRun:
    """How one poll went, as a CollectorRun row would say it (the row is written only for some)."""

    server_id: int
    started_at: dt.datetime
    status: str = CollectorRun.Status.OK
    error_kind: str = ""
    error: str = ""
    duration_ms: float = 0.0
    finished_at: dt.datetime | None = None
    sample_at: dt.datetime | None = None


def _configure_pool() -> None:
    """The pool as the settings say, all three of them, at every poll (a setting equal to the
    pool's own default once left the others unapplied)."""
    pool = sources.POOL
    pool.max_idle, pool.idle_timeout_s, pool.max_idle_per_server = (
        settings.INNOWATCH_POOL_MAX_IDLE, settings.INNOWATCH_POOL_IDLE_TIMEOUT_S,
        settings.INNOWATCH_POOL_MAX_IDLE_PER_SERVER)


def poll(server: Server, state: dict, *, force_variables: bool = False) -> tuple[PollRun, dict, dict]:
    """Poll `server` once (reading its variables when due, or when forced). Returns how it went,
    the entry to store, and the poll state to keep (collectors.poll_state)."""
    _configure_pool()
    run = PollRun(server.pk, dt.datetime.now(dt.UTC))
    began = time.perf_counter()
    sample, new_state = {}, dict(state)
    try:
        with_variables = force_variables or (lambda status: poll_state.variables_due(server, state, time.time(), status))
        reading = sources.read_server(connection_params(server), with_variables=with_variables, with_trx=True,
                                      trx_limit=OLDEST_TRX_ROWS, pool=sources.POOL)
        sample = sample_entry(server, reading, run)
        new_state = poll_state.after_reading(server, reading, state)
    except sources.SourceError as exc:
        _fail(run, exc.kind, str(exc))
    except SecretDecryptionError as exc:
        _fail(run, Server.PollStatus.AUTH, str(exc))
    except ParseError as exc:
        _fail(run, Server.PollStatus.PARSE, str(exc))
    except Exception as exc:  # a poll must never take the worker down; record and go on
        log.exception("poll of %s failed", server.name)
        _fail(run, Server.PollStatus.ERROR, f"{type(exc).__name__}: {exc}")
    run.duration_ms = (time.perf_counter() - began) * 1000
    run.finished_at = run.started_at + dt.timedelta(milliseconds=run.duration_ms)
    # Good polls are counted per minute; a row is kept for failures, warnings and changes of state.
    record = run.status != CollectorRun.Status.OK or state.get("st") != CollectorRun.Status.OK
    new_state["st"] = run.status
    entry = poll_entry(server.pk, started_at=run.started_at, duration_ms=run.duration_ms, status=run.status,
                       error_kind=run.error_kind, error=run.error, record=record, **sample)
    return run, entry, new_state


def sample_entry(server: Server, reading: sources.ServerReading, run: PollRun) -> dict:
    """Parse a reading into the sample's columns, raw text and details (poll_entry's arguments);
    parse warnings and a truncated text mark the run as a warning."""
    status = parse_innodb_status(reading.innodb_status)
    notes = list(status.warnings)
    global_status = reading.global_status or {}
    fields = ingest.sample_fields_from_status(status)
    fields.update(ingest.sample_fields_from_global_status(global_status))
    ingest.fill_missing_from_global_status(fields, global_status)
    fields.update(ingest.sample_fields_from_innodb_metrics(reading.innodb_metrics or {}))
    ts = reading.captured_at
    not_shown = ingest.holders_not_shown_note(status, reading.innodb_trx)
    if not_shown:
        notes.append(not_shown)
    if notes or not status.complete:
        run.status = CollectorRun.Status.WARNING
        run.error = "; ".join(notes[:5]) or "status text truncated (no END marker)"
    elif reading.innodb_trx_missing:
        run.error = reading.innodb_trx_missing  # the sample is whole; the page says what it lacks
    run.sample_at = ts
    return {"ts": ts, "sample": fields, "raw_text": reading.innodb_status, "parser_version": PARSER_VERSION,
            "waits": ingest.semaphore_rows(server, ts, status),
            "holders": ingest.view_holder_rows(server, ts, status, reading.innodb_trx)}


def _fail(run: PollRun, kind: str, message: str) -> None:
    run.status = CollectorRun.Status.FAILED
    run.error_kind = kind
    run.error = message[:2000]
