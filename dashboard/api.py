"""JSON API v1. Every endpoint: session or Bearer token (dashboard.auth.api_auth)."""

from __future__ import annotations

import datetime as dt

from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET

from dashboard import series as series_reader
from dashboard.auth import api_auth
from dashboard.disk_series import disk_series_for
from dashboard.metrics import DISK_METRICS, METRICS
from dashboard.models import Server

MAX_POINTS = 5000
MAX_RANGE = dt.timedelta(days=400)
MAX_METRICS = 20
# Times outside this window are typing errors, and near year 1 or 9999 date arithmetic overflows.
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)


class BadRequest(Exception):
    pass


def bad_request(message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=400)


def server_status(server: Server, now: dt.datetime | None = None) -> str:
    """One word: ok / stale / unreachable / never / imported (alert states come from alerting)."""
    if server.imported:
        return "imported"
    if server.last_poll_status not in (Server.PollStatus.OK, Server.PollStatus.NEVER):
        return "unreachable" if server.last_poll_status == Server.PollStatus.UNREACHABLE else server.last_poll_status
    if server.last_sample_at is None:
        return "never"
    return "stale" if server.is_stale(now) else "ok"


def server_json(server: Server, now: dt.datetime) -> dict:
    return {
        "id": server.pk,
        "name": server.name,
        "host": server.host,
        "port": server.port,
        "flavor": server.flavor,
        "version": server.version,
        "last_sample_at": server.last_sample_at.isoformat() if server.last_sample_at else None,
        "status": server_status(server, now),
    }


@api_auth
@require_GET
def servers(request):
    now = timezone.now()
    fields = ("id", "name", "host", "port", "flavor", "version", "last_sample_at", "imported",
              "last_poll_status", "poll_interval_s")
    return JsonResponse([server_json(s, now) for s in Server.objects.only(*fields)], safe=False)


def parse_time(value: str | None, name: str, default: dt.datetime) -> dt.datetime:
    if value is None or value == "":
        return default
    try:
        # ISO 8601 is ASCII; Python's \d would otherwise accept other scripts' digits.
        parsed = parse_datetime(value) if value.isascii() and value.isprintable() else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise BadRequest(f"{name}={value!r} is not an ISO 8601 date-time (e.g. 2026-11-22T10:00:00Z)")
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, dt.UTC)
    if not EARLIEST <= parsed <= LATEST:
        raise BadRequest(f"{name} must be between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d}")
    return parsed


def parse_range(params, default_span: dt.timedelta = dt.timedelta(hours=1)) -> tuple[dt.datetime, dt.datetime]:
    now = timezone.now()
    end = parse_time(params.get("end"), "end", now)
    start = parse_time(params.get("start"), "start", end - default_span)
    if start >= end:
        raise BadRequest("start must be before end")
    if end - start > MAX_RANGE:
        raise BadRequest(f"range too long: at most {MAX_RANGE.days} days")
    return start, end


def parse_points(value: str | None, default: int = 600) -> int:
    if value is None or value == "":
        return default
    try:
        points = int(value)
    except ValueError:
        raise BadRequest(f"points={value!r} is not a whole number") from None
    if not 1 <= points <= MAX_POINTS:
        raise BadRequest(f"points must be between 1 and {MAX_POINTS}")
    return points


def parse_metrics(value: str | None) -> list[str]:
    names = [n.strip() for n in (value or "").split(",") if n.strip()]
    if not names:
        raise BadRequest("metrics is required, e.g. metrics=checkpoint_age_bytes,history_list_length")
    if len(set(names)) > MAX_METRICS:
        raise BadRequest(f"too many metrics: at most {MAX_METRICS} in one request")
    unknown = [n for n in names if n not in METRICS and n not in DISK_METRICS]
    if unknown:
        known = ", ".join(sorted([*METRICS, *DISK_METRICS]))
        raise BadRequest(f"unknown metric(s): {', '.join(unknown)}; known: {known}")
    return list(dict.fromkeys(names))


@api_auth
@require_GET
def server_series(request, server_id: int):
    server = get_object_or_404(Server, pk=server_id)
    try:
        names = parse_metrics(request.GET.get("metrics"))
        start, end = parse_range(request.GET)
        points = parse_points(request.GET.get("points"))
    except BadRequest as exc:
        return bad_request(str(exc))
    disk_names = [n for n in names if n in DISK_METRICS]
    data = series_reader.series_for(server, [n for n in names if n not in DISK_METRICS], start, end, points)
    body = {"start": start.isoformat(), "end": end.isoformat()}
    if disk_names:  # issue 4: derived from raw disk counters; default devices: datadir/redo
        devices = [d.strip() for d in request.GET.get("device", "").split(",") if d.strip()]
        disk_data, body["devices"] = disk_series_for(server, disk_names, start, end, points, devices)
        data.update(disk_data)
    return JsonResponse({"metrics": {n: data[n] for n in names}, **body})
