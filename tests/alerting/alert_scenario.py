"""Shared scenario for the alerting tests: one MariaDB 10.11 server with a 48 MiB redo log
(async point 35,044,532 bytes, max checkpoint age 40,050,893) and samples stored inline."""

from __future__ import annotations

import datetime as dt

T0 = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
ASYNC_BYTES = 35_044_532
MAX_AGE_BYTES = 40_050_893


def at(offset_s: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=offset_s)


def make_server(name: str = "alert-db", tags=("primary",), **kw):
    from servers.models import Server

    return Server.objects.create(
        name=name, host="127.0.0.1", flavor="mariadb", version="10.11.6-MariaDB",
        variables={"innodb_log_file_size": "50331648"}, poll_interval_s=10, tags=list(tags), **kw)


def store(server, rows: list[tuple[float, dict]], base: dt.datetime = T0) -> None:
    """InnodbSample rows at base+offset; every row states Innodb_checkpoint_max_age like 10.11."""
    from timeseries.models import InnodbSample
    from timeseries.partitions import ensure_partitions_for

    stamps = [base + dt.timedelta(seconds=off) for off, _ in rows]
    ensure_partitions_for(stamps)
    InnodbSample.objects.bulk_create([
        InnodbSample(server=server, ts=ts, status_checkpoint_max_age=MAX_AGE_BYTES, **fields)
        for ts, (_, fields) in zip(stamps, rows)
    ])


def age_pct(pct_of_async: float) -> dict:
    return {"checkpoint_age_bytes": int(ASYNC_BYTES * pct_of_async / 100)}


def only_rules(*specs: dict):
    """Disable the built-in rules and create the given ones, so each test sees only its own."""
    from alerting.models import AlertRule

    AlertRule.objects.update(enabled=False)
    defaults = {"op": ">", "for_s": 0, "keep_firing_s": 0, "severity": "warning"}
    return [AlertRule.objects.create(**{**defaults, **spec}) for spec in specs]


def tick(offset_s: float, base: dt.datetime = T0):
    from alerting.evaluation import evaluate_alerts_now

    return evaluate_alerts_now(now=base + dt.timedelta(seconds=offset_s))


def transitions(server=None) -> list[tuple[str, str, float]]:
    """(rule, state, seconds after T0) of the recorded events, oldest first."""
    from alerting.models import AlertEvent

    events = AlertEvent.objects.select_related("rule").order_by("ts", "pk")
    if server is not None:
        events = events.filter(server=server)
    return [(e.rule.name, e.state, (e.ts - T0).total_seconds()) for e in events]


def install_builtin_rules() -> None:
    """Run the data migration's installer: transactional tests elsewhere flush its rows."""
    from alerting import builtin_rules

    builtin_rules.install()
