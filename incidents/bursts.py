"""A burst's one-second reads. Each second is one task (`burst_tick`): read the server, keep the
raw readings, store them as a sample, and send the next tick for the start of the next second.
No task holds a worker between seconds, so the polls of every other server interleave with the
ticks; the hard end (`ends_at`) and the size cap stop the chain whatever happens, and a sweep
finishes a burst whose chain was broken (a worker lost)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import logging
import math

from celery import shared_task
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from collectors import capture, disk_tasks, sources
from collectors.parsers.diskstats import parse_proc_diskstats
from collectors.parsers.innodb_status import PARSER_VERSION, ParseError, parse_innodb_status
from collectors.scheduling import claim
from incidents.models import Burst, BurstSecond
from timeseries import ingest
from timeseries.disk_ingest import save_disk_samples

log = logging.getLogger(__name__)
READ_TIMEOUT_S = 2  # a second's reads must not run into the next seconds
# Ticks start just after the whole second, so two readings never share a printed second (the
# status text's header and pt-stalk's file names have one-second resolution).
TICK_OFFSET_S = 0.05


def _route(server) -> dict:
    """A burst runs where the server's disks can be read: on its host agent, or on the burst worker
    (INNOWATCH_BURST_QUEUE), which reads this host's disks for a server on this host."""
    queue = disk_tasks.disk_queue_for(server)
    return {"queue": queue or settings.INNOWATCH_BURST_QUEUE}


def send_first(burst: Burst) -> None:
    # On the next whole second like every later one, so the first gap is a second too.
    burst_tick.apply_async((burst.pk, 0), eta=_next_second(timezone.now()), **_route(burst.server))


@shared_task(name="incidents.burst_tick", ignore_result=True, soft_time_limit=8)
def burst_tick(burst_id: int, seq: int) -> None:
    if not claim(f"iw:burst:{burst_id}:{seq}", 3600):
        return  # at-least-once delivery: this second was already read
    burst = Burst.objects.select_related("server").filter(pk=burst_id).first()
    if burst is None or burst.status != Burst.Status.RUNNING:
        return
    if timezone.now() >= burst.ends_at:
        finish(burst)
        return
    read_second(burst, seq)
    burst.refresh_from_db(fields=["status", "size_bytes"])
    if burst.status != Burst.Status.RUNNING:
        return
    if burst.size_bytes >= settings.INNOWATCH_BURST_MAX_BYTES:
        finish(burst, Burst.Status.CAPPED)
        return
    next_at = _next_second(timezone.now())
    if next_at >= burst.ends_at:
        finish(burst)
        return
    burst_tick.apply_async((burst_id, seq + 1), eta=next_at, **_route(burst.server))


def _next_second(now: dt.datetime) -> dt.datetime:
    whole = math.floor(now.timestamp()) + 1
    return dt.datetime.fromtimestamp(whole + TICK_OFFSET_S, dt.UTC)


def read_second(burst: Burst, seq: int) -> BurstSecond | None:
    """One second: the server's readings (variables on the first), the process list and, where
    this worker can read the server's disks, /proc/diskstats. A failed read is counted, not fatal."""
    server = burst.server
    try:
        params = sources.ConnectionParams(server.host, server.port, server.user, server.get_password(),
                                          READ_TIMEOUT_S)
        reading = sources.read_server(params, with_variables=seq == 0, with_trx=True)
        processlist_at, processlist = sources.read_processlist(params)
    except Exception as exc:  # unreachable, auth, timeout, a bad key: the burst goes on
        _failed(burst, f"{type(exc).__name__}: {exc}")
        return None
    lines = capture.reading_lines(reading, None)
    lines.append({"ts": processlist_at.isoformat(), "kind": "processlist", "rows": processlist})
    if disk_tasks.disk_queue_for(server) is not None:
        disk_at, text = disk_tasks.read_diskstats_text()
        lines.append({"ts": disk_at.isoformat(), "kind": "diskstats", "text": text})
    return keep_second(burst, seq, lines)


def keep_second(burst: Burst, seq: int, lines: list[dict]) -> BurstSecond:
    """Keep one second's capture lines, and store them as an ordinary sample of the server, from
    those very lines (so the burst's download re-imports to the same rows)."""
    by_kind = {line["kind"]: line for line in lines}
    ts = dt.datetime.fromisoformat(by_kind["innodb_status"]["ts"])
    global_status = {str(k): str(v) for k, v in by_kind.get("global_status", {}).get("rows", [])}
    status = _store_sample(burst, ts, by_kind, global_status)
    blob = gzip.compress("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode(), 6)
    second = BurstSecond.objects.create(
        burst=burst, seq=seq, ts=ts, lines_gz=blob,
        checkpoint_age_bytes=getattr(getattr(status, "log", None), "checkpoint_age_bytes", None),
        threads_running=_int(global_status.get("Threads_running")),
        semaphore_longest_wait_s=max((w.seconds or 0 for w in _waits(status)), default=None),
        history_list_length=getattr(getattr(status, "transactions", None), "history_list_length", None),
    )
    Burst.objects.filter(pk=burst.pk).update(seconds_read=F("seconds_read") + 1,
                                             size_bytes=F("size_bytes") + len(blob))
    return second


def _store_sample(burst: Burst, ts: dt.datetime, by_kind: dict, global_status: dict):
    server = burst.server
    try:
        status = parse_innodb_status(by_kind["innodb_status"]["text"])
    except ParseError as exc:
        _failed(burst, f"status text not parsed: {exc}", count=False)
        return None
    metrics = {str(k): int(v) for k, v in by_kind.get("innodb_metrics", {}).get("rows", [])}
    ingest.save_innodb_sample(
        server, ts, status=status, raw_text=by_kind["innodb_status"]["text"], parser_version=PARSER_VERSION,
        global_status=global_status, innodb_metrics=metrics, notes=[])
    if "diskstats" in by_kind:
        disk = by_kind["diskstats"]
        rows = [r for r in parse_proc_diskstats(disk["text"]) if disk_tasks._worth_storing(r)]
        save_disk_samples(server.pk, dt.datetime.fromisoformat(disk["ts"]), rows,
                          disk_tasks.device_roles(server.variables or {}))
    return status


def _waits(status) -> list:
    semaphores = getattr(status, "semaphores", None)
    return list(getattr(semaphores, "waits", None) or [])


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _failed(burst: Burst, message: str, count: bool = True) -> None:
    log.warning("burst %s of %s: %s", burst.pk, burst.server.name, message)
    updates = {"last_error": message[:2000]}
    if count:
        updates["failed_reads"] = F("failed_reads") + 1
    Burst.objects.filter(pk=burst.pk).update(**updates)


def finish(burst: Burst, status: str = Burst.Status.DONE) -> None:
    """Close the burst; its chart region ends when the last second was read."""
    now = timezone.now()
    updates = {"status": status, "finished_at": now}
    if not BurstSecond.objects.filter(burst=burst).exists():
        updates["status"] = Burst.Status.FAILED
        if not burst.last_error:  # no tick ever ran
            updates["last_error"] = f"no second was read: is a worker consuming {_route(burst.server)['queue']}?"
    updated = Burst.objects.filter(pk=burst.pk, status=Burst.Status.RUNNING).update(**updates)
    if not updated:
        return
    last = BurstSecond.objects.filter(burst=burst).order_by("-seq").values_list("ts", flat=True).first()
    if burst.annotation_id and last is not None:
        burst.annotation.time_end = max(last, burst.started_at)
        burst.annotation.save(update_fields=["time_end"])


OVERDUE_S = 30


@shared_task(name="incidents.sweep_bursts", ignore_result=True, soft_time_limit=50)
def sweep_bursts() -> None:
    """Finish bursts whose tick chain was broken, and drop bursts past their retention."""
    now = timezone.now()
    for burst in Burst.objects.filter(status=Burst.Status.RUNNING, ends_at__lt=now - dt.timedelta(seconds=OVERDUE_S)):
        burst.refresh_from_db()
        finish(burst)
    cutoff = now - dt.timedelta(days=settings.INNOWATCH_BURST_RETENTION_DAYS)
    for burst in Burst.objects.filter(started_at__lt=cutoff).exclude(status=Burst.Status.RUNNING):
        if burst.annotation_id:
            burst.annotation.delete()
        burst.delete()
