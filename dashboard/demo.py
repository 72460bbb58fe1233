"""`make demo`: a real write workload on the local MariaDB, tuning changes on a schedule, and the
detected annotations with their effect reports (issue 7).

Settings that make flushing visible on a small machine (measured, see issue 7): at full sysbench
speed the checkpoint age sits at the limit and adaptive flushing changes nothing; with a 48 MB
redo log, io_capacity 1000, dirty-pages lwm 1 %, a 1 GB buffer pool and oltp_write_only limited
to 1200 tx/s, switching adaptive flushing ON changes both the flush rate and the checkpoint age.
All are dynamic (SET GLOBAL; the redo log resizes online), and the server's own values are
restored at the end whatever happens."""

from __future__ import annotations

import dataclasses
import datetime as dt
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import MySQLdb
from django.conf import settings

from collectors.tasks import poll_once
from dashboard import effects
from dashboard.models import Annotation, Server

DEMO_DB = "innowatch_demo"
TABLES, TABLE_SIZE, THREADS, RATE = 8, 200_000, 8, 1200
START_SETTINGS = {
    "innodb_buffer_pool_size": str(1024**3),
    "innodb_log_file_size": str(48 * 1024**2),
    "innodb_io_capacity": "1000",
    "innodb_max_dirty_pages_pct_lwm": "1",
    "innodb_adaptive_flushing": "OFF",
}


@dataclasses.dataclass(frozen=True)
class Step:
    at_s: float
    variable: str
    value: str


def schedule(phase_s: float) -> list[Step]:
    """Adaptive flushing ON after one phase, io_capacity raised after two; three phases in all."""
    return [Step(phase_s, "innodb_adaptive_flushing", "ON"), Step(2 * phase_s, "innodb_io_capacity", "2000")]


def _set_global(cur, name: str, value: str) -> None:
    # Names come from our own constants; values are quoted by the driver.
    cur.execute(f"SET GLOBAL {name} = %s", (_typed(value),))


def _typed(value: str):
    # Numeric variables reject quoted strings (error 1232): pass numbers as numbers.
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def read_globals(cur, names) -> dict[str, str]:
    cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)" % ",".join(["%s"] * len(names)), tuple(names))
    return {k: v for k, v in cur.fetchall()}


def apply_settings(cur, values: dict[str, str]) -> None:
    for name, value in values.items():
        _set_global(cur, name, value)


def sysbench_args(admin: dict, command: str, *extra: str) -> list[str]:
    return [
        shutil.which("sysbench") or "/usr/bin/sysbench", "oltp_write_only", "--db-driver=mysql",
        f"--mysql-host={admin['host']}", f"--mysql-port={admin['port']}", f"--mysql-user={admin['user']}",
        f"--mysql-password={admin['password']}", f"--mysql-db={DEMO_DB}", f"--tables={TABLES}",
        f"--table-size={TABLE_SIZE}", f"--threads={THREADS}", *extra, command,
    ]


def prepare_tables(cur, admin: dict, say: Callable[[str], None]) -> None:
    """Create the sysbench tables once; a rerun reuses them."""
    cur.execute(f"CREATE DATABASE IF NOT EXISTS {DEMO_DB}")
    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (DEMO_DB,))
    if cur.fetchone()[0] >= TABLES:
        return
    say(f"sysbench prepare: {TABLES} tables × {TABLE_SIZE:,} rows (about a minute)")
    subprocess.run(sysbench_args(admin, "cleanup"), check=False, capture_output=True)
    subprocess.run(sysbench_args(admin, "prepare"), check=True, capture_output=True)


def _poll(server: Server, force_variables: bool) -> None:
    if force_variables:
        server.variables_at = None  # read SHOW GLOBAL VARIABLES on this poll, not a minute later
    poll_once(server)


def run_schedule(server: Server, cur, steps: list[Step], total_s: float, interval_s: float,
                 say: Callable[[str], None]) -> None:
    """Poll every `interval_s` while applying `steps` at their offsets."""
    started = time.monotonic()
    pending = list(steps)
    force = False
    while (elapsed := time.monotonic() - started) < total_s:
        if pending and elapsed >= pending[0].at_s:
            step = pending.pop(0)
            say(f"{elapsed:5.0f} s  SET GLOBAL {step.variable} = {step.value}")
            _set_global(cur, step.variable, step.value)
            force = True
        _poll(server, force)
        force = False
        time.sleep(max(0.0, interval_s - (time.monotonic() - started - elapsed)))


def report_lines(server: Server, since: dt.datetime, phase_s: float, settle_s: float) -> list[str]:
    lines = []
    window = dt.timedelta(seconds=max(phase_s - settle_s, 10))
    settle = dt.timedelta(seconds=settle_s)
    for a in Annotation.objects.filter(server=server, time__gte=since).order_by("time"):
        lines.append(f"[{a.kind}] {a.time:%H:%M:%S} {a.text}")
        if a.kind == Annotation.Kind.VARIABLE_CHANGE:
            body, _, _ = effects.effect_report(server, effects.annotation_windows(a, window, settle))
            lines.append(f"    effect: {body['summary']}")
            lines.append(f"    page:   /annotations/{a.pk}/effect/?window={int(window.total_seconds())}s"
                         f"&settle={int(settle_s)}s")
    return lines


def run_demo(server: Server, admin: dict, *, phase_s: float = 180, interval_s: float = 2,
             settle_s: float = 30, say: Callable[[str], None] = print) -> list[str]:
    """The whole demo; returns the report lines. The server's settings are restored at the end."""
    conn = MySQLdb.connect(**admin, autocommit=True)
    cur = conn.cursor()
    original = read_globals(cur, list(START_SETTINGS) + ["innodb_io_capacity_max"])
    log_path = Path(settings.BASE_DIR) / "var" / "demo-sysbench.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    load = None
    since = dt.datetime.now(dt.UTC)
    try:
        say("demo settings: " + ", ".join(f"{k}={v}" for k, v in START_SETTINGS.items()))
        apply_settings(cur, START_SETTINGS)
        prepare_tables(cur, admin, say)
        total = phase_s * (len(schedule(phase_s)) + 1)
        with log_path.open("w") as log:
            load = subprocess.Popen(sysbench_args(admin, "run", f"--rate={RATE}", f"--time={int(total) + 30}",
                                                  "--report-interval=10"), stdout=log, stderr=subprocess.STDOUT)
        say(f"sysbench oltp_write_only at {RATE} tx/s for {total:.0f} s (log: {log_path})")
        poll_once(server)  # the first snapshot, so the next diff has a baseline
        run_schedule(server, cur, schedule(phase_s), total, interval_s, say)
    finally:
        if load is not None and load.poll() is None:
            load.terminate()
            load.wait(timeout=30)
        say("restoring: " + ", ".join(f"{k}={v}" for k, v in original.items()))
        apply_settings(cur, {k: v for k, v in original.items() if k != "innodb_io_capacity_max"})
        conn.close()
    return report_lines(server, since, phase_s, settle_s)
