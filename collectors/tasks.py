"""Thin Celery glue: sources -> parsers -> ingest, the fan-out, and run bookkeeping."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from collectors import disk_tasks, sources, spool
from collectors.parsers.innodb_status import PARSER_VERSION, ParseError, parse_innodb_status
from collectors.scheduling import (  # noqa: F401  (ROSTER_KEY, servers_to_poll: the roster's API)
    ROSTER_KEY,
    claim,
    load_roster,
    poll_slot,
    redis_client,
    server_for_task,
    servers_to_poll,
)
from servers.crypto import SecretDecryptionError
from servers.models import CollectorRun, Server
from servers.signals import sample_polled
from timeseries import ingest, poll_events

log = logging.getLogger(__name__)


@shared_task(name="collectors.schedule_polls", ignore_result=True)
def schedule_polls(now_s: float | None = None) -> int:
    """Enqueue one poll for each enabled server whose slot has not been enqueued yet."""
    now_s = time.time() if now_s is None else now_s
    enqueued = 0
    for server in servers_to_poll():
        slot = poll_slot(server, now_s)
        if not claim(f"iw:enqueued:{server.pk}:{slot}", 2 * server.poll_interval_s):
            continue
        # A poll that starts after its interval has passed is worthless: the next one is due.
        poll_server.apply_async((server.pk, slot), expires=server.poll_interval_s)
        disk_tasks.enqueue_disk_poll(server, slot)  # to host.<agent>, a local worker, or nowhere
        enqueued += 1
    return enqueued


@shared_task(name="collectors.poll_server", ignore_result=True, soft_time_limit=30)
def poll_server(server_id: int, slot: int | None = None) -> None:
    server = server_for_task(server_id, from_roster=True)
    if server is None:
        return
    if slot is not None and not claim(f"iw:polled:{server_id}:{slot}", 2 * server.poll_interval_s):
        return  # at-least-once delivery: this slot was already polled
    poll_once(server)


@shared_task(name="collectors.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Lets the dashboard show "collector stalled" when no worker has run for a while."""
    redis_client().set("iw:heartbeat", str(time.time()), ex=3600)


def last_heartbeat() -> float | None:
    value = redis_client().get("iw:heartbeat")
    return float(value) if value else None


def poll_once(server: Server) -> CollectorRun:
    """Read, parse and store one sample of `server`; the run is recorded whatever happens."""
    with record_run(server, CollectorRun.Kind.INNODB_STATUS) as run:
        params = sources.ConnectionParams(
            server.host, server.port, server.user, server.get_password(), settings.INNOWATCH_POLL_TIMEOUT_S
        )
        reading = sources.read_server(params, with_variables=_variables_due(server))
        status = parse_innodb_status(reading.innodb_status)
        notes = list(status.warnings)  # and any field stored NULL because its column cannot hold it
        try:
            ingest.save_innodb_sample(
                server,
                reading.captured_at,
                status=status,
                raw_text=reading.innodb_status,
                parser_version=PARSER_VERSION,
                global_status=reading.global_status,
                innodb_metrics=reading.innodb_metrics,
                notes=notes,
            )
        except spool.DB_UNAVAILABLE as exc:
            # PostgreSQL is down but the server was read: keep the reading for drain_spool.
            spool.forget_connection_if_broken()
            saved = spool.push(server.pk, reading)
            run.status = CollectorRun.Status.WARNING
            run.error = f"PostgreSQL unavailable; reading {'spooled' if saved else 'lost'}: {exc}"[:2000]
            return run
        _update_server_identity(server, reading)
        if notes or not status.complete:
            run.status = CollectorRun.Status.WARNING
            run.error = "; ".join(notes[:5]) or "status text truncated (no END marker)"
        run.sample_at = reading.captured_at
    if run.sample_at is not None:
        sample_polled.send_robust(Server, server=server, ts=run.sample_at)
    return run


def _variables_due(server: Server) -> bool:
    # Variables are cheap but not free: read every poll at >= 10 s, else once a minute.
    if server.poll_interval_s >= 10 or server.variables_at is None:
        return True
    return (timezone.now() - server.variables_at).total_seconds() >= 60


def _update_server_identity(server: Server, reading: sources.ServerReading) -> None:
    server.version = reading.version[:100]
    server.version_comment = reading.version_comment[:200]
    server.flavor = sources.flavor_of(reading.version, reading.version_comment)
    fields = ["version", "version_comment", "flavor"]
    old_variables = server.variables
    if reading.variables is not None:
        server.variables = reading.variables
        server.variables_at = reading.captured_at
        fields += ["variables", "variables_at"]
    server.save(update_fields=fields)
    # Detected tuning changes and restarts: a diff against the previous snapshot.
    poll_events.after_poll(
        server, reading.captured_at, old_variables=old_variables, new_variables=reading.variables,
        global_status=reading.global_status, setters=getattr(reading, "variable_setters", None),
    )


@contextmanager
def record_run(server: Server, kind: str):
    run = CollectorRun(server=server, kind=kind, started_at=timezone.now(), status=CollectorRun.Status.OK)
    run.sample_at = None
    started = time.perf_counter()
    try:
        yield run
    except sources.SourceError as exc:
        _fail(run, exc.kind, str(exc))
    except SecretDecryptionError as exc:
        _fail(run, Server.PollStatus.AUTH, str(exc))
    except ParseError as exc:
        _fail(run, Server.PollStatus.PARSE, str(exc))
    except Exception as exc:  # a poll must never take the worker down; record and go on
        log.exception("poll of %s failed", server.name)
        _fail(run, Server.PollStatus.ERROR, f"{type(exc).__name__}: {exc}")
    finally:
        run.finished_at = timezone.now()
        run.duration_ms = (time.perf_counter() - started) * 1000
        try:
            run.save()
            _update_server_poll_state(server, run)
        except spool.DB_UNAVAILABLE:
            # Nowhere to record it while PostgreSQL is down; the worker must still go on.
            spool.forget_connection_if_broken()
            log.warning("run of %s not recorded: PostgreSQL unavailable (%s)", server.name, run.error)


def _fail(run: CollectorRun, kind: str, message: str) -> None:
    run.status = CollectorRun.Status.FAILED
    run.error_kind = kind
    run.error = message[:2000]


def _update_server_poll_state(server: Server, run: CollectorRun) -> None:
    updates = {"last_poll_at": run.finished_at}
    if run.status == CollectorRun.Status.FAILED:
        updates.update(last_poll_status=run.error_kind, last_error=run.error)
    else:
        updates.update(last_poll_status=Server.PollStatus.OK, last_error=run.error)
        if run.sample_at is not None:
            updates["last_sample_at"] = run.sample_at
    Server.objects.filter(pk=server.pk).update(**updates)
    for key, value in updates.items():
        setattr(server, key, value)
