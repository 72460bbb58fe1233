"""Alert evaluation's cost per server, at 500 and 3,000 polled servers, beside the same run's reads
of their history alone (History.load_many over the same batches and columns: the queries, no rule).

Each server holds the evaluator's 15-minute window of 10 s samples, made from one real poll of the
local MariaDB and set moving as a loaded server's would: counters advance at rates of their own,
checkpoint age and the history list wander, a tenth of the servers have a history list that grows
(the hll rules fit it) and a checkpoint age close to the async point (their rules go pending and
fire, so transitions, events and notices are part of the cost). The built-in rules are the ones
evaluated. A pass is `evaluate_alerts_now` as beat's tick runs it; the first pass (which creates the
rule states) is reported apart.
"""

from __future__ import annotations

import datetime as dt
import random
import statistics
import time

from django.utils import timezone

from alerting import evaluation
from alerting.evaluation import WINDOW_S, History, evaluate_alerts_now
from alerting.models import AlertState
from servers.models import Server
from timeseries import ingest
from timeseries.metrics import METRICS

INTERVAL_S = 10
PASSES = 3
COUNTERS = sorted({m.column for m in METRICS.values() if m.kind == "rate"})


def _moving_rows(servers: list[Server], fields: dict, async_bytes: int, now: dt.datetime) -> list:
    """Each server's window of samples, oldest first, from one poll's `fields`; a tenth of them
    with a checkpoint age around 81 % of `async_bytes` (the near-async rule's level is 80 %)."""
    rng = random.Random(7)
    steps = int(WINDOW_S // INTERVAL_S)
    rows = []
    for n, server in enumerate(servers):
        troubled = n % 10 == 0
        rates = {column: rng.uniform(1, 500) for column in COUNTERS}
        age = rng.uniform(1, 20) * 2**20
        hll = rng.randint(0, 5000)
        for k in range(steps, 0, -1):
            row = dict(fields)
            for column in COUNTERS:
                if row.get(column) is not None:
                    row[column] = int(row[column] + rates[column] * INTERVAL_S * (steps - k))
            age = 0.81 * async_bytes + rng.uniform(-0.01, 0.01) * async_bytes if troubled else max(0.0, age + rng.gauss(0, 2**19))
            hll = hll + (rng.randint(50, 150) if troubled else rng.randint(-20, 20))
            row["checkpoint_age_bytes"], row["history_list_length"] = int(age), max(0, hll)
            rows.append(ingest.sample_row(server.pk, now - dt.timedelta(seconds=INTERVAL_S * k), **row))
    return rows


def _register(count: int) -> tuple[list[Server], dict, int]:
    """`count` servers (the local MariaDB), each with the facts of one real poll of it; that
    poll's sample fields, and its async flush point."""
    from bench import polls
    from collectors import polling

    servers = polls.register(count, INTERVAL_S)
    run, entry, _ = polling.poll(servers[0], {}, force_variables=True)
    if run.status != "ok":
        raise RuntimeError(f"poll of the local MariaDB failed: {run.error}")
    polled = Server.objects.get(pk=servers[0].pk)
    Server.objects.filter(pk__in=[s.pk for s in servers]).update(
        version=polled.version, version_comment=polled.version_comment, flavor=polled.flavor,
        variables=polled.variables)
    limits = evaluation.server_thresholds(polled, entry["sample"].get("max_checkpoint_age_bytes"),
                                          entry["sample"].get("status_checkpoint_max_age"))
    servers = list(Server.objects.filter(pk__in=[s.pk for s in servers]).order_by("pk"))
    return servers, entry["sample"], limits.async_bytes


def _timed(fn, *args) -> tuple[float, float]:
    """Wall and CPU seconds of fn(*args)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


def _read_histories(servers: list[Server], now: dt.datetime) -> None:
    """What the evaluation reads of the same servers: the columns of the enabled rules and receivers."""
    columns = evaluation.evaluated_columns(evaluation.enabled_rules())
    for at in range(0, len(servers), evaluation.SERVERS_PER_BATCH):
        History.load_many(servers[at:at + evaluation.SERVERS_PER_BATCH], now.timestamp() - WINDOW_S,
                          now.timestamp(), columns)


def measure(count: int) -> dict:
    servers, fields, async_bytes = _register(count)
    now = timezone.now()
    ingest.save_innodb_samples(_moving_rows(servers, fields, async_bytes, now))
    first_wall, _ = _timed(evaluate_alerts_now, now)
    evals, reads = [], []
    for k in range(PASSES):  # alternated, so load from elsewhere on the machine hits both alike
        at = now + dt.timedelta(seconds=INTERVAL_S * (k + 1))  # beat's ticks: pending rules go on to fire
        evals.append(_timed(evaluate_alerts_now, at))
        reads.append(_timed(_read_histories, servers, at))
    per_server = {
        "eval_ms": statistics.median(w for w, _ in evals) * 1000 / count,
        "eval_cpu_ms": statistics.median(c for _, c in evals) * 1000 / count,
        "read_ms": statistics.median(w for w, _ in reads) * 1000 / count,
        "read_cpu_ms": statistics.median(c for _, c in reads) * 1000 / count,
    }
    firing = AlertState.objects.filter(server__in=servers, state="firing").count()
    out = {f"alert_{k}_per_server_at_{count}": v for k, v in per_server.items()}
    out[f"alert_first_pass_s_at_{count}"] = first_wall
    out[f"alert_firing_states_at_{count}"] = firing
    return out


def alert_figures() -> dict:
    out = {}
    try:
        for count in (500, 3000):
            out.update(measure(count))
    finally:
        Server.objects.filter(name__startswith="poll-bench-").delete()
    big = 3000
    out["alert_eval_vs_history_read"] = out[f"alert_eval_ms_per_server_at_{big}"] / out[f"alert_read_ms_per_server_at_{big}"]
    out["alert_eval_flatness"] = out[f"alert_eval_ms_per_server_at_{big}"] / out["alert_eval_ms_per_server_at_500"]
    out["alert_eval_s_per_pass_at_10000"] = out[f"alert_eval_ms_per_server_at_{big}"] * 10
    return out
