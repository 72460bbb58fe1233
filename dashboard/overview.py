"""The overview's data: every server's latest sample, last hour of checkpoint age, limits and
status, in a constant number of SQL statements however many servers there are."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Count

from timeseries.thresholds import ServerLimits, runway_minutes, server_limits

SPARK_MINUTES = 60
RUNWAY_WINDOW_S = 300.0
RAW_TAIL_S = 420.0  # the runway's window plus a minute, always read from raw rows
RUNWAY_HORIZON_MIN = 60.0  # beyond an hour, runway no longer orders servers
# Worst first: the order the overview uses before nearness to a stall.
STATUS_RANK = {"critical": 0, "warning": 1, "unreachable": 2, "stale": 3, "ok": 4, "imported": 5}
_LATEST_COLUMNS = (
    "ts", "checkpoint_age_bytes", "history_list_length", "pages_dirty", "pages_data", "pages_free",
    "max_checkpoint_age_bytes", "checkpoint_age_target_bytes", "status_checkpoint_max_age",
)


@dataclass
class Latest:
    """The columns of a server's newest InnodbSample that the overview shows."""

    ts: dt.datetime | None = None
    checkpoint_age_bytes: int | None = None
    history_list_length: int | None = None
    pages_dirty: int | None = None
    pages_data: int | None = None
    pages_free: int | None = None
    max_checkpoint_age_bytes: int | None = None
    checkpoint_age_target_bytes: int | None = None
    status_checkpoint_max_age: int | None = None


@dataclass
class Row:
    server: object
    status: str
    why: str
    limits: ServerLimits
    latest: Latest
    spark: list[tuple[float, float]] = field(default_factory=list)  # (epoch s, bytes)
    pct_of_async: float | None = None
    runway_min: float | None = None
    dirty_pct: float | None = None
    sample_age_s: float | None = None
    alerts_firing: int = 0
    alerts_critical: int = 0
    text: dict = field(default_factory=dict)  # preformatted cells: the template stays cheap at 200 rows

    @property
    def sort_key(self) -> tuple:
        """Worst status, then the shortest runway, then the largest share of the stall point."""
        runway = RUNWAY_HORIZON_MIN if self.runway_min is None else min(self.runway_min, RUNWAY_HORIZON_MIN)
        stall = self.limits.stall_bytes
        age = self.latest.checkpoint_age_bytes
        share = age / stall if age is not None and stall else -1.0
        return (STATUS_RANK.get(self.status, 9), runway, -share, self.server.name)

    @property
    def spark_async_y(self) -> str:
        """Height of the async point in the sparkline box ("" when unknown)."""
        if not self.spark or not self.limits.async_bytes:
            return ""
        top = max([self.limits.async_bytes] + [v for _, v in self.spark])
        return f"{20.0 - 20.0 * self.limits.async_bytes / top:.1f}"


def latest_samples(server_ids: list[int]) -> dict[int, Latest]:
    """Newest sample per server: one statement, an index probe per server (LATERAL … LIMIT 1)."""
    if not server_ids:
        return {}
    columns = ", ".join(f"s.{c}" for c in _LATEST_COLUMNS)
    sql = (
        f"SELECT ids.id, {columns} FROM unnest(%s::bigint[]) AS ids(id) CROSS JOIN LATERAL ("
        f"SELECT {', '.join(_LATEST_COLUMNS)} FROM dashboard_innodbsample "
        "WHERE server_id = ids.id ORDER BY ts DESC LIMIT 1) s"
    )
    with connection.cursor() as cur:
        cur.execute(sql, [server_ids])
        return {row[0]: Latest(*row[1:]) for row in cur.fetchall()}


def age_history(server_ids: list[int], now: dt.datetime) -> dict[int, list[tuple[float, float]]]:
    """Checkpoint age per server in 1-minute buckets over the last hour, one statement.

    Minutes the rollup task has finished come from the 1-minute rollup (60 rows per server
    whatever the poll interval); the last few minutes, and any the rollup has not reached, from
    raw rows, as (mean sample time, mean age) so the runway slope sees where the samples are."""
    if not server_ids:
        return {}
    start = now - dt.timedelta(minutes=SPARK_MINUTES)
    boundary = max(_rollup_boundary(now) or start, start)
    # float8 throughout: numeric avg() of bigint/extract() costs more than the scan itself.
    raw = (
        "SELECT server_id, avg(date_part('epoch', ts)), avg(checkpoint_age_bytes::float8) "
        "FROM dashboard_innodbsample WHERE server_id = ANY(%s) AND ts >= %s AND ts <= %s "
        "AND checkpoint_age_bytes IS NOT NULL "
        "GROUP BY server_id, date_bin('1 minute'::interval, ts, 'epoch'::timestamptz)"
    )
    sql, params = raw, [server_ids, boundary, now]
    if boundary > start:
        rolled = (
            "SELECT server_id, date_part('epoch', ts) + 30, "
            "checkpoint_age_bytes_sum::float8 / checkpoint_age_bytes_count "
            "FROM dashboard_innodbrollup1m WHERE server_id = ANY(%s) AND ts >= %s AND ts < %s "
            "AND checkpoint_age_bytes_count > 0"
        )
        sql, params = f"{rolled} UNION ALL {raw}", [server_ids, start, boundary, *params]
    out: dict[int, list[tuple[float, float]]] = {}
    with connection.cursor() as cur:
        cur.execute(f"{sql} ORDER BY 1, 2", params)
        for server_id, t, age in cur.fetchall():
            out.setdefault(server_id, []).append((float(t), float(age)))
    return out


def _rollup_boundary(now: dt.datetime) -> dt.datetime | None:
    """Start of the minute before which the 1-minute rollup is final, keeping a raw tail for
    the runway; None when rollups are not built (raw rows only)."""
    try:
        from timeseries.models import RollupState
    except ImportError:
        return None
    state = RollupState.objects.filter(resolution="1m").first()
    if state is None:
        return None
    edge = min(state.built_until, now - dt.timedelta(seconds=RAW_TAIL_S))
    return edge.replace(second=0, microsecond=0)


def firing_alerts(server_ids: list[int]) -> dict[int, tuple[int, int]]:
    """(firing, of which critical) per server; empty if alerting is not installed."""
    try:
        from alerting.models import AlertState
    except ImportError:
        return {}
    rows = (
        AlertState.objects.filter(server_id__in=server_ids, state="firing")
        .values("server_id", "rule__severity")
        .annotate(n=Count("id"))
    )
    out: dict[int, tuple[int, int]] = {}
    for row in rows:
        total, critical = out.get(row["server_id"], (0, 0))
        is_critical = row["rule__severity"] == "critical"
        out[row["server_id"]] = (total + row["n"], critical + (row["n"] if is_critical else 0))
    return out


def dirty_pct(latest: Latest) -> float | None:
    # buf_get_modified_ratio_pct(): dirty / (LRU + free), the ratio max_dirty_pages_pct limits.
    if latest.pages_dirty is None or latest.pages_data is None:
        return None
    base = latest.pages_data + (latest.pages_free or 0)
    return 100.0 * latest.pages_dirty / base if base else None


def status_of(server, row: Row, now: dt.datetime) -> tuple[str, str]:
    """(word, reason). Poll failures and staleness first: old numbers must not look fine."""
    if server.imported:
        return "imported", "imported capture, not polled"
    if server.last_poll_status not in ("ok", "never"):
        return "unreachable", f"last poll: {server.get_last_poll_status_display()}"
    if server.is_stale(now):
        return "stale", "no sample yet" if server.last_sample_at is None else "no recent sample"
    age, limits = row.latest.checkpoint_age_bytes, row.limits
    if age is not None and limits.stall_bytes and age >= limits.stall_bytes:
        return "critical", "checkpoint age at the sync point"
    if row.alerts_critical:
        return "critical", "critical alert firing"
    if age is not None and limits.async_bytes and age >= limits.async_bytes:
        return "warning", "checkpoint age past the async point"
    if row.alerts_firing:
        return "warning", "alert firing"
    return "ok", ""


def build_row(server, latest: Latest | None, spark, alerts, now: dt.datetime) -> Row:
    latest = latest or Latest()
    limits = server_limits(server, latest)
    row = Row(server=server, status="", why="", limits=limits, latest=latest, spark=spark or [])
    age = latest.checkpoint_age_bytes
    if age is not None and limits.async_bytes:
        row.pct_of_async = 100.0 * age / limits.async_bytes
    if row.spark:
        recent = [p for p in row.spark if p[0] >= row.spark[-1][0] - RUNWAY_WINDOW_S]
        if latest.ts is not None and age is not None:
            recent.append((latest.ts.timestamp(), float(age)))
        row.runway_min = runway_minutes(recent, limits)
    row.dirty_pct = dirty_pct(latest)
    if server.last_sample_at is not None:
        row.sample_age_s = max((now - server.last_sample_at).total_seconds(), 0.0)
    row.alerts_firing, row.alerts_critical = alerts or (0, 0)
    row.status, row.why = status_of(server, row, now)
    row.text = cell_text(row)
    return row


def _age_text(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h" if seconds < 172800 else f"{seconds / 86400:.0f} days"


def _runway_text(minutes: float | None) -> str:
    if minutes is None:
        return "–"
    return "< 1 min" if minutes < 1 else f"{minutes:.0f} min"


def cell_text(row: Row) -> dict[str, str]:
    """Display strings and sort keys (data-* attributes) for one overview row."""
    hll = row.latest.history_list_length
    return {
        "pct": "–" if row.pct_of_async is None else f"{row.pct_of_async:.0f} %",
        "runway": _runway_text(row.runway_min),
        "hll": "–" if hll is None else str(hll),
        "dirty": "–" if row.dirty_pct is None else f"{row.dirty_pct:.1f} %",
        "age": _age_text(row.sample_age_s),
        "sort_pct": repr(-1.0 if row.pct_of_async is None else round(row.pct_of_async, 2)),
        "sort_runway": repr(1e9 if row.runway_min is None else round(row.runway_min, 2)),
        "sort_hll": str(-1 if hll is None else hll),
        "sort_dirty": repr(-1.0 if row.dirty_pct is None else round(row.dirty_pct, 2)),
        "sort_age": repr(1e12 if row.sample_age_s is None else round(row.sample_age_s, 1)),
        "spark": sparkline_points(row.spark, row.limits.async_bytes),
        "spark_async_y": row.spark_async_y,
    }


def overview_rows(servers, now: dt.datetime) -> list[Row]:
    """Rows for ``servers``, nearest to a stall first."""
    servers = list(servers)
    ids = [s.pk for s in servers]
    latest, history, alerts = latest_samples(ids), age_history(ids, now), firing_alerts(ids)
    rows = [build_row(s, latest.get(s.pk), history.get(s.pk), alerts.get(s.pk), now) for s in servers]
    return sorted(rows, key=lambda r: r.sort_key)


def sparkline_points(points: list[tuple[float, float]], async_bytes: int | None) -> str:
    """Scale to 100×20 with the async point (or the largest value) at the top."""
    if not points:
        return ""
    t0, t1 = points[0][0], points[-1][0]
    top = max([async_bytes or 0] + [v for _, v in points]) or 1.0
    span = (t1 - t0) or 1.0
    coords = []
    for t, v in points:
        x = 100.0 * (t - t0) / span if len(points) > 1 else 100.0
        y = 20.0 - 20.0 * v / top
        if math.isfinite(x) and math.isfinite(y):
            coords.append(f"{x:.1f},{y:.1f}")
    return " ".join(coords)
