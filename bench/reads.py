"""Read-path figures: the series API over 30 days and the server overview, through Django's test client."""

from __future__ import annotations

import datetime as dt
import statistics
import time

from django.test import Client

from servers.models import Server
from timeseries import ingest, series

SERIES_METRICS = [
    "checkpoint_age_bytes", "modified_age_bytes", "history_list_length", "pages_dirty", "pages_free",
    "trx_active", "threads_running", "semaphore_waits",
    "pages_flushed_per_s", "redo_bytes_per_s", "commits_per_s", "rows_read_per_s",
]


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _timed_get(client: Client, url: str, params: dict | None, repeats: int) -> tuple[list[float], object]:
    times, response = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        response = client.get(url, params or {})
        times.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
    return times, response


def series_figures(client: Client, server: Server, start: dt.datetime, end: dt.datetime, repeats: int = 30) -> dict:
    params = {"metrics": ",".join(SERIES_METRICS), "start": start.isoformat(), "end": end.isoformat(), "points": 1500}
    times, response = _timed_get(client, f"/api/v1/servers/{server.pk}/series", params, repeats)
    data = response.json()["metrics"]
    # Before/after the 15-minute level, interleaved so load from elsewhere hits both alike.
    by_level: dict[str, list[float]] = {"1m": [], "15m": []}
    for _ in range(repeats):
        for level, spent in by_level.items():
            began = time.perf_counter()
            series.series_for(server, SERIES_METRICS, start, end, 1500, resolution=level)
            spent.append((time.perf_counter() - began) * 1000)
    raw_times = []
    for _ in range(3):  # the same answer from raw rows only: what the rollups save
        began = time.perf_counter()
        series.series_for(server, SERIES_METRICS, start, end, 1500, resolution="raw")
        raw_times.append((time.perf_counter() - began) * 1000)
    return {
        "series_p95_ms": p95(times),
        "series_p50_ms": statistics.median(times),
        "series_points_per_metric": max(len(v["t"]) for v in data.values()),
        "series_response_bytes": len(response.content),
        "series_raw_only_median_ms": statistics.median(raw_times),
        "series_resolution": series.choose_resolution(start.timestamp(), end.timestamp(), 1500, server.poll_interval_s),
        "series_from_1m_p95_ms": p95(by_level["1m"]),
        "series_from_1m_p50_ms": statistics.median(by_level["1m"]),
        "series_from_15m_p95_ms": p95(by_level["15m"]),
        "series_from_15m_p50_ms": statistics.median(by_level["15m"]),
        "series_15m_speedup_p95": p95(by_level["1m"]) / p95(by_level["15m"]),
    }


def make_fleet(count: int, now: dt.datetime) -> None:
    """`count` servers with an hour of recent 10 s samples each (what the overview reads)."""
    from dashboard.history import samples

    rows = []
    for n in range(count):
        server, _ = Server.objects.update_or_create(
            name=f"fleet-{n:03d}", defaults={"synthetic": True, "enabled": False, "tags": ["synthetic", f"rack{n % 8}"],
                                             "poll_interval_s": 10, "last_sample_at": now,
                                             "last_poll_status": Server.PollStatus.OK})
        rows.extend(samples(server.pk, server.name, now - dt.timedelta(hours=1), now, 10, now))
    ingest.save_innodb_samples(rows)


def overview_figures(client: Client, repeats: int = 20) -> dict:
    page, _ = _timed_get(client, "/", None, repeats)
    api, response = _timed_get(client, "/api/v1/servers", None, repeats)
    return {
        "overview_servers": Server.objects.count(),
        "overview_p95_ms": p95(page),
        "overview_p50_ms": statistics.median(page),
        "servers_api_p95_ms": p95(api),
        "servers_api_count": len(response.json()),
    }
