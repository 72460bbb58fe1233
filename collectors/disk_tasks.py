"""Disk collection on the database host: /proc/diskstats counters per device, per poll.

The same worker code runs on the DB host as a Celery worker bound to the queue `host.<name>`
(`celery -A dashboard worker -Q host.<name>`); `Server.host_agent = <name>` makes the fan-out
send that server's disk polls there. A server on this host with no agent is read by the ordinary
worker; a remote server with no agent gets no disk poll (its disks are not readable from here).
Raw counters are stored as printed; metrics are derived at read time (timeseries.disk_series).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
import socket
import subprocess
import time
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from celery import shared_task
from django.utils import timezone

from collectors import spool
from collectors.parsers.diskstats import parse_proc_diskstats
from collectors.scheduling import claim, redis_client, server_for_task
from servers.models import CollectorRun, Server
from timeseries.disk_ingest import save_disk_samples_of_servers

log = logging.getLogger(__name__)
PROC_DISKSTATS = Path("/proc/diskstats")


@lru_cache(maxsize=1)
def local_host_names() -> frozenset[str]:
    names = {"127.0.0.1", "localhost", "::1", socket.gethostname()}
    try:
        names.add(socket.getfqdn())
    except OSError:
        pass
    return frozenset(n.lower() for n in names if n)


def disk_queue_for(server: Server) -> str | None:
    """The queue that can read this server's disks: `host.<agent>`, "" (any ordinary worker,
    the server is on this host) or None (nobody can: no disk poll)."""
    if server.host_agent:
        return f"host.{server.host_agent}"
    if (server.host or "").lower() in local_host_names():
        return ""
    return None


# Servers whose disks one message reads: they share a host, so one read of its /proc/diskstats
# serves them all (several instances on one host, or every local server of a development box).
MAX_DISK_POLLS_PER_MESSAGE = 200


def enqueue_disk_polls(due: list[tuple[Server, int]]) -> int:
    """Route a tick's disk polls: one message per queue (host) and up to MAX_DISK_POLLS_PER_MESSAGE
    servers, not one per server. Returns the disk polls routed (servers whose disks are readable)."""
    by_queue: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for server, slot in due:
        queue = disk_queue_for(server)
        if queue is not None:
            by_queue[queue].append((server.pk, slot, server.poll_interval_s))
    for queue, polls in by_queue.items():
        for start in range(0, len(polls), MAX_DISK_POLLS_PER_MESSAGE):
            chunk = polls[start:start + MAX_DISK_POLLS_PER_MESSAGE]
            # A late disk sample is worth less than the next one.
            options: dict = {"expires": min(interval for _, _, interval in chunk)}
            if queue:
                options["queue"] = queue
            poll_disks.apply_async((chunk,), **options)
    return sum(len(polls) for polls in by_queue.values())


@shared_task(name="collectors.poll_disks", ignore_result=True, soft_time_limit=30)
def poll_disks(polls: list) -> None:
    """[(server id, slot, interval s), ...] of servers on this host: /proc/diskstats read once."""
    pipe = redis_client().pipeline(transaction=False)
    for server_id, slot, interval in polls:
        pipe.set(f"iw:disk-polled:{server_id}:{slot}", "1", nx=True, ex=max(2 * interval, 2))
    # At-least-once delivery: a slot already read is not read again.
    claimed = [server_id for (server_id, _, _), first in zip(polls, pipe.execute(), strict=True) if first]
    if not claimed:
        return
    # Disk samples are not spooled while PostgreSQL is down: the counters are cumulative, so the
    # first sample after the outage covers the gap in rates.
    try:
        servers = list(Server.objects.filter(pk__in=claimed).only("pk", "name", "variables"))
    except spool.DB_UNAVAILABLE as exc:
        spool.forget_connection_if_broken()
        log.warning("%d disk polls skipped: PostgreSQL unavailable (%s)", len(claimed), exc)
        return
    collect_disks(servers)


@shared_task(name="collectors.poll_diskstats", ignore_result=True, soft_time_limit=10)
def poll_diskstats(server_id: int, slot: int | None = None) -> None:
    """One server's disk poll (messages sent before disk polls went out in chunks)."""
    server = server_for_task(server_id, from_roster=False)
    if server is None:
        return
    if slot is not None and not claim(f"iw:disk-polled:{server_id}:{slot}", 2 * server.poll_interval_s):
        return  # at-least-once delivery: this slot was already read
    collect_diskstats(server)


def read_diskstats_text() -> tuple[dt.datetime, str]:
    """I/O: this host's /proc/diskstats and the time it was read."""
    captured_at = dt.datetime.now(dt.UTC)
    return captured_at, PROC_DISKSTATS.read_text()


def collect_diskstats(server: Server) -> CollectorRun:
    """Read this host's /proc/diskstats and store one sample per device for `server`."""
    return collect_disks([server])[0]


def collect_disks(servers: list[Server]) -> list[CollectorRun]:
    """Read this host's /proc/diskstats once and store one sample per device for each server,
    in one transaction. A good read is recorded by its samples; a failed one by a CollectorRun
    (kind disk) with the error. Neither touches the servers' poll state: a disk read says
    nothing about whether MySQL answers. Returns each server's run (saved only when failed)."""
    started_at, started = timezone.now(), time.perf_counter()
    runs = [CollectorRun(server=s, kind=CollectorRun.Kind.DISKSTATS, started_at=started_at,
                         status=CollectorRun.Status.OK) for s in servers]
    try:
        captured_at, text = read_diskstats_text()
        rows = [r for r in parse_proc_diskstats(text) if _worth_storing(r)]
        roles = _roles_by_paths()
        save_disk_samples_of_servers([(s.pk, rows, roles(s.variables or {})) for s in servers], captured_at)
    except Exception as exc:  # a poll must never take the worker down; record and go on
        log.exception("disk poll of %d servers (%s, ...) failed", len(servers), servers[0].name if servers else "")
        for run in runs:
            run.status, run.error_kind = CollectorRun.Status.FAILED, Server.PollStatus.ERROR
            run.error = f"{type(exc).__name__}: {exc}"[:2000]
    finished_at, duration_ms = timezone.now(), (time.perf_counter() - started) * 1000
    for run in runs:
        run.finished_at, run.duration_ms = finished_at, duration_ms
    failed = [run for run in runs if run.status == CollectorRun.Status.FAILED]
    if failed:
        try:
            CollectorRun.objects.bulk_create(failed)
        except spool.DB_UNAVAILABLE:
            spool.forget_connection_if_broken()
            log.warning("%d failed disk polls not recorded: PostgreSQL unavailable", len(failed))
    return runs


def _roles_by_paths():
    """device_roles, computed once per (datadir, redo directory) for a batch of servers."""
    known: dict[tuple[str, str], dict[str, str]] = {}

    def roles(variables: dict[str, str]) -> dict[str, str]:
        key = (variables.get("datadir") or "", variables.get("innodb_log_group_home_dir") or "")
        if key not in known:
            known[key] = device_roles(variables)
        return known[key]

    return roles


def _worth_storing(row) -> bool:
    # Never-used devices (loop, zram, ram) print all zeros: nothing to chart, rows to skip.
    # 7-field partition lines (2.6.0-2.6.24) have no time counters: pt-diskstats skips them too.
    return row.field_count >= 14 and any((row.reads, row.writes, row.io_ms, row.in_progress))


def device_roles(variables: dict[str, str]) -> dict[str, str]:
    """{device name: "datadir" | "redo"} for the devices under the server's datadir and redo log.

    The redo directory is `innodb_log_group_home_dir`, relative to the datadir when not absolute
    (the default "./"). When both live on one device it is tagged "datadir"."""
    datadir = variables.get("datadir") or ""
    if not datadir:
        return {}
    redo_dir = variables.get("innodb_log_group_home_dir") or "./"
    if not os.path.isabs(redo_dir):
        redo_dir = os.path.normpath(os.path.join(datadir, redo_dir))
    roles: dict[str, str] = {}
    for role, path in (("redo", redo_dir), ("datadir", datadir)):  # datadir last: it wins a shared device
        name = _device_name(path)
        if name:
            roles[name] = role
    return roles


def _device_name(path: str) -> str | None:
    from collectors.sources_disk import device_for_path  # dm/LVM resolution: see that module

    try:
        return device_for_path(path).name
    except (OSError, LookupError, ValueError) as exc:
        # The path is not on this host (agent misrouted) or not a block device (tmpfs, overlay).
        log.info("no block device for %s: %s", path, exc)
        return None


def read_iostat_text(timeout_s: float = 10) -> tuple[dt.datetime, str] | None:
    """I/O: one `iostat -dxk` report (since boot), or None when sysstat is not installed."""
    binary = shutil.which("iostat")
    if binary is None:
        return None
    captured_at = dt.datetime.now(dt.UTC)
    try:
        done = subprocess.run([binary, "-dxk"], capture_output=True, text=True, timeout=timeout_s,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("iostat failed: %s", exc)
        return None
    return (captured_at, done.stdout) if done.returncode == 0 else None
