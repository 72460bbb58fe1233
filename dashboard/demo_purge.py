"""The purge act of `make demo`: an update-heavy load at a fixed rate with purge throttled (one
purge thread, a batch of one undo page), then more purge threads and a bigger batch; then a
reporting connection that opens a consistent snapshot, sits on it idle, and commits. While it
holds the view the act checks, poll by poll, that the server page's "what holds purge back" (the
purge-blockers API) and the history-list alert name that connection, and prints when they did.

On the 2-CPU machine this was built on, purge kept up even throttled (see the captures'
PROVENANCE.md), so the purge-threads change is usually judged "no effect": the report says what
the server did. innodb_purge_threads and innodb_purge_batch_size are dynamic on MariaDB 10.5+;
on a server where they are not, the act skips that part. Every setting, the reporting account and
the INNODB_METRICS counters it enables are put back at the end, whatever happens."""

from __future__ import annotations

import datetime as dt
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import MySQLdb
from django.conf import settings

from alerting import evaluation as alerting
from alerting import notify
from alerting.models import AlertState
from dashboard import demo
from servers.models import Server
from timeseries.api import purge_blockers

THROTTLED = {"innodb_purge_threads": "1", "innodb_purge_batch_size": "1"}
MORE_PURGE = {"innodb_purge_threads": "4", "innodb_purge_batch_size": "300"}
UPDATES_PER_S = 2000  # autocommit index-free updates: ~2,000 undo records a second for purge
REPORTING_USER = "iw_demo_reporting"
HLL_RULES = ("hll-high-within-the-hour", "hll-growing", "hll-high")


def update_load(admin: dict, seconds: float, log_path: Path) -> subprocess.Popen:
    args = demo.sysbench_args(admin, "run", f"--rate={UPDATES_PER_S}", f"--time={int(seconds)}",
                              "--report-interval=10")
    args[1] = "oltp_update_non_index"
    with log_path.open("a") as log:
        return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)


class Holder:
    """The reporting connection: START TRANSACTION WITH CONSISTENT SNAPSHOT, one read, then idle."""

    def __init__(self, cur, admin: dict):
        self.admin_cur, self.password = cur, secrets.token_urlsafe(12)
        cur.execute("CREATE USER IF NOT EXISTS %s@'127.0.0.1' IDENTIFIED BY %s", (REPORTING_USER, self.password))
        cur.execute(f"GRANT SELECT ON {demo.DEMO_DB}.* TO %s@'127.0.0.1'", (REPORTING_USER,))
        self.conn = MySQLdb.connect(host="127.0.0.1", port=admin["port"], user=REPORTING_USER,
                                    password=self.password, autocommit=False)
        self.thread_id = None

    def hold(self) -> int:
        cur = self.conn.cursor()
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute(f"SELECT COUNT(*), SUM(k) FROM {demo.DEMO_DB}.sbtest1 WHERE id <= 10000")
        cur.execute("SELECT CONNECTION_ID()")
        self.thread_id = int(cur.fetchone()[0])
        return self.thread_id

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        try:
            self.conn.rollback()
            self.conn.close()
        finally:
            self.admin_cur.execute("DROP USER IF EXISTS %s@'127.0.0.1'", (REPORTING_USER,))


def _tick(server: Server, force_variables: bool = False) -> dt.datetime:
    demo._poll(server, force_variables)
    now = dt.datetime.now(dt.UTC)
    alerting.evaluate_server_now(server, alerting.enabled_rules(), now)
    return now


def named_now(server: Server, thread_id: int, since: dt.datetime, now: dt.datetime) -> tuple[dict | None, str | None]:
    """(the page's blocker row naming `thread_id`, the firing HLL alert's cause text naming it)."""
    row = next((b for b in purge_blockers(server, since, now) if b["thread_id"] == thread_id), None)
    firing = AlertState.objects.filter(server=server, rule__name__in=HLL_RULES, state="firing",
                                       firing_since__gte=since.timestamp()).select_related("rule").first()
    cause = notify.cause_for(server, firing.rule.metric, now) if firing else None
    text = f"{firing.rule.name}: {cause['text']}" if cause and cause.get("thread_id") == thread_id else None
    return row, text


def watch_hold(server: Server, thread_id: int, hold_s: float, interval_s: float, since: dt.datetime,
               say: Callable[[str], None]) -> list[str]:
    """Poll through the hold; note the first poll at which the page and the alert named the holder."""
    page_at = alert_at = None
    lines = []
    end = time.monotonic() + hold_s
    while time.monotonic() < end:
        tick = time.monotonic()
        now = _tick(server)
        row, alert = named_now(server, thread_id, since, now)
        if row and page_at is None:
            page_at = now
            lines.append(f"[purge] {now:%H:%M:%S} page names thread {row['thread_id']} {row['user']}@{row['host']} "
                         f"(open {row['max_age_s']} s) as what holds purge back")
            say(lines[-1])
        if alert and alert_at is None:
            alert_at = now
            lines.append(f"[purge] {now:%H:%M:%S} alert {alert}")
            say(lines[-1])
        time.sleep(max(0.0, interval_s - (time.monotonic() - tick)))
    if page_at is None:
        lines.append(f"[purge] the page did NOT name thread {thread_id} during the hold")
    if alert_at is None:
        lines.append("[purge] no history-list alert fired naming the holder during the hold")
    return lines


def _poll_for(server: Server, seconds: float, interval_s: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        tick = time.monotonic()
        _tick(server)
        time.sleep(max(0.0, interval_s - (time.monotonic() - tick)))


def run_purge_act(server: Server, admin: dict, *, phase_s: float = 60, hold_s: float = 120, tail_s: float = 30,
                  interval_s: float = 2, settle_s: float = 15, say: Callable[[str], None] = print) -> list[str]:
    """The purge act; returns its report lines. Settings, account and counters are restored."""
    conn = MySQLdb.connect(**admin, autocommit=True)
    cur = conn.cursor()
    original = demo.read_globals(cur, list(THROTTLED))
    log_path = Path(settings.BASE_DIR) / "var" / "demo-purge-sysbench.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    load = holder = None
    monitors_off: list[str] = []
    lines: list[str] = []
    try:
        demo.prepare_tables(cur, admin, say)
        monitors_off = demo.enable_monitors(cur)
        settable = _try_settings(cur, THROTTLED, say)
        _tick(server, force_variables=True)
        since = dt.datetime.now(dt.UTC)
        load = update_load(admin, 2 * phase_s + hold_s + tail_s + 30, log_path)
        say(f"{since:%H:%M:%S}  purge act: oltp_update_non_index at {UPDATES_PER_S}/s, purge throttled "
            f"({', '.join(f'{k}={v}' for k, v in THROTTLED.items())}); log: {log_path}")
        _poll_for(server, phase_s, interval_s)
        if settable:
            say(f"{dt.datetime.now(dt.UTC):%H:%M:%S}  SET GLOBAL " + ", ".join(f"{k} = {v}" for k, v in MORE_PURGE.items()))
            demo.apply_settings(cur, MORE_PURGE)
            demo._poll(server, True)
        _poll_for(server, phase_s, interval_s)
        holder = Holder(cur, admin)
        thread_id = holder.hold()
        say(f"{dt.datetime.now(dt.UTC):%H:%M:%S}  thread {thread_id} {REPORTING_USER}@127.0.0.1: "
            f"START TRANSACTION WITH CONSISTENT SNAPSHOT, one SELECT, then idle for {hold_s:.0f} s")
        lines += watch_hold(server, thread_id, hold_s, interval_s, since, say)
        holder.commit()
        say(f"{dt.datetime.now(dt.UTC):%H:%M:%S}  thread {thread_id}: COMMIT")
        _poll_for(server, tail_s, interval_s)
        row, _ = named_now(server, thread_id, dt.datetime.now(dt.UTC) - dt.timedelta(seconds=3 * interval_s),
                           dt.datetime.now(dt.UTC))
        lines.append(f"[purge] after the COMMIT the page names {'thread ' + str(thread_id) if row else 'nobody'}")
    finally:
        if load is not None and load.poll() is None:
            load.terminate()
            load.wait(timeout=30)
        if holder is not None:
            holder.close()
        say("restoring: " + ", ".join(f"{k}={v}" for k, v in original.items()))
        demo.apply_settings(cur, original)
        for name in monitors_off:
            cur.execute("SET GLOBAL innodb_monitor_disable = %s", (name,))
        conn.close()
    return lines + demo.report_lines(server, since, phase_s, settle_s)


def _try_settings(cur, values: dict[str, str], say: Callable[[str], None]) -> bool:
    """SET GLOBAL the purge settings; False (and said) where the version makes them restart-only."""
    try:
        demo.apply_settings(cur, values)
        return True
    except MySQLdb.OperationalError as exc:  # 1238: read-only variable (MySQL, MariaDB < 10.5)
        say(f"purge settings are not dynamic here ({exc}); the act runs without the purge-threads change")
        return False
