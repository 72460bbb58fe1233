"""`make bench`: storage, read-path, polling and parsing figures, each beside its baseline from the
same run. Works in its own database (innowatch_bench, recreated each run), never `innowatch`.

Writes bench/results/latest.json and the results table of docs/benchmarks.md. `--only pages`: the
page-speed figures alone (bench/pages.py), on the bench database's 30-day history if a recent one is
there, merged into latest.json without dropping the other figures; `--only parse`: the parser figures
alone (bench/bench_parse.py), merged the same way; `--only whatif`: the 24 h what-if replay (bench/whatif.py);
`--only alerts`: alert evaluation per server (bench/alerts.py).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DOC = ROOT / "docs" / "benchmarks.md"
sys.path.insert(0, str(ROOT))

from bench import benchdb  # noqa: E402

TARGETS = {  # figure: (target, "min" = at least / "max" = at most)
    "ingest_vs_copy": (0.5, "min"),
    "series_p95_ms": (300, "max"),
    "overview_p95_ms": (500, "max"),
    "bytes_per_value": (10, "max"),
    "server_page_30d_cold_p95_ms": (1500, "max"),
    "server_page_30d_warm_p95_ms": (1500, "max"),
    "overview_page_cold_p95_ms": (1500, "max"),
    "overview_page_warm_p95_ms": (1500, "max"),
    "parse_us_per_status": (150, "max"),
    "whatif_replay_24h_s": (2, "max"),
    "polls_per_s": (300, "min"),
    "worker_cpu_ms_per_poll": (1.5, "max"),
    "poll_vs_bare_read_cpu": (2.0, "max"),
    # the same targets, on a server clients send SETs to, and on a busy server's longer status
    "set_traffic_worker_cpu_ms_per_poll": (1.5, "max"),
    "set_traffic_poll_vs_bare_read_cpu": (2.0, "max"),
    "busy_worker_cpu_ms_per_poll": (1.5, "max"),
    "busy_poll_vs_bare_read_cpu": (2.0, "max"),
    "one_thread_poll_vs_bare_read_cpu": (2.0, "max"),
    "busy_one_thread_poll_vs_bare_read_cpu": (2.0, "max"),
    # every polled server evaluated within beat's 10 s tick, at the capacity plan's 10,000 servers
    "alert_eval_s_per_pass_at_10000": (10.0, "max"),
}


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def setup(keep: bool = False) -> bool:
    kept = benchdb.use_bench_database(keep=keep)
    hosts = os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
    os.environ["DJANGO_ALLOWED_HOSTS"] = hosts + ",testserver"
    import django

    django.setup()
    benchdb.migrate()
    return kept


def parse_figures() -> dict:
    script = ROOT / "bench" / "bench_parse.py"
    if not script.exists():
        return {}
    # A scratch file: bench/results/parse.json is the parser engineer's committed result.
    out = Path(tempfile.gettempdir()) / "innowatch-bench-parse.json"
    subprocess.run([sys.executable, str(script), "--out", str(out), "--repeats", "20"], check=True, cwd=ROOT)
    data = json.loads(out.read_text())
    typical = data.get("typical_10_30kb") or {}
    return {  # the figure is the mean over the whole corpus; 10-30 KB statuses beside it
        "parse_us_per_status": data["parser"]["mean_us"],
        "parse_baseline_us_per_status": data["naive_baseline"]["mean_us"],
        "parse_every_number_us_per_status": (data.get("every_number") or {}).get("mean_us"),
        "parse_mb_per_s": data["parser"]["mb_per_s"],
        "parse_typical_us_per_status": typical.get("parser_mean_us"),
        "parse_typical_baseline_us_per_status": typical.get("baseline_mean_us"),
        "parse_statuses": data["statuses"],
    }


def storage_figures(now: dt.datetime) -> dict:
    from bench import storage
    from dashboard.history import generate_history
    from servers.models import Server

    rows = storage.synthetic_rows(40, 6, now - dt.timedelta(days=2))
    log(f"ingest vs COPY over {len(rows)} rows")
    out = storage.ingest_vs_copy(rows)
    Server.objects.filter(name__startswith="bench-ingest-").delete()
    log("generating 30 days x 10 s for one server")
    began = time.perf_counter()
    result = generate_history(1, 30, 10, now - dt.timedelta(days=30), prefix="bench30d")
    out["history_30d_rows"] = result["rows"]
    out["history_30d_s"] = time.perf_counter() - began
    out.update(storage.bytes_per_value())
    return out


def read_figures(now: dt.datetime) -> dict:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from bench import reads
    from servers.models import Server

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("bench", "", "bench-" + str(time.time())))
    server = Server.objects.get(name="bench30d-001")
    log("series API, 12 metrics x 30 days, points=1500")
    out = reads.series_figures(client, server, now - dt.timedelta(days=30), now)
    log("overview with 200 servers")
    reads.make_fleet(200 - Server.objects.count(), now)
    out.update(reads.overview_figures(client))
    log("page speed in headless Chromium: server page over 30 days, overview of 200 servers")
    from bench import pages

    out.update(pages.page_figures(server.pk, reads.SERIES_METRICS, now - dt.timedelta(days=30), now))
    return out


def _recent_history(now: dt.datetime) -> bool:
    """Whether a previous run left bench30d-001's 30 days of history, ending within the last 6 hours."""
    from django.db.models import Max, Min

    from timeseries.models import InnodbSample

    span = InnodbSample.objects.filter(server__name="bench30d-001").aggregate(first=Min("ts"), last=Max("ts"))
    return bool(span["first"] and span["first"] <= now - dt.timedelta(days=29, hours=18)
                and span["last"] >= now - dt.timedelta(hours=6))


def page_only_figures(now: dt.datetime) -> dict:
    """The page-speed figures alone, on the bench database's 30-day history when a previous run left
    a recent one (else a fresh database and history, ~1 min), with the overview's fleet of 200."""
    from django.db import connection

    from bench import pages, reads
    from dashboard.history import generate_history
    from servers.models import Server

    if not _recent_history(now):
        log("no recent 30-day history in the bench database: recreating it")
        connection.close()
        setup(keep=False)
        generate_history(1, 30, 10, now - dt.timedelta(days=30), prefix="bench30d")
    else:
        log("reusing the bench database's 30-day history")
    Server.objects.filter(name__startswith="poll-bench-").delete()  # the overview shows 200 servers
    reads.make_fleet(200 - Server.objects.exclude(name__startswith="fleet-").count(), now)
    server = Server.objects.get(name="bench30d-001")
    log("page speed in headless Chromium: server page over 30 days, overview of 200 servers")
    out = pages.page_figures(server.pk, reads.SERIES_METRICS, now - dt.timedelta(days=30), now)
    out["overview_servers"] = Server.objects.count()
    return out


POLL_THREADS = 4  # polls in flight per worker process (celery worker --pool threads --concurrency)
POLLS_PER_TASK = 16  # what collectors.tasks.schedule_polls sends per message at 5,000 servers
# Enough servers that each is polled about every 10 s at the rate one process reaches, so each
# reads its variables as often as a real server polled every 10 s does (once a minute unless a
# SET ran). They are all the local MariaDB: overlapping polls of it keep their connections.
POLL_SERVERS = 5000
# Sessions holding a transaction open for the "busy server" figures: a status text of a real
# server's size (the idle local MariaDB's is ~2 KB; the corpus's busy ones 10-30 KB).
BUSY_SESSIONS = 60


def one_thread(servers: list) -> dict:
    """Worker and bare-read CPU per poll in one thread, beside each other."""
    from bench import polls

    one = polls.sustained_polls(servers, 10, 1, chunk=POLLS_PER_TASK)
    one.update(polls.bare_reads(servers, 8, 1, one["variables_read_fraction"]))
    return {k: one[k] for k in ("worker_cpu_ms_per_poll", "bare_read_cpu_ms_per_poll")}


def poll_figures() -> dict:
    from django.conf import settings

    from bench import fanout, polls
    from servers.models import Server

    servers = polls.register(POLL_SERVERS)
    settings.INNOWATCH_POOL_MAX_IDLE_PER_SERVER = POLL_THREADS  # the pool takes it at the first poll
    log(f"first poll of each of {POLL_SERVERS} servers")
    polls.warm_up(servers, POLL_THREADS)
    log("bare SHOW ENGINE INNODB STATUS round trip")
    out = polls.bare_round_trip()
    # Polls and bare reads alternate (B A B A), so load from elsewhere on the machine hits both
    # alike; the bare reads read the variables as often as the polls just before them did.
    # Polls run as the fan-out sends them at scale (16 per message at 5,000 servers) and one per
    # message; with a client sending SETs (every poll reads the variables); and on a busy server.
    rounds = []
    for n in range(2):
        log(f"round {n + 1}/2: one worker process polling {POLL_SERVERS} servers, {POLL_THREADS} threads, "
            "then bare reads")
        measured = polls.sustained_polls(servers, 15, POLL_THREADS, chunk=POLLS_PER_TASK)
        measured.update(polls.bare_reads(servers, 10, POLL_THREADS, measured["variables_read_fraction"]))
        single = polls.sustained_polls(servers, 15, POLL_THREADS, chunk=1)
        measured.update({f"single_{k}": single[k] for k in ("polls_per_s", "worker_cpu_ms_per_poll")})
        # One thread: no interpreter lock to contend for, whose cost in four threads moves both
        # sides by ±30 % from run to run (the bare reads' most of all): the steadiest ratio.
        measured.update({f"one_thread_{k}": v for k, v in one_thread(servers).items()})
        with polls.SetTraffic():
            with_sets = polls.sustained_polls(servers, 15, POLL_THREADS, chunk=POLLS_PER_TASK)
        with_sets.update(polls.bare_reads(servers, 10, POLL_THREADS, with_sets["variables_read_fraction"]))
        measured.update({f"set_traffic_{k}": with_sets[k] for k in (
            "polls_per_s", "worker_cpu_ms_per_poll", "variables_read_fraction", "bare_read_cpu_ms_per_poll")})
        with polls.OpenTransactions(BUSY_SESSIONS):
            measured["busy_status_bytes"] = polls.status_text_bytes()
            busy = polls.sustained_polls(servers, 15, POLL_THREADS, chunk=POLLS_PER_TASK)
            busy.update(polls.bare_reads(servers, 10, POLL_THREADS, busy["variables_read_fraction"]))
            one_busy = one_thread(servers)
        measured.update({f"busy_{k}": busy[k] for k in (
            "polls_per_s", "worker_cpu_ms_per_poll", "variables_read_fraction", "bare_read_cpu_ms_per_poll")})
        measured.update({f"busy_one_thread_{k}": v for k, v in one_busy.items()})
        measured["status_bytes"] = polls.status_text_bytes()
        rounds.append(measured)
    out.update({k: statistics.median(r[k] for r in rounds) for k in rounds[0]})
    out["single_poll_vs_bare_read_cpu"] = out["single_worker_cpu_ms_per_poll"] / out["bare_read_cpu_ms_per_poll"]
    out["poll_vs_bare_read_cpu"] = out["worker_cpu_ms_per_poll"] / out["bare_read_cpu_ms_per_poll"]
    for case in ("set_traffic", "busy", "one_thread", "busy_one_thread"):
        out[f"{case}_poll_vs_bare_read_cpu"] = (out[f"{case}_worker_cpu_ms_per_poll"]
                                              / out[f"{case}_bare_read_cpu_ms_per_poll"])
    out["poll_overhead_ratio"] = out["poll_wall_ms"] / out["status_round_trip_ms"]
    out["poll_servers"] = POLL_SERVERS
    out["capacity_servers_at_10s_one_process"] = int(out["polls_per_s"] * 10)
    out["capacity_servers_at_10s_host"] = int(out["cpus"] / (out["host_cpu_ms_per_poll"] / 1000) * 10)
    log("PostgreSQL's cost of a stored poll: WAL bytes, raw text size")
    out.update(polls.write_cost(servers))
    Server.objects.filter(pk__in=[s.pk for s in servers]).delete()  # the fan-out counts its own
    log("schedule_polls at 500 and 5,000 registered servers")
    out.update(fanout.fanout_figures())
    return out


def polls_only() -> None:
    """`python -m bench.run --only polls`: merge fresh poll figures into latest.json."""
    began = time.perf_counter()
    setup()
    _merge_into_latest(poll_figures(), "polls", dt.datetime.now(dt.UTC).replace(microsecond=0), began)


def pages_only() -> None:
    """`python -m bench.run --only pages`: merge fresh page figures into latest.json, keeping the rest."""
    began = time.perf_counter()
    setup(keep=True)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    _merge_into_latest(page_only_figures(now), "pages", now, began)


def parse_only() -> None:
    """`python -m bench.run --only parse`: merge fresh parser figures into latest.json."""
    began = time.perf_counter()
    _merge_into_latest(parse_figures(), "parse", dt.datetime.now(dt.UTC).replace(microsecond=0), began)


def alert_figures() -> dict:
    from bench import alerts  # after django.setup()

    log("alert evaluation at 500 and 3,000 servers")
    return alerts.alert_figures()


def alerts_only() -> None:
    """`python -m bench.run --only alerts`: merge fresh alert-evaluation figures into latest.json."""
    began = time.perf_counter()
    setup()
    _merge_into_latest(alert_figures(), "alerts", dt.datetime.now(dt.UTC).replace(microsecond=0), began)


def whatif_figures() -> dict:
    """A 24 h what-if replay of 10 s samples (bench/whatif.py), also written to whatif.json."""
    from bench import whatif

    out = whatif.figures()
    (RESULTS / "whatif.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def whatif_only() -> None:
    """`python -m bench.run --only whatif`: merge the what-if figures into latest.json."""
    began = time.perf_counter()
    _merge_into_latest(whatif_figures(), "whatif", dt.datetime.now(dt.UTC).replace(microsecond=0), began)


def _merge_into_latest(measured: dict, part: str, when: dt.datetime, began: float) -> None:
    path = RESULTS / "latest.json"  # read only now: others may have merged their figures meanwhile
    figures = json.loads(path.read_text()) if path.exists() else {}
    figures.update(measured)
    figures[f"{part}_date"] = when.isoformat()
    _finish(figures, began, f"{part}_seconds")


def main() -> None:
    began = time.perf_counter()
    RESULTS.mkdir(parents=True, exist_ok=True)
    setup()
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    figures: dict = {"date": now.isoformat(), "python": platform.python_version(), "machine": platform.machine(),
                     "cpus": os.cpu_count()}
    log("parser")
    figures.update(parse_figures())
    log("what-if replay")
    figures.update(whatif_figures())
    figures.update(storage_figures(now))
    figures.update(read_figures(now))
    figures.update(poll_figures())
    figures.update(alert_figures())
    _finish(figures, began, "bench_seconds")


def _finish(figures: dict, began: float, seconds_key: str) -> None:
    figures[seconds_key] = time.perf_counter() - began
    figures["targets"] = targets(figures)
    (RESULTS / "latest.json").write_text(json.dumps(figures, indent=1, default=str) + "\n")
    from bench.report import write_doc

    write_doc(DOC, figures)
    log(f"done in {figures[seconds_key]:.0f} s: {RESULTS / 'latest.json'}, {DOC}")


def targets(figures: dict) -> dict:
    """Each target figure with whether `figures` meets it (None when it was not measured)."""
    return {k: {"target": t, "kind": kind, "met": _met(figures.get(k), t, kind)} for k, (t, kind) in TARGETS.items()}


def _met(value, target, kind) -> bool | None:
    if value is None:
        return None
    return value >= target if kind == "min" else value <= target


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["alerts", "pages", "parse", "polls", "whatif"], help="only these figures, merged into latest.json")
    only = parser.parse_args().only
    if only == "polls":
        polls_only()
    elif only == "pages":
        pages_only()
    elif only == "parse":
        parse_only()
    elif only == "whatif":
        whatif_only()
    elif only == "alerts":
        alerts_only()
    else:
        main()
