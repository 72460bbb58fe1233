"""`make demo`: a real write workload on the local MariaDB, tuning changes on a schedule, and the
detected annotations with their effect reports and the checkpoint-age alert.

Settings that make flushing visible on a small machine (measured; the capture in
tests/fixtures/captures/ was taken with them): at full sysbench speed the checkpoint age sits at
the async point, MariaDB flushes "furiously" there and adaptive flushing changes nothing. With a
48 MB redo log, `innodb_io_capacity` 100, dirty-pages lwm 0.001 % (at the default 0 the page cleaner
sleeps until the async point, so adaptive flushing never runs) and oltp_write_only held at one rate
throughout, the age climbs with adaptive flushing OFF. The demo switches it ON the way a DBA
watching the chart would, once the age has passed 60 % of the async point (or the checkpoint-age
alert fires, or two phases have passed): below the async point, where adaptive flushing can act.
Switched at the async point it changes nothing (MariaDB flushes furiously there either way), which
is a different story, told by a capture in tests/fixtures/captures/. The INNODB_METRICS counters of
flushing by type and of purge are enabled for the run, so the effect report sees the adaptive flush
path engage. All are dynamic (SET GLOBAL; the redo log resizes online), and the server's own values
are restored at the end whatever happens."""

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

from alerting import evaluation as alerting
from alerting.models import AlertEvent, AlertState
from analysis import checkpoint
from analysis.effect import display_value, metric_label
from annotations import effects
from annotations.models import Annotation
from collectors.tasks import poll_once
from servers.models import Server

DEMO_DB = "innowatch_demo"
TABLES, TABLE_SIZE, THREADS = 8, 200_000, 8
# (seconds after the start, tx/s): one rate for the whole run, so that the load is the same on both
# sides of every change and the effect report compares like with like. Measured here: at 160 tx/s on
# freshly prepared tables the redo rate is ~0.8 MB/s (2 MB/s in the first seconds) and the age
# passes 60 % of a 35 MB async point within 10 s, too soon to see a before window; at 80 tx/s it
# climbs for a minute or more.
LOADS = ((0, 80),)
# The effect report needs a before window: no trigger counts before this much of the OFF phase.
MIN_BEFORE_S = 60.0
# Switch while the age is still well below the async point, where adaptive flushing can act.
SWITCH_AT_PCT_OF_ASYNC = 60.0
MONITORS = ("buffer_flush_adaptive_total_pages", "buffer_flush_background_total_pages",
            "buffer_flush_sync_total_pages", "buffer_LRU_batch_flush_total_pages", "purge_undo_log_pages",
            "purge_del_mark_records", "purge_upd_exist_or_extern_records")
ALERT = "checkpoint-age-near-async"  # built-in rule (migration 0003)
DRAINED_BYTES = 6 * 1024**2  # where the capture's OFF phase started
START_SETTINGS = {
    "innodb_buffer_pool_size": str(1024**3),
    "innodb_log_file_size": str(48 * 1024**2),
    "innodb_io_capacity": "100",
    "innodb_max_dirty_pages_pct_lwm": "0.001",
    "innodb_adaptive_flushing_lwm": "10",
    "innodb_adaptive_flushing": "OFF",
}


@dataclasses.dataclass(frozen=True)
class Step:
    after_s: float  # seconds after the previous step (or the start) at the latest
    variable: str
    value: str
    on_alert: str = ""  # or as soon as this alert rule fires, as a DBA paged by it would
    at_pct_of_async: float | None = None  # or once the checkpoint age passes this share of the async point
    not_before_s: float = 0.0  # triggers count only after this long


def schedule(phase_s: float) -> list[Step]:
    """Adaptive flushing ON once the age passes 60 % of the async point (or the checkpoint-age alert
    fires, or two phases have passed), then io_capacity raised a phase later, and a last phase."""
    return [Step(2 * phase_s, "innodb_adaptive_flushing", "ON", on_alert=ALERT,
                 at_pct_of_async=SWITCH_AT_PCT_OF_ASYNC, not_before_s=MIN_BEFORE_S),
            Step(phase_s, "innodb_io_capacity", "400")]


def age_pct_of_async(cur, server: Server) -> float | None:
    cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_checkpoint_age', 'Innodb_checkpoint_max_age')")
    status = {k: int(v) for k, v in cur.fetchall()}
    # MariaDB states its max checkpoint age; the thresholds follow from it (analysis.checkpoint).
    limits = checkpoint.checkpoint_thresholds(server.flavor, server.version, None,
                                              status_checkpoint_max_age=status.get("Innodb_checkpoint_max_age"))
    if limits is None or not limits.async_bytes:
        return None
    return 100.0 * status.get("Innodb_checkpoint_age", 0) / limits.async_bytes


def enable_monitors(cur) -> list[str]:
    """Turn on the INNODB_METRICS counters the effect report reads; returns those that were off."""
    cur.execute("SELECT NAME FROM information_schema.INNODB_METRICS WHERE NAME IN (%s) AND ENABLED = 0"
                % ",".join(["%s"] * len(MONITORS)), MONITORS)
    were_off = [name for (name,) in cur.fetchall()]
    for name in were_off:
        cur.execute("SET GLOBAL innodb_monitor_enable = %s", (name,))
    return were_off


def _set_global(cur, name: str, value: str) -> None:
    # Names come from our own constants; values are quoted by the driver.
    cur.execute(f"SET GLOBAL {name} = %s", (typed_value(value),))


def typed_value(value: str):
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


def checkpoint_age(cur) -> int:
    cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_checkpoint_age'")
    return int(cur.fetchone()[1])


def drain_redo_log(cur, say: Callable[[str], None], below_bytes: int = DRAINED_BYTES,
                   timeout_s: float = 300) -> None:
    """Flush hard until the checkpoint age is small, then restore the start settings: sysbench
    prepare (or anyone's earlier load) leaves the age at the async point, and a demo that starts
    there shows nothing but an alert firing at once."""
    apply_settings(cur, {"innodb_adaptive_flushing": "ON", "innodb_io_capacity": "2000"})
    deadline = time.monotonic() + timeout_s
    calm = 0  # a redo log resize or a buffer pool resize can still be under way: wait for 5 calm seconds
    while calm < 5 and time.monotonic() < deadline:
        age = checkpoint_age(cur)
        calm = calm + 1 if age <= below_bytes else 0
        time.sleep(1)
    say(f"redo log drained: checkpoint age {age / 1024**2:.1f} MB")
    apply_settings(cur, {name: START_SETTINGS[name] for name in ("innodb_io_capacity", "innodb_adaptive_flushing")})


def _poll(server: Server, force_variables: bool) -> None:
    # force_variables: read SHOW GLOBAL VARIABLES on this poll, not up to a minute later.
    poll_once(server, force_variables=force_variables)


def alert_firing(server: Server, rule_name: str, since: dt.datetime) -> bool:
    """Firing, and fired during this demo: a state still firing from an earlier run does not count."""
    return AlertState.objects.filter(server=server, rule__name=rule_name, state="firing",
                                     firing_since__gte=since.timestamp()).exists()


class Workload:
    """The sysbench processes of LOADS, each started at its offset and all stopped together."""

    def __init__(self, admin: dict, duration_s: float, log_path: Path, say: Callable[[str], None]):
        self.admin, self.duration_s, self.log_path, self.say = admin, duration_s, log_path, say
        self.pending = list(LOADS)
        self.processes: list[subprocess.Popen] = []
        self.started = time.monotonic()
        self.rate = 0

    def start_due(self) -> None:
        elapsed = time.monotonic() - self.started
        while self.pending and self.pending[0][0] <= elapsed:
            _, rate = self.pending.pop(0)
            self.rate += rate
            with self.log_path.open("a") as log:
                args = sysbench_args(self.admin, "run", f"--rate={rate}", f"--time={int(self.duration_s - elapsed) + 30}",
                                     "--report-interval=10")
                self.processes.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
            self.say(f"{dt.datetime.now(dt.UTC):%H:%M:%S}  sysbench oltp_write_only now at {self.rate} tx/s")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


def run_schedule(server: Server, cur, steps: list[Step], tail_s: float, interval_s: float,
                 say: Callable[[str], None], workload: Workload | None = None) -> None:
    """Poll (and evaluate alerts) every `interval_s` while applying `steps`, then `tail_s` more."""
    since = dt.datetime.now(dt.UTC)
    pending = list(steps)
    step_started = time.monotonic()
    end_at = None
    force = False
    while end_at is None or time.monotonic() < end_at:
        tick = time.monotonic()
        if workload is not None:
            workload.start_due()
        if pending:
            step = pending[0]
            armed = tick - step_started >= step.not_before_s
            fired = armed and step.on_alert and alert_firing(server, step.on_alert, since)
            share = age_pct_of_async(cur, server) if step.at_pct_of_async else None
            high = armed and share is not None and share >= step.at_pct_of_async
            if fired or high or tick - step_started >= step.after_s:
                pending.pop(0)
                why = (f"{step.on_alert} is firing" if fired else
                       f"checkpoint age at {share:.0f} % of the async point" if high else f"after {step.after_s:.0f} s")
                say(f"{dt.datetime.now(dt.UTC):%H:%M:%S}  SET GLOBAL {step.variable} = {step.value} ({why})")
                _set_global(cur, step.variable, step.value)
                step_started, force = tick, True
                if not pending:
                    end_at = tick + tail_s
        _poll(server, force)
        # What beat's evaluate_alerts does every 10 s, for this server, after each poll.
        alerting.evaluate_server_now(server, alerting.enabled_rules(), dt.datetime.now(dt.UTC))
        force = False
        time.sleep(max(0.0, interval_s - (time.monotonic() - tick)))


def alert_lines(server: Server, since: dt.datetime) -> list[str]:
    """Alerts that fired or resolved: what pages a DBA. Pending states that never fired are only counted."""
    events = AlertEvent.objects.filter(server=server, ts__gte=since).select_related("rule").order_by("ts")
    lines = [f"[alert] {e.ts:%H:%M:%S} {e.rule.name} {e.state}"
             + (f" (value {e.value:.1f})" if e.value is not None else "")
             for e in events if e.state in ("firing", "resolved")]
    pending = sum(1 for e in events if e.state == "pending")
    if pending:
        lines.append(f"[alert] {pending} pending state(s) that ended without firing")
    return lines or ["[alert] no alert fired"]


def report_lines(server: Server, since: dt.datetime, phase_s: float, settle_s: float) -> list[str]:
    lines = alert_lines(server, since)
    window = dt.timedelta(seconds=max(phase_s - settle_s, 10))
    settle = dt.timedelta(seconds=settle_s)
    for a in Annotation.objects.filter(server=server, time__gte=since).order_by("time"):
        lines.append(f"[{a.kind}] {a.time:%H:%M:%S} {a.text}")
        if a.kind == Annotation.Kind.VARIABLE_CHANGE and a.time > since:
            body, *_ = effects.effect_report(server, effects.annotation_windows(a, window, settle))
            lines += verdict_lines(body)
            lines.append(f"    page:   /annotations/{a.pk}/effect/?window={int(window.total_seconds())}s"
                         f"&settle={int(settle_s)}s")
    return lines


STORY_METRICS = ("checkpoint_age_bytes", "pages_flushed_per_s", "pages_dirty", "history_list_length",
                 "trx_per_s")


def verdict_lines(body: dict) -> list[str]:
    """The verdicts of the metrics the demo is about, the mechanism, and the summary."""
    lines = []
    for name in STORY_METRICS:
        m = body["metrics"].get(name)
        if m is None:
            continue
        scale = max(abs(m["before"]["mean"] or 0), abs(m["after"]["mean"] or 0))
        moved = (f"{display_value(name, m['before']['mean'], scale)} → {display_value(name, m['after']['mean'], scale)}"
                 if m["before"]["mean"] is not None and m["after"]["mean"] is not None else "no samples")
        lines.append(f"    {metric_label(name):22s} {m['verdict']:17s} {moved}  ({m['reason']})")
    mechanism = body["mechanism"]
    state = {True: "engaged", False: "did not engage", None: "unknown"}[mechanism["engaged"]]
    lines.append(f"    mechanism: {state}: {mechanism['evidence']}")
    lines.append(f"    summary: {body['summary']}")
    return lines


def run_demo(server: Server, admin: dict, *, phase_s: float = 120, interval_s: float = 2,
             settle_s: float = 30, say: Callable[[str], None] = print) -> list[str]:
    """The whole demo; returns the report lines. The server's settings are restored at the end."""
    conn = MySQLdb.connect(**admin, autocommit=True)
    cur = conn.cursor()
    original = read_globals(cur, list(START_SETTINGS) + ["innodb_io_capacity_max"])
    log_path = Path(settings.BASE_DIR) / "var" / "demo-sysbench.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    workload = None
    monitors_off: list[str] = []
    try:
        say("demo settings: " + ", ".join(f"{k}={v}" for k, v in START_SETTINGS.items()))
        apply_settings(cur, START_SETTINGS)
        monitors_off = enable_monitors(cur)
        prepare_tables(cur, admin, say)
        drain_redo_log(cur, say)
        steps = schedule(phase_s)
        longest = sum(step.after_s for step in steps) + phase_s
        say(f"at most {longest:.0f} s of sysbench (log: {log_path})")
        poll_once(server)  # the first snapshot, so the next diff has a baseline
        first_poll_at = dt.datetime.now(dt.UTC)
        workload = Workload(admin, longest, log_path, say)
        run_schedule(server, cur, steps, phase_s, interval_s, say, workload)
    finally:
        if workload is not None:
            workload.stop()
        say("restoring: " + ", ".join(f"{k}={v}" for k, v in original.items()))
        apply_settings(cur, {k: v for k, v in original.items() if k != "innodb_io_capacity_max"})
        for name in monitors_off:
            cur.execute("SET GLOBAL innodb_monitor_disable = %s", (name,))
        conn.close()
    return report_lines(server, first_poll_at, phase_s, settle_s)
