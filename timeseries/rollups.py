"""1-minute, 15-minute and 1-hour rollups of the charted metrics, built incrementally, and the SQL that
buckets raw rows the same way (shared with dashboard/series.py, so raw and rollup reads agree).

Rates over long ranges come from rollups of *per-sample rates* (Δcounter/Δt between consecutive
samples, computed with lag() exactly as analysis.rates.counter_rates does: a counter that goes
down, or an interval longer than 3 poll intervals, gives no rate). The alternative, first/last
counter per bucket, gives the right average but loses the peak: a 1-second flush storm inside a
minute would vanish from the max. With per-sample rates the 1-minute max is the highest rate
seen, and min/avg/max merge exactly into any coarser bucket.

Building: each run recomputes the buckets from the resolution's high-water mark (RollupState) up
to now minus a lag (late rows from slow polls still land in an unbuilt bucket), as upserts, so a
rerun or an overlapping run changes nothing. Rows that arrive later than the lag are picked up by
`build_range` (generate_history and imports call it for the range they wrote).
"""

from __future__ import annotations

import datetime as dt
import math

from django.db import connection, transaction

from timeseries import partitions
from timeseries.metrics import METRICS, Metric
from timeseries.models import RollupState
from timeseries.rollup_schema import AGGREGATES, ROLLUP_METRICS

RAW_TABLE = "dashboard_innodbsample"
TABLES = {"1m": "dashboard_innodbrollup1m", "15m": "dashboard_innodbrollup15m", "1h": "dashboard_innodbrollup1h"}
WIDTH_S = {"1m": 60, "15m": 900, "1h": 3600}
# Build order: 15m and 1h are both merged from 1m rows (exact: min of mins, Σsum, max of maxes, Σcount).
LEVELS = ("1m", "15m", "1h")
LAG = dt.timedelta(minutes=2)
CHUNK = dt.timedelta(hours=6)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def floor_time(ts: dt.datetime, width_s: int) -> dt.datetime:
    seconds = math.floor((ts - _EPOCH).total_seconds() / width_s) * width_s
    return _EPOCH + dt.timedelta(seconds=seconds)


# ---- SQL shared with the series reader -------------------------------------------------------


def value_expr(metric: Metric) -> str:
    """Per-sample value of a metric: the gauge, or the rate since the previous sample."""
    col = f's."{metric.column}"'
    if metric.minus:
        return f'({col} - s."{metric.minus}")::float8'
    if metric.kind == "gauge":
        return f"{col}::float8"
    if metric.kind == "slope":
        # analysis.trend.slope_per_s over the samples of the trailing window, the current one
        # included. Not drawn until the samples span a tenth of the window: a line through the
        # first two polls after a gap is noise (a 2-s fit at a capture's start read 2.4 M/h).
        frame = (f"(PARTITION BY s.server_id ORDER BY s.ts "
                 f"RANGE BETWEEN '{int(metric.window_s)} seconds'::interval PRECEDING AND CURRENT ROW)")
        span = f"extract(epoch FROM s.ts - min(s.ts) OVER {frame})"
        slope = f"regr_slope({col}::float8, extract(epoch FROM s.ts)::float8) OVER {frame}"
        return f"CASE WHEN {span} >= {metric.window_s / 10!r} THEN {slope} * {float(metric.scale)!r} END"
    prev = f"lag({col}) OVER w"
    dt_s = "extract(epoch FROM s.ts - lag(s.ts) OVER w)::float8"
    # Same rules as analysis.rates.counter_rates: gap > 3 intervals or a counter reset: no rate.
    return (
        f"CASE WHEN {dt_s} > 3 * srv.poll_interval_s OR {col} < {prev} THEN NULL "
        f"ELSE ({col} - {prev})::float8 / {dt_s} * {float(metric.scale)!r} END"
    )


def raw_buckets_sql(metrics: list[Metric], width_s: int, *, one_server: bool) -> tuple[str, list[str]]:
    """SQL bucketing raw samples into (server_id, b, <m>_min, _sum, _max, _count ...).

    Parameters (named): start, end, lookback (start minus the longest gap a rate may span),
    and server when one_server."""
    needs_lag = any(m.kind == "rate" for m in metrics)  # slopes name their own window
    values = ", ".join(f"{value_expr(m)} AS v{i}" for i, m in enumerate(metrics))
    aggs = ", ".join(f"min(v{i}), sum(v{i}), max(v{i}), count(v{i})" for i in range(len(metrics)))
    where = "s.server_id = %(server)s AND " if one_server else ""
    window = " WINDOW w AS (PARTITION BY s.server_id ORDER BY s.ts)" if needs_lag else ""
    sql = (
        f"WITH src AS (SELECT s.server_id, s.ts, {values} FROM {RAW_TABLE} s "
        f"JOIN dashboard_server srv ON srv.id = s.server_id "
        f"WHERE {where}s.ts >= %(lookback)s AND s.ts < %(end)s{window}) "
        f"SELECT server_id, date_bin('{int(width_s)} seconds'::interval, ts, 'epoch'::timestamptz) AS b, {aggs} "
        f"FROM src WHERE ts >= %(start)s GROUP BY 1, 2"
    )
    return sql, _agg_columns(metrics)


def rollup_buckets_sql(metrics: list[Metric], resolution: str, width_s: int, *, one_server: bool) -> str:
    """SQL merging rollup rows into buckets of width_s: min of mins, Σsum, max of maxes, Σcount."""
    aggs = ", ".join(
        f'min("{m.name}_min"), sum("{m.name}_sum"), max("{m.name}_max"), sum("{m.name}_count")' for m in metrics
    )
    where = "server_id = %(server)s AND " if one_server else ""
    return (
        f"SELECT server_id, date_bin('{int(width_s)} seconds'::interval, ts, 'epoch'::timestamptz) AS b, {aggs} "
        f"FROM {TABLES[resolution]} WHERE {where}ts >= %(start)s AND ts < %(end)s GROUP BY 1, 2"
    )


def _agg_columns(metrics: list[Metric]) -> list[str]:
    return [f"{m.name}_{agg}" for m in metrics for agg in AGGREGATES]


def rollup_metrics() -> list[Metric]:
    return [METRICS[name] for name in ROLLUP_METRICS if name in METRICS]


def lookback_for(start: dt.datetime, poll_interval_s: int, metrics: list[Metric] = ()) -> dt.datetime:
    """How far before `start` raw rows are read: a rate needs the sample before, a slope its window."""
    return start - dt.timedelta(seconds=max([3 * poll_interval_s] + [m.window_s for m in metrics]))


# ---- building ----------------------------------------------------------------------------------


def build_range(resolution: str, start: dt.datetime, end: dt.datetime) -> int:
    """Recompute the buckets of `resolution` in [start, end) (aligned outward); returns rows upserted."""
    width = WIDTH_S[resolution]
    start = floor_time(start, width)
    end = floor_time(end + dt.timedelta(seconds=width - 1), width) if end > start else start
    total = 0
    chunk = max(CHUNK, dt.timedelta(seconds=width))
    while start < end:
        stop = min(end, start + chunk)
        total += _build_chunk(resolution, start, stop)
        start = stop
    return total


def _build_chunk(resolution: str, start: dt.datetime, end: dt.datetime) -> int:
    metrics = rollup_metrics()
    columns = _agg_columns(metrics)
    if resolution == "1m":
        select, _ = raw_buckets_sql(metrics, 60, one_server=False)
        params = {"start": start, "end": end, "lookback": lookback_for(start, _max_interval_s())}
        partitions.ensure_partitions(TABLES["1m"], start.date(), (end - dt.timedelta(microseconds=1)).date())
    else:
        select = rollup_buckets_sql(metrics, "1m", WIDTH_S[resolution], one_server=False)
        params = {"start": start, "end": end}
    col_list = ", ".join(f'"{c}"' for c in columns)
    updates = ", ".join(f'"{c}" = EXCLUDED."{c}"' for c in columns)
    sql = (
        f"INSERT INTO {TABLES[resolution]} (server_id, ts, {col_list}) {select} "
        f"ON CONFLICT (server_id, ts) DO UPDATE SET {updates}"
    )
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.rowcount


def _max_interval_s() -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT coalesce(max(poll_interval_s), 10) FROM dashboard_server")
        return int(cur.fetchone()[0])


def built_until(resolution: str) -> dt.datetime | None:
    state = RollupState.objects.filter(resolution=resolution).first()
    return state.built_until if state else None


def build_rollups_now(now: dt.datetime | None = None, *, max_span: dt.timedelta = dt.timedelta(days=2)) -> dict:
    """Advance 1m, then 15m and 1h, from their high-water marks; at most max_span per call (catch-up is gradual)."""
    now = now or dt.datetime.now(dt.UTC)
    done = {}
    target_1m = floor_time(now - LAG, 60)
    done["1m"] = _advance("1m", target_1m, max_span)
    # A quarter-hour or an hour is final once every minute in it is.
    for resolution in ("15m", "1h"):
        done[resolution] = _advance(resolution, floor_time(built_until("1m") or target_1m, WIDTH_S[resolution]), max_span)
    return done


def mark_built(start: dt.datetime, end: dt.datetime) -> None:
    """After build_range over [start, end) for both resolutions (history written in bulk): move the
    high-water marks to `end` if the built range joins them, so reads use the new rollups."""
    for resolution in LEVELS:
        edge = floor_time(end, WIDTH_S[resolution])
        mark = built_until(resolution)
        first = _first_data_time(resolution) if mark is None else None
        # No mark yet: only if nothing older is waiting to be rolled up (the periodic task starts there).
        if (mark is None and (first is None or first >= floor_time(start, WIDTH_S[resolution]))) or (
            mark is not None and start <= mark < edge
        ):
            RollupState.objects.update_or_create(resolution=resolution, defaults={"built_until": edge})


def analyze() -> None:
    """Fresh planner statistics after a bulk build: with the default (none yet) the planner expects
    one row per partition and sorts 43,200 rows of a 30-day chart instead of hashing 1,441 buckets
    (autovacuum gets there too, later)."""
    with connection.cursor() as cur:
        cur.execute(f"ANALYZE {', '.join(TABLES[r] for r in LEVELS)}")


def _advance(resolution: str, target: dt.datetime, max_span: dt.timedelta) -> int:
    start = built_until(resolution) or _first_data_time(resolution)
    if start is None or start >= target:
        return 0
    stop = min(target, start + max_span)
    rows = build_range(resolution, start, stop)
    RollupState.objects.update_or_create(resolution=resolution, defaults={"built_until": stop})
    return rows


def _first_data_time(resolution: str) -> dt.datetime | None:
    source = RAW_TABLE if resolution == "1m" else TABLES["1m"]
    with connection.cursor() as cur:
        cur.execute(f"SELECT min(ts) FROM {source}")
        first = cur.fetchone()[0]
    return floor_time(first, WIDTH_S[resolution]) if first else None
