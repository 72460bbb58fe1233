"""Soak: many servers polled every second by a real Celery worker and beat for N
minutes; every 30 s the broker queue length, worker RSS, database size and sample count are
sampled, and each is judged flat or not by its least-squares slope.

    python -m bench.soak --minutes 10          (make soak; make bench calls it)

Works in its own database (innowatch_soak, recreated) and Redis DB 7, never the user's. The
servers all point at the local MariaDB through a monitoring account (bench.polls), each with the
alert evaluator's 15-minute window of samples already stored (seed_history). "Flat" means:
queue length bounded (its slope under 1 task/min and its last value under two rounds of polls),
worker RSS growing under 1 MiB/min after the first sample (warm-up: imports, connection pools).
Database size and sample count must grow linearly with polls (the data is kept): the database's
check is that the bytes per sample stay constant (no bloat beyond the data), the samples' that
their rate does not fall off (second half within 20 % of the first). Separately, `kept_up` says
whether the rate reached 90 % of servers/interval: polls carry `expires` of one interval, so a
saturated host drops late polls instead of queueing them, and shows as a lower rate, not a queue.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT))

from bench import benchdb  # noqa: E402

SOAK_DB = "innowatch_soak"
REDIS_URL = "redis://127.0.0.1:6379/7"
QUEUE = "innowatch"
SAMPLE_EVERY_S = 30


def log(message: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {message}", flush=True)


def setup(concurrency: int = 16) -> dict:
    """Fresh database and Redis DB; returns the environment for worker and beat."""
    benchdb.use_bench_database(SOAK_DB)
    os.environ["INNOWATCH_REDIS_URL"] = REDIS_URL
    os.environ["CELERY_BROKER_URL"] = REDIS_URL
    # Every soak server is the local MariaDB: overlapping polls of it keep their connections, as
    # polls of distinct servers would.
    os.environ["INNOWATCH_POOL_MAX_IDLE_PER_SERVER"] = str(concurrency)
    # As scripts/run_all.sh and docker-compose run the workers (unless the caller set it).
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")
    import django

    django.setup()
    benchdb.migrate()
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    return dict(os.environ)


def start_processes(env: dict, concurrency: int, workdir: Path, pool: str = "threads") -> list[subprocess.Popen]:
    celery = str(Path(sys.executable).with_name("celery"))
    worker = [celery, "-A", "dashboard", "worker", "-Q", QUEUE, "--pool", pool, "--concurrency", str(concurrency),
              "--loglevel", "WARNING", "--without-gossip", "--without-mingle"]
    beat = [celery, "-A", "dashboard", "beat", "--schedule", str(workdir / "beat-schedule"), "--loglevel", "WARNING"]
    logs = [open(workdir / name, "w") for name in ("worker.log", "beat.log")]  # noqa: SIM115 - closed with the process
    return [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            for cmd, out in zip((worker, beat), logs, strict=True)]


def stop_processes(processes: list[subprocess.Popen]) -> None:
    for proc in processes:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in processes:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def tree_rss_bytes(pid: int) -> int:
    """RSS of a process and all its descendants (the prefork worker's children do the polling)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            for line in (Path("/proc") / str(current) / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def measure(worker_pid: int, began: float) -> dict:
    import redis
    from django.db import connection

    broker = redis.Redis.from_url(REDIS_URL)
    # kombu keeps one list per priority level: "innowatch", "innowatch\x06\x163", ...
    queue = sum(broker.llen(key) for key in broker.scan_iter(match=f"{QUEUE}*") if broker.type(key) == b"list")
    with connection.cursor() as cur:
        cur.execute("SELECT pg_database_size(current_database()), (SELECT count(*) FROM dashboard_innodbsample),"
                    " (SELECT count(*) FROM dashboard_collectorrun WHERE status = 'failed')")
        db_bytes, samples, failed = cur.fetchone()
    return {"minute": (time.perf_counter() - began) / 60, "queue_length": queue,
            "worker_rss_bytes": tree_rss_bytes(worker_pid), "db_bytes": db_bytes, "samples": samples,
            "failed_runs": failed}


def slope_per_minute(xs: list[float], ys: list[float]) -> float:
    from analysis.trend import slope_per_s

    # x is in minutes, so the "per second" slope of the helper is per minute here.
    return slope_per_s(list(zip(xs, ys, strict=True))) or 0.0


def judge(rows: list[dict], servers: int, interval_s: int) -> dict:
    """Slope per minute, first and last of each series, and whether it stayed flat."""
    out: dict = {}
    xs = [r["minute"] for r in rows]
    for key in ("queue_length", "worker_rss_bytes", "db_bytes", "samples"):
        ys = [float(r[key]) for r in rows]
        # RSS: judged after the first sample (imports and pools warm up in the first half-minute).
        fit_x, fit_y = (xs[1:], ys[1:]) if key == "worker_rss_bytes" and len(xs) > 2 else (xs, ys)
        out[key] = {"first": ys[0], "last": ys[-1], "slope_per_min": slope_per_minute(fit_x, fit_y)}
    per_round = servers * 60 / interval_s
    out["queue_length"]["flat"] = out["queue_length"]["slope_per_min"] < 1 and rows[-1]["queue_length"] <= 2 * servers
    out["worker_rss_bytes"]["flat"] = out["worker_rss_bytes"]["slope_per_min"] < 1024 * 1024
    growth = [(b["db_bytes"] - a["db_bytes"]) / max(b["samples"] - a["samples"], 1) for a, b in zip(rows, rows[1:])]
    half = len(growth) // 2
    first_half = sum(growth[:half]) / max(half, 1)
    second_half = sum(growth[half:]) / max(len(growth) - half, 1)
    out["db_bytes"]["bytes_per_sample_first_half"] = first_half
    out["db_bytes"]["bytes_per_sample_second_half"] = second_half
    out["db_bytes"]["flat"] = second_half <= 1.5 * max(first_half, 1)
    rates = [(b["samples"] - a["samples"]) / max(b["minute"] - a["minute"], 1e-9) for a, b in zip(rows, rows[1:])]
    half = len(rates) // 2
    early = sum(rates[:half]) / max(half, 1)
    late = sum(rates[half:]) / max(len(rates) - half, 1)
    out["samples"].update({"expected_per_min": per_round, "per_min_first_half": early, "per_min_second_half": late,
                           "flat": late >= 0.8 * early, "kept_up": out["samples"]["slope_per_min"] >= 0.9 * per_round})
    return out


def seed_history(servers: list, interval_s: int) -> int:
    """Each server's samples over the alert evaluator's window, as after a long run (copies of one
    real poll of the local MariaDB). From an empty database the evaluator's working set, and so
    the worker's RSS, would grow for the window's first 15 minutes by design, which the RSS
    slope would read as a leak."""
    from alerting.evaluation import WINDOW_S
    from collectors import polling
    from timeseries import ingest

    fields = polling.poll(servers[0], {})[1]["sample"]
    now = dt.datetime.now(dt.UTC)
    rows = [ingest.sample_row(server.pk, now - dt.timedelta(seconds=interval_s * k), **fields)
            for server in servers for k in range(1, int(WINDOW_S // interval_s) + 1)]
    return ingest.save_innodb_samples(rows)


def run(minutes: float, servers: int, interval_s: int, concurrency: int, pool: str = "threads") -> dict:
    env = setup(concurrency)
    from bench import polls  # after django.setup()

    registered = polls.register(servers, interval_s)
    log(f"seeding {servers} servers' last 15 minutes of samples")
    seed_history(registered, interval_s)
    workdir = Path(tempfile.mkdtemp(prefix="innowatch-soak-"))
    log(f"{servers} servers at {interval_s} s, worker --pool {pool} --concurrency {concurrency}, {minutes} min; "
        f"logs in {workdir}")
    processes = start_processes(env, concurrency, workdir, pool)
    rows: list[dict] = []
    began = time.perf_counter()
    try:
        while True:
            time.sleep(max(0.0, began + len(rows) * SAMPLE_EVERY_S + SAMPLE_EVERY_S - time.perf_counter()))
            rows.append(measure(processes[0].pid, began))
            log(", ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in rows[-1].items()))
            if any(p.poll() is not None for p in processes):
                raise RuntimeError(f"worker or beat exited early; see {workdir}")
            if rows[-1]["minute"] >= minutes - 1e-6:
                break
    finally:
        stop_processes(processes)
    return {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "minutes": minutes,
            "servers": servers, "interval_s": interval_s, "worker_concurrency": concurrency, "worker_pool": pool,
            "samples_every_s": SAMPLE_EVERY_S, "series": rows, "verdict": judge(rows, servers, interval_s)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    # 3,000 servers every 10 s: 300 polls/s, the rate one worker process is to sustain.
    parser.add_argument("--servers", type=int, default=3000)
    parser.add_argument("--interval", type=int, default=10)
    # One poll worker process, polls in threads (batched writes are per process).
    parser.add_argument("--pool", default="threads", choices=["threads", "prefork", "solo"])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--out", type=Path, default=RESULTS / "soak.json")
    parser.add_argument("--no-doc", dest="doc", action="store_false", help="leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    result = run(args.minutes, args.servers, args.interval, args.concurrency, args.pool)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    if args.doc:
        from bench.report import SOAK_END, SOAK_START, soak_table, write_section

        write_section(ROOT / "docs" / "benchmarks.md", SOAK_START, SOAK_END, soak_table(result))
    flat = {k: v["flat"] for k, v in result["verdict"].items()}
    log(f"flat: {flat}; wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
