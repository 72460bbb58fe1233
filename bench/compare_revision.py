"""The working tree against an earlier revision, in the same run, on the same database.

    python -m bench.compare_revision --before 4804e29 [--rounds 3]

Checks the earlier revision out into a scratch worktree, builds one bench database (30 days of
10 s samples for one server, a fleet for the overview, the local MariaDB registered), then runs the
same measurements under each tree in turn, alternating A B A B so that load from elsewhere hits both
alike: the series API (12 metrics × 30 days), the servers list, the overview page, and polls of the
local MariaDB (worker CPU per poll). Both trees read the same tables (models that moved between apps
kept their table names). Medians per tree and the ratio new / old are printed and written to
bench/results/compare-<rev>.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DB = "innowatch_bench_compare"

# Runs inside either tree: only what both layouts share (URLs, the app registry, poll_once).
MEASURE = r"""
import json, os, sys, time, statistics
os.environ["DJANGO_SETTINGS_MODULE"] = "dashboard.settings"
import django
django.setup()
from django.apps import apps
from django.contrib.auth import get_user_model
from django.test import Client
def model(name):
    for label in ("servers", "dashboard"):
        try:
            return apps.get_model(label, name)
        except LookupError:
            pass
Server = model("Server")
client = Client()
client.force_login(get_user_model().objects.get(username="bench"))
server = Server.objects.get(name="bench30d-001")
from django.db import connection
with connection.cursor() as cur:
    cur.execute("SELECT max(ts) FROM dashboard_innodbsample WHERE server_id = %s", [server.pk])
    end = cur.fetchone()[0]
start = end - __import__("datetime").timedelta(days=30)
metrics = ("checkpoint_age_bytes,modified_age_bytes,history_list_length,pages_dirty,pages_free,trx_active,"
           "threads_running,semaphore_waits,pages_flushed_per_s,redo_bytes_per_s,commits_per_s,rows_read_per_s")
def timed(url, params=None, repeats=15):
    out = []
    for _ in range(repeats):
        began = time.perf_counter()
        response = client.get(url, params or {})
        out.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(out)
result = {
    "series_ms": timed(f"/api/v1/servers/{server.pk}/series",
                       {"metrics": metrics, "start": start.isoformat(), "end": end.isoformat(), "points": 1500}),
    "servers_list_ms": timed("/api/v1/servers"),
    "overview_ms": timed("/", repeats=8),
}
from collectors.tasks import poll_once
local = Server.objects.get(name="bench-local")
poll_once(local)
cpu, wall = time.process_time(), time.perf_counter()
for _ in range(60):
    poll_once(local)
result["poll_cpu_ms"] = (time.process_time() - cpu) / 60 * 1000
result["poll_wall_ms"] = (time.perf_counter() - wall) / 60 * 1000
print(json.dumps(result))
"""


def prepare(now: dt.datetime) -> None:
    sys.path.insert(0, str(ROOT))
    from bench import benchdb

    kept = benchdb.use_bench_database(DB, keep=True)
    import django

    django.setup()
    benchdb.migrate()
    from django.contrib.auth import get_user_model

    from bench import polls, reads
    from dashboard.history import generate_history
    from servers.models import Server

    if not kept or not Server.objects.filter(name="bench30d-001").exists():
        generate_history(1, 30, 10, now - dt.timedelta(days=30), prefix="bench30d")
        reads.make_fleet(100, now)
    user_model = get_user_model()
    if not user_model.objects.filter(username="bench").exists():
        user_model.objects.create_superuser("bench", "", "bench-compare")
    local = polls.register(1)[0]
    Server.objects.filter(name="bench-local").delete()
    local.name = "bench-local"
    local.save()


def run_tree(tree: Path) -> dict:
    env = {**os.environ, "INNOWATCH_DB_NAME": DB, "PYTHONPATH": str(tree),
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost,testserver"}
    out = subprocess.run([sys.executable, "-c", MEASURE], cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"measuring {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the earlier revision (a commit)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rev = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    scratch = Path(tempfile.mkdtemp(prefix="innowatch-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(scratch), rev], cwd=ROOT, check=True,
                   capture_output=True)
    shutil.copy(ROOT / ".env", scratch / ".env")
    try:
        prepare(dt.datetime.now(dt.UTC))
        runs: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            runs["before"].append(run_tree(scratch))
            runs["after"].append(run_tree(ROOT))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(scratch)], cwd=ROOT, check=False)
    figures = {}
    for name in runs["after"][0]:
        old = statistics.median(r[name] for r in runs["before"])
        new = statistics.median(r[name] for r in runs["after"])
        figures[name] = {"before": round(old, 2), "after": round(new, 2), "ratio": round(new / old, 3) if old else None}
        print(f"{name:18s} {old:9.2f} → {new:9.2f}  ×{figures[name]['ratio']}")
    out = ROOT / "bench" / "results" / f"compare-{rev}.json"
    out.write_text(json.dumps({"before": rev, "rounds": args.rounds, "figures": figures,
                               "measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}, indent=2) + "\n")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
