"""Read path of the series API: bucketed min/avg/max per metric for one server and range.

The resolution (raw, 1m, 15m or 1h rollups) comes from analysis.downsample.choose_resolution. Rollup
reads merge rows exactly as analysis.downsample.merge_rollup_buckets does (min of mins, max of
maxes, Σsum/Σcount), but in SQL: a 30-day chart at points=1500 reads 43,200 one-minute rows per
metric, which PostgreSQL merges in milliseconds and Python in a large fraction of a second.
The part of the range the rollup task has not reached yet is bucketed from raw rows with the same
SQL the task uses (timeseries.rollups), so the newest minutes are never missing.
Rates are per-sample Δcounter/Δt computed in SQL by the rules of analysis.rates.counter_rates
(tests check both agree).
"""

from __future__ import annotations

import datetime as dt

from django.db import connection, transaction

from analysis.downsample import RESOLUTION_S, bucket_width_s, choose_resolution
from timeseries import rollups
from timeseries.metrics import METRICS, Metric
from timeseries.rollup_schema import ROLLUP_METRICS


def series_for(
    server, metric_names: list[str], start: dt.datetime, end: dt.datetime, points: int, resolution: str | None = None
) -> dict:
    """{metric: {"t": [ms], "min": [], "avg": [], "max": []}}; `resolution` forces raw/1m/1h (tests, bench)."""
    metrics = [METRICS[name] for name in metric_names]
    resolution = resolution or choose_resolution(start.timestamp(), end.timestamp(), points, server.poll_interval_s)
    rolled = [m for m in metrics if m.name in ROLLUP_METRICS] if resolution != "raw" else []
    direct = [m for m in metrics if m not in rolled]
    out: dict[str, dict] = {}
    if rolled:
        width = bucket_width_s(start.timestamp(), end.timestamp(), points, min_width_s=RESOLUTION_S[resolution])
        out.update(_read(rolled, _rollup_parts(server, rolled, resolution, width, start, end), width))
    if direct:
        width = bucket_width_s(start.timestamp(), end.timestamp(), points)
        out.update(_read(direct, [_raw_part(server, direct, width, start, end, "r")], width))
    return {name: out[name] for name in metric_names}


def _raw_part(server, metrics: list[Metric], width: int, start, end, tag: str) -> tuple[str, dict]:
    sql, _ = rollups.raw_buckets_sql(metrics, width, one_server=True)
    params = {"server": server.pk, "start": start, "end": end,
              "lookback": rollups.lookback_for(start, server.poll_interval_s, metrics)}
    return _tagged(sql, params, tag)


def _rollup_parts(server, metrics: list[Metric], resolution: str, width: int, start, end) -> list[tuple[str, dict]]:
    """Rows of `resolution` up to where they are built, then finer rollups, then raw rows for the
    unbuilt tail (each part ends on its own width's boundary; the outer GROUP BY merges them)."""
    parts = []
    cursor_ts = start
    for res in reversed(rollups.LEVELS[: rollups.LEVELS.index(resolution) + 1]):
        covered = min(max(rollups.built_until(res) or cursor_ts, cursor_ts), end)
        if covered > cursor_ts:
            sql = rollups.rollup_buckets_sql(metrics, res, width, one_server=True)
            parts.append(_tagged(sql, {"server": server.pk, "start": cursor_ts, "end": covered}, res))
            cursor_ts = covered
    if cursor_ts < end:
        parts.append(_raw_part(server, metrics, width, cursor_ts, end, "r"))
    return parts


def _tagged(sql: str, params: dict, tag: str) -> tuple[str, dict]:
    """Give a part's named parameters unique names so parts can be UNIONed in one statement."""
    for name in list(params):
        sql = sql.replace(f"%({name})s", f"%({name}_{tag})s")
    return sql, {f"{name}_{tag}": value for name, value in params.items()}


def _read(metrics: list[Metric], parts: list[tuple[str, dict]], width: int) -> dict[str, dict]:
    params: dict = {}
    for _, p in parts:
        params.update(p)
    aggs = ", ".join(
        f"min(a{4 * i}) AS lo{i}, sum(a{4 * i + 1}) AS s{i}, max(a{4 * i + 2}) AS hi{i}, sum(a{4 * i + 3}) AS n{i}"
        for i in range(len(metrics))
    )
    names = ", ".join(f"a{j}" for j in range(4 * len(metrics)))
    union = " UNION ALL ".join(f"({sql})" for sql, _ in parts)
    sql = (f"WITH g AS (SELECT b, {aggs} FROM ({union}) AS u(server_id, b, {names}) GROUP BY b) "
           f"SELECT {', '.join(_arrays(i) for i in range(len(metrics)))} FROM (SELECT * FROM g ORDER BY b) AS o")
    with transaction.atomic(), connection.cursor() as cur:
        # 43,200 one-minute rows of a 30-day chart sort in memory with this, not in temp files.
        cur.execute("SET LOCAL work_mem = '32MB'")
        cur.execute(sql, params)
        row = cur.fetchone()
    keys = ("t", "min", "avg", "max")
    return {m.name: {k: row[4 * i + j] or [] for j, k in enumerate(keys)} for i, m in enumerate(metrics)}


def _arrays(i: int) -> str:
    """One metric's columns as arrays built by PostgreSQL, rounded to 3 decimals, empty buckets left
    out: building them row by row in Python took longer than the query itself. The buckets come
    sorted from the subquery (PostgreSQL aggregates in input order); an ORDER BY inside each of
    the 48 array_aggs sorted the buckets 48 times, which cost 3× the rest of the query."""
    keep = f"FILTER (WHERE n{i} > 0)"

    def arr(expr: str) -> str:
        return f"array_agg(round(({expr}) * 1000) / 1000) {keep}"

    return (f"array_agg((extract(epoch FROM b) * 1000)::int8) {keep}, "
            f"{arr(f'lo{i}')}, {arr(f's{i} / n{i}')}, {arr(f'hi{i}')}")
