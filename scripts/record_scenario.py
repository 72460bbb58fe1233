#!/usr/bin/env python
"""Record one named scenario of the local MariaDB to tests/fixtures/captures/<name>.jsonl.gz.

    record_scenario.py list                 the scenarios
    record_scenario.py run NAME [--scale F] apply its settings, run its sysbench load(s) at fixed
                                            rates, capture every second while its changes are made
                                            at set times, restore every setting, write the file
    record_scenario.py summary FILE [EVENTS]  what a capture shows around each change (for PROVENANCE.md)

Traffic goes to 127.0.0.1 only. Every global setting a scenario touches is read first and set
back in a `finally:` (the redo log size included); INNODB_METRICS counters it enables are disabled
again. The sysbench tables (sbtest, 8 x 200,000 rows) are created once and kept. The exact UTC time
of each change is printed and written to var/captures/<name>.events.json with the sysbench logs.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import MySQLdb  # noqa: E402

from collectors import sources  # noqa: E402

ADMIN = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}
PARAMS = sources.ConnectionParams("127.0.0.1", 3306, "root", "", 5)
DB, TABLES, TABLE_SIZE = "sbtest", 8, 200_000
OUT_DIR = ROOT / "tests" / "fixtures" / "captures"
WORK_DIR = ROOT / "var" / "captures"
MB = 1024**2
# Counters the capture should carry; MariaDB ships the flush-by-type and purge ones disabled.
MONITORS = ("buffer_flush_adaptive_total_pages", "buffer_flush_background_total_pages",
            "buffer_flush_sync_total_pages", "buffer_LRU_batch_flush_total_pages", "purge_invoked",
            "purge_undo_log_pages", "purge_del_mark_records", "purge_upd_exist_or_extern_records",
            "trx_rseg_history_len")
# The demo's regime (dashboard/demo.py): a 48 MB redo log, a warm 1 GB buffer pool, and a
# dirty-pages low-water mark so the page cleaner works before the async point.
DEMO = {"innodb_buffer_pool_size": str(1024 * MB), "innodb_log_file_size": str(48 * MB),
        "innodb_io_capacity": "100", "innodb_io_capacity_max": "2000",
        "innodb_max_dirty_pages_pct_lwm": "0.001", "innodb_adaptive_flushing_lwm": "10",
        "innodb_adaptive_flushing": "ON"}


@dataclasses.dataclass(frozen=True)
class Load:
    test: str  # sysbench oltp_* script
    rate: int  # tx/s (--rate)
    threads: int = 8
    start_s: float = 0
    stop_s: float | None = None  # None: until the end


@dataclasses.dataclass(frozen=True)
class Change:
    at_s: float  # seconds after the capture started (at the latest, with `when`)
    settings: dict[str, str] = dataclasses.field(default_factory=dict)
    action: str = ""  # "hold_snapshot" / "commit_snapshot", optionally ":<key>" for one of several
    # or as soon as this is true of the latest reading's SHOW GLOBAL STATUS, if before at_s
    when: Callable[[list[dict]], bool] | None = None
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    seconds: float
    settings: dict[str, str]
    loads: tuple[Load, ...]
    changes: tuple[Change, ...]
    drain: bool = True  # checkpoint age below 6 MB before the load starts
    with_trx: bool = True
    about: str = ""


def _age_high(history: list[dict], fraction=0.8, hold_s=20) -> bool:
    """The checkpoint age above `fraction` of the async point for the last `hold_s` readings."""
    if len(history) < hold_s:
        return False
    for gs in history[-hold_s:]:
        max_age = int(gs.get("Innodb_checkpoint_max_age", 0) or 0)
        if not max_age or int(gs.get("Innodb_checkpoint_age", 0)) < fraction * max_age * 7 / 8:
            return False
    return True


SCENARIOS = {s.name: s for s in (
    Scenario(
        "mariadb-10.11--adaptive-flushing-pinned-at-async", 390,
        {**DEMO, "innodb_io_capacity": "200", "innodb_adaptive_flushing": "OFF"},
        (Load("oltp_write_only", 500),),
        (Change(210, {"innodb_adaptive_flushing": "ON"}),),
        about="load at the async point, then adaptive flushing OFF -> ON"),
    Scenario(
        # On 2 CPUs purge drains a backlog of 100k+ records in seconds once nothing holds it back,
        # so a falling history does not stay steady for minutes (and with several overlapping
        # snapshots released oldest first, MariaDB 10.11's history length kept rising until the
        # last one closed); a held read view makes it rise steadily instead, for a reason the
        # change has no mechanism on.
        "mariadb-10.11--purge-threads-while-hll-rises", 330,
        {"innodb_buffer_pool_size": str(1024 * MB), "innodb_purge_threads": "4"},
        (Load("oltp_update_non_index", 500, 4),),
        (Change(15, action="hold_snapshot", note="held to the end: history grows with every update"),
         Change(170, {"innodb_purge_threads": "1"})),
        drain=False, about="history rising steadily behind a held snapshot; purge threads 4 -> 1 mid-way"),
    Scenario(
        "mariadb-10.11--purge-threads-no-effect", 300,
        {"innodb_buffer_pool_size": str(1024 * MB), "innodb_purge_threads": "1"},
        (Load("oltp_update_non_index", 2000),),
        (Change(150, {"innodb_purge_threads": "4"}),),
        drain=False, about="steady autocommit updates, purge keeping up; purge threads 1 -> 4"),
    Scenario(
        "mariadb-10.11--held-snapshot", 360,
        {"innodb_buffer_pool_size": str(1024 * MB)},
        (Load("oltp_update_non_index", 1000),),
        (Change(90, action="hold_snapshot"), Change(240, action="commit_snapshot")),
        drain=False, about="a reporting session holds a consistent snapshot idle for 150 s"),
    Scenario(
        "mariadb-10.11--purge-throttled-then-more-threads", 300,
        {"innodb_buffer_pool_size": str(1024 * MB), "innodb_purge_threads": "1",
         "innodb_purge_batch_size": "1"},
        (Load("oltp_update_index", 4000),),
        (Change(150, {"innodb_purge_threads": "4", "innodb_purge_batch_size": "300"}),),
        drain=False, about="purge throttled (1 thread, batch 1) under heavy updates, then 4 threads, batch 300"),
    Scenario(
        "mariadb-10.11--io-capacity-raise", 330,
        {**DEMO},
        (Load("oltp_write_only", 160),),
        (Change(165, {"innodb_io_capacity": "400"}),),
        about="the demo regime at 160 tx/s, io_capacity 100 -> 400"),
    Scenario(
        "mariadb-10.11--redo-log-resize", 330,
        {**DEMO, "innodb_adaptive_flushing": "OFF"},
        (Load("oltp_write_only", 220),),
        (Change(165, {"innodb_log_file_size": str(128 * MB)}),),
        about="checkpoint age climbing to the async point of a 48 MB log, then the log resized to 128 MB"),
    Scenario(
        # Recorded after the what-if model was written: held out from its development.
        "mariadb-10.11--io-capacity-lower", 330,
        {**DEMO, "innodb_io_capacity": "400"},
        (Load("oltp_write_only", 250),),
        (Change(165, {"innodb_io_capacity": "150"}),),
        about="the demo regime at 250 tx/s, io_capacity 400 -> 150"),
    Scenario(
        "mariadb-10.11--redo-log-shrink", 330,
        {**DEMO, "innodb_log_file_size": str(128 * MB), "innodb_adaptive_flushing": "OFF"},
        (Load("oltp_write_only", 220),),
        (Change(165, {"innodb_log_file_size": str(48 * MB)}),),
        about="checkpoint age climbing in a 128 MB log, then the log shrunk to 48 MB (async point 35 MB)"),
    Scenario(
        "mariadb-10.11--adaptive-flushing-on-ms-apart", 480,
        {**DEMO, "innodb_adaptive_flushing": "OFF"},
        (Load("oltp_write_only", 100), Load("oltp_write_only", 60, 8, 100),
         Load("oltp_write_only", 60, 8, 240)),
        (Change(280, {"innodb_adaptive_flushing": "ON"}, when=_age_high,
                note="when the age stayed above 80 % of the async point for 20 s, at 280 s at the latest"),),
        about="the adaptive-flushing-on capture's regime, per-kind read times"),
    Scenario(
        # The server's own innodb_max_dirty_pages_pct_lwm = 0, under which MariaDB 10.5+'s page
        # cleaner never uses the adaptive recommendation (an idle one wakes only at the async point
        # or a full pool; an awake one flushes innodb_io_capacity a second). Not drained by the
        # script: draining is flushing, which this scenario is about.
        "mariadb-10.11--adaptive-flushing-on-with-lwm-0", 300,
        {**DEMO, "innodb_max_dirty_pages_pct_lwm": "0", "innodb_adaptive_flushing": "OFF"},
        (Load("oltp_write_only", 100),),
        (Change(60, {"innodb_adaptive_flushing": "ON"}, note="mid-climb: above the adaptive-flushing lwm, below async"),),
        drain=False, about="adaptive flushing OFF -> ON mid-climb with innodb_max_dirty_pages_pct_lwm = 0"),
    Scenario(
        # Drained, the lwm-0 page cleaner goes idle at the adaptive-flushing lwm and sleeps: a slow
        # load then takes the age up towards the async point with nothing flushed at all.
        "mariadb-10.11--adaptive-flushing-on-while-the-cleaner-sleeps", 240,
        {**DEMO, "innodb_max_dirty_pages_pct_lwm": "0", "innodb_adaptive_flushing": "OFF"},
        (Load("oltp_write_only", 15),),
        (Change(120, {"innodb_adaptive_flushing": "ON"}, note="the age above the adaptive-flushing lwm, below async"),),
        about="a sleeping lwm-0 page cleaner: adaptive flushing OFF -> ON while the age climbs slowly"),
)}


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Recorder:
    def __init__(self, scenario: Scenario, scale: float = 1.0):
        self.s, self.scale = scenario, scale
        self.events: list[dict] = []
        WORK_DIR.mkdir(parents=True, exist_ok=True)
        self.conn = MySQLdb.connect(**ADMIN, autocommit=True)
        self.cur = self.conn.cursor()
        self.processes: list[subprocess.Popen] = []
        self.holders: dict[str, object] = {}
        self.history: list[dict] = []  # SHOW GLOBAL STATUS of each reading

    def log(self, what: str, **extra) -> None:
        at = now()
        self.events.append({"utc": at.isoformat(), "what": what, **extra})
        print(f"{at:%H:%M:%S.%f}  {what}" + (f"  {extra}" if extra else ""), flush=True)

    # ---- settings ----
    def globals_(self, names) -> dict[str, str]:
        self.cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)" % ",".join(["%s"] * len(names)),
                         tuple(names))
        return dict(self.cur.fetchall())

    def set_global(self, name: str, value: str) -> None:
        started = now()
        self.cur.execute(f"SET GLOBAL {name} = %s", (_demo().typed_value(value),))
        self.log(f"SET GLOBAL {name} = {value}", started=started.isoformat(),
                 took_s=round((now() - started).total_seconds(), 3))

    def touched(self) -> list[str]:
        names = set(self.s.settings)
        for change in self.s.changes:
            names |= set(change.settings)
        names |= {"innodb_io_capacity", "innodb_adaptive_flushing"} if self.s.drain else set()
        # the buffer pool first (so a shrink comes last on restore), the redo log last
        return sorted(names, key=lambda n: (n != "innodb_buffer_pool_size", n == "innodb_log_file_size", n))

    def enable_monitors(self) -> list[str]:
        self.cur.execute("SELECT NAME, ENABLED FROM information_schema.INNODB_METRICS WHERE NAME IN (%s)"
                         % ",".join(["%s"] * len(MONITORS)), MONITORS)
        off = [name for name, enabled in self.cur.fetchall() if not int(enabled)]
        for name in off:
            self.cur.execute("SET GLOBAL innodb_monitor_enable = %s", (name,))
        self.log("innodb_monitor_enable", names=off)
        return off

    # ---- load ----
    def prepare_tables(self) -> None:
        self.cur.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
        self.cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (DB,))
        if self.cur.fetchone()[0] < TABLES:
            self.log("sysbench prepare")
            subprocess.run(sysbench("oltp_write_only", 1, "cleanup"), check=False, capture_output=True)
            subprocess.run(sysbench("oltp_write_only", 4, "prepare"), check=True, capture_output=True)

    def warm_up(self) -> None:
        """Read every table and its secondary index so the load starts on a warm buffer pool."""
        for i in range(1, TABLES + 1):
            self.cur.execute(f"SELECT SUM(LENGTH(c)) FROM {DB}.sbtest{i}")
            self.cur.fetchall()
            self.cur.execute(f"SELECT COUNT(*) FROM {DB}.sbtest{i} FORCE INDEX (k_{i})")
            self.cur.fetchall()
        self.log("buffer pool warmed (every table and k_ index read)")

    def drain(self, below=6 * MB, timeout_s=300) -> None:
        self.cur.execute("SET GLOBAL innodb_adaptive_flushing = ON")
        self.cur.execute("SET GLOBAL innodb_io_capacity = 2000")
        deadline = time.monotonic() + timeout_s
        while (age := _demo().checkpoint_age(self.cur)) > below and time.monotonic() < deadline:
            time.sleep(1)
        for name in ("innodb_io_capacity", "innodb_adaptive_flushing"):
            self.cur.execute(f"SET GLOBAL {name} = %s", (_demo().typed_value(self.s.settings.get(name, self.original[name])),))
        self.log(f"redo log drained: checkpoint age {age / MB:.1f} MB")

    def start_load(self, load: Load, remaining_s: float) -> None:
        path = WORK_DIR / f"{self.s.name}.sysbench-{len(self.processes) + 1}.log"
        args = sysbench(load.test, load.threads, "run", f"--rate={load.rate}", f"--time={int(remaining_s) + 30}",
                        "--report-interval=10")
        with path.open("w") as log:
            self.processes.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
        self.log(f"sysbench {load.test} --rate={load.rate} --threads={load.threads} started", log=path.name)

    def stop_load(self, index: int) -> None:
        process = self.processes[index]
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
        self.log(f"sysbench #{index + 1} stopped")

    # ---- held snapshot ----
    def hold_snapshot(self, key: str = "") -> None:
        holder = self.holders[key] = MySQLdb.connect(host="127.0.0.1", port=3306, user="reporting", password="reporting-capture",
                                      autocommit=False)
        cur = holder.cursor()
        cur.execute("SELECT CONNECTION_ID()")
        (thread_id,) = cur.fetchone()
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        started = now()
        cur.execute(f"SELECT COUNT(*), SUM(k) FROM {DB}.sbtest1 WHERE id <= 10000")
        cur.fetchall()
        self.log("reporting: START TRANSACTION WITH CONSISTENT SNAPSHOT; one SELECT; then idle",
                 thread_id=thread_id, started=started.isoformat(), key=key)

    def commit_snapshot(self, key: str = "") -> None:
        holder = self.holders.pop(key, None)
        if holder is not None:
            holder.commit()
            self.log("reporting: COMMIT", key=key)
            holder.close()

    # ---- the run ----
    def run(self) -> Path:
        s = self.s
        seconds = s.seconds * self.scale
        names = self.touched()
        self.original = self.globals_(names)
        self.log("saved settings", settings=self.original)
        raw = WORK_DIR / f"{s.name}.jsonl"
        enabled: list[str] = []
        uses_holder = any(c.action.startswith("hold_snapshot") for c in s.changes)
        try:
            enabled = self.enable_monitors()
            if uses_holder:
                self.cur.execute("CREATE USER IF NOT EXISTS 'reporting'@'127.0.0.1' IDENTIFIED BY 'reporting-capture'")
                self.cur.execute(f"GRANT SELECT ON {DB}.* TO 'reporting'@'127.0.0.1'")
                self.log("created user 'reporting'@'127.0.0.1' (SELECT on sbtest.*)")
            for name, value in s.settings.items():
                if self.original.get(name) != value:
                    self.set_global(name, value)
            self.prepare_tables()
            self.warm_up()
            if s.drain:
                self.drain()
            self.log("settings at the start", settings=self.globals_(names))
            self.record(raw, seconds)
        finally:
            for i in range(len(self.processes)):
                self.stop_load(i)
            for key in list(self.holders):
                self.commit_snapshot(key)
            restore = {n: v for n, v in self.original.items() if self.globals_([n]).get(n) != v}
            for name in sorted(restore, key=lambda n: (n == "innodb_buffer_pool_size", n)):
                self.set_global(name, restore[name])
            for name in enabled:
                self.cur.execute("SET GLOBAL innodb_monitor_disable = %s", (name,))
            self.log("restored", settings=self.globals_(names), monitors_disabled_again=enabled)
            if uses_holder:
                self.cur.execute("DROP USER IF EXISTS 'reporting'@'127.0.0.1'")
                self.log("dropped user 'reporting'@'127.0.0.1'")
            (WORK_DIR / f"{s.name}.events.json").write_text(json.dumps(self.events, indent=1))
        out = OUT_DIR / f"{s.name}.jsonl.gz"
        with raw.open("rb") as src, gzip.open(out, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
        print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB)")
        return out

    def record(self, raw: Path, seconds: float) -> None:
        s = self.s
        failure: list[BaseException] = []

        def on_reading(reading):
            self.history.append(reading.global_status)

        capture_mod = _capture_module()

        def run_capture():
            try:
                with raw.open("w", encoding="utf-8") as out:
                    capture_mod.capture(PARAMS, out, seconds=seconds, interval_s=1, local_host=True,
                                        on_reading=on_reading, with_trx=s.with_trx)
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                failure.append(exc)

        t0 = time.monotonic()
        self.log("capture started", seconds=seconds)
        thread = threading.Thread(target=run_capture, daemon=True)
        thread.start()
        loads = sorted(enumerate(s.loads), key=lambda p: p[1].start_s)
        stops = [(i, ld.stop_s * self.scale) for i, ld in enumerate(s.loads) if ld.stop_s is not None]
        started_index: dict[int, int] = {}
        changes = list(s.changes)
        while thread.is_alive():
            elapsed = time.monotonic() - t0
            while loads and loads[0][1].start_s * self.scale <= elapsed:
                i, load = loads.pop(0)
                started_index[i] = len(self.processes)
                self.start_load(load, seconds - elapsed)
            for i, at in list(stops):
                if at <= elapsed and i in started_index:
                    stops.remove((i, at))
                    self.stop_load(started_index[i])
            while changes:
                change = changes[0]
                fired = change.when is not None and change.when(self.history)
                if not fired and change.at_s * self.scale > elapsed:
                    break
                changes.pop(0)
                self.log(f"change at +{elapsed:.1f} s" + (" (condition met)" if fired else ""), note=change.note)
                action, _, key = change.action.partition(":")
                if action == "hold_snapshot":
                    self.hold_snapshot(key)
                elif action == "commit_snapshot":
                    self.commit_snapshot(key)
                for name, value in change.settings.items():
                    self.set_global(name, value)
            time.sleep(0.2)
        self.log("capture finished")
        if failure:
            raise failure[0]


def _capture_module():
    """collectors.capture imports the disk collector's Django models: settings first (.env)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    django.setup()
    from collectors import capture

    return capture


def _demo():
    """dashboard.demo's MariaDB helpers (typed SET GLOBAL values, the checkpoint age), after setup."""
    _capture_module()
    from dashboard import demo

    return demo


def sysbench(test: str, threads: int, command: str, *extra: str) -> list[str]:
    return [shutil.which("sysbench") or "/usr/bin/sysbench", test, "--db-driver=mysql", "--mysql-host=127.0.0.1",
            "--mysql-port=3306", "--mysql-user=root", f"--mysql-db={DB}", f"--tables={TABLES}",
            f"--table-size={TABLE_SIZE}", f"--threads={threads}", *extra, command]




# ---- summary -------------------------------------------------------------------------------------

COUNTERS = ("Innodb_buffer_pool_pages_flushed", "Com_commit", "Handler_update", "Handler_write", "Handler_delete",
            "Innodb_os_log_written", "Questions")


def load_capture(path: Path) -> tuple[list[dict], list[tuple[str, dict]], list[str]]:
    """Per poll: time, global status numbers, metrics; and every variables line."""
    polls, variables, trx_polls = [], [], []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            kind = item["kind"]
            if kind == "innodb_status":
                polls.append({"ts": dt.datetime.fromisoformat(item["ts"])})
            elif kind == "global_status":
                polls[-1]["gs"] = dict(item["rows"])
                polls[-1]["gs_ts"] = dt.datetime.fromisoformat(item["ts"])
            elif kind == "innodb_metrics":
                polls[-1]["m"] = dict(item["rows"])
            elif kind == "variables":
                variables.append((item["ts"], dict(item["rows"])))
            elif kind == "innodb_trx":
                polls[-1]["trx"] = item["rows"]
    return polls, variables, trx_polls


def summarize(path: Path, events_path: Path | None) -> None:
    polls, variables, _ = load_capture(path)
    t0 = polls[0]["ts"]
    rel = [(p["ts"] - t0).total_seconds() for p in polls]
    gs = [p["gs"] for p in polls]
    spread = [(p["gs_ts"] - p["ts"]).total_seconds() * 1000 for p in polls]
    print(f"{path.name}: {len(polls)} readings {t0:%Y-%m-%d %H:%M:%S} .. {polls[-1]['ts']:%H:%M:%S} UTC; "
          f"version {variables[0][1].get('version')}; innodb_status->global_status "
          f"{statistics.median(spread):.1f} ms median, {max(spread):.1f} max")
    print(f"  Innodb_checkpoint_max_age {gs[0].get('Innodb_checkpoint_max_age')}  "
          f"log_file_size {variables[0][1].get('innodb_log_file_size')}")
    # variable changes seen in the capture
    for (_, a), (ts, b) in zip(variables, variables[1:]):
        diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
        print(f"  variables changed by {ts[11:26]}: {diff}")
    changes = []
    if events_path and events_path.exists():
        for e in json.loads(events_path.read_text()):
            if e["what"].startswith(("SET GLOBAL", "reporting:", "sysbench", "capture started", "change at")):
                at = dt.datetime.fromisoformat(e.get("started", e["utc"]))
                print(f"  event {at:%H:%M:%S.%f} (+{(at - t0).total_seconds():.1f} s) {e['what']}"
                      + (f" thread {e['thread_id']}" if "thread_id" in e else ""))
                if e["what"].startswith(("SET GLOBAL", "reporting:")) and at > t0:
                    changes.append((at, e["what"]))
    for window in _windows(t0, polls[-1]["ts"], changes):
        _describe(window, polls, rel, t0)


def _windows(t0, t1, changes):
    bounds = [t0] + [at for at, _ in changes] + [t1]
    names = ["start"] + [what for _, what in changes]
    return [(names[i], bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def _describe(window, polls, rel, t0) -> None:
    name, a, b = window
    sel = [i for i, p in enumerate(polls) if a <= p["ts"] < b]
    if len(sel) < 3:
        return
    first, last = polls[sel[0]], polls[sel[-1]]
    secs = (last["ts"] - first["ts"]).total_seconds()
    ages = [int(polls[i]["gs"]["Innodb_checkpoint_age"]) / MB for i in sel]
    hll = [int(polls[i]["gs"].get("Innodb_history_list_length", 0)) for i in sel]
    xs = [rel[i] for i in sel]
    print(f"  [{(a - t0).total_seconds():.0f}..{(b - t0).total_seconds():.0f} s] after {name}:")
    print(f"    checkpoint age MB min/median/max {min(ages):.1f}/{statistics.median(ages):.1f}/{max(ages):.1f}")
    print(f"    HLL first/min/max/last {hll[0]}/{min(hll)}/{max(hll)}/{hll[-1]}, slope {_slope(xs, hll):+.1f}/s")
    rates = {c: (int(last["gs"].get(c, 0)) - int(first["gs"].get(c, 0))) / secs for c in COUNTERS}
    print("    per s: " + ", ".join(f"{c} {v:.1f}" for c, v in rates.items()))
    m0, m1 = first.get("m", {}), last.get("m", {})
    print("    INNODB_METRICS deltas/s: " + ", ".join(
        f"{k} {(m1.get(k, 0) - m0.get(k, 0)) / secs:.1f}" for k in sorted(m1) if k != "trx_rseg_history_len"))
    dirty = [int(polls[i]["gs"].get("Innodb_buffer_pool_pages_dirty", 0)) for i in sel]
    print(f"    dirty pages first/last {dirty[0]}/{dirty[-1]}; trx_rseg_history_len first/last "
          f"{m0.get('trx_rseg_history_len')}/{m1.get('trx_rseg_history_len')}")


def _slope(xs, ys) -> float:
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    run = sub.add_parser("run")
    run.add_argument("name", choices=sorted(SCENARIOS))
    run.add_argument("--scale", type=float, default=1.0, help="shorten every time (trials: 0.3)")
    summary = sub.add_parser("summary")
    summary.add_argument("file", type=Path)
    summary.add_argument("events", type=Path, nargs="?")
    args = parser.parse_args()
    if args.command == "list":
        for s in SCENARIOS.values():
            print(f"{s.name}  ({s.seconds:.0f} s)  {s.about}")
    elif args.command == "run":
        Recorder(SCENARIOS[args.name], args.scale).run()
    else:
        events = args.events or WORK_DIR / args.file.name.replace(".jsonl.gz", ".events.json")
        summarize(args.file, events)


if __name__ == "__main__":
    main()
