"""The time series' part of the JSON API: series, thresholds, stored status text, hot latches."""

from __future__ import annotations

from django.db.models import Count, Max
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.auth import api_auth
from servers.api_params import BadRequest, bad_request, parse_range, parse_time
from servers.models import Server
from timeseries import series as series_reader
from timeseries.disk_series import disk_series_for
from timeseries.metrics import DISK_METRICS, METRICS
from timeseries.models import InnodbSample, SemaphoreWaitSample
from timeseries.raw import deadlock_section, raw_status_at, status_text
from timeseries.thresholds import server_limits

MAX_POINTS = 5000
MAX_METRICS = 20


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
    if disk_names:  # derived from raw disk counters; default devices: datadir/redo
        devices = [d.strip() for d in request.GET.get("device", "").split(",") if d.strip()]
        disk_data, body["devices"] = disk_series_for(server, disk_names, start, end, points, devices)
        data.update(disk_data)
    return JsonResponse({"metrics": {n: data[n] for n in names}, **body})


TOP_LATCHES = 20


@api_auth
@require_GET
def thresholds(request, server_id: int):
    server = get_object_or_404(Server, pk=server_id)
    latest = InnodbSample.objects.filter(server=server).order_by("-ts").first()
    return JsonResponse({"server": server.pk, "limits": server_limits(server, latest).as_dict()})


@api_auth
@require_GET
def raw(request, server_id: int):
    server = get_object_or_404(Server, pk=server_id)
    try:
        at = parse_time(request.GET.get("at"), "at", timezone.now())
    except BadRequest as exc:
        return bad_request(str(exc))
    row = raw_status_at(server, at)
    if row is None:
        return JsonResponse({"error": "no status text stored for this server"}, status=404)
    text = status_text(row)
    return JsonResponse({"ts": row.ts.isoformat(), "parser_version": row.parser_version,
                         "text": text, "latest_deadlock": deadlock_section(text)})


@api_auth
@require_GET
def latches(request, server_id: int):
    """Waits grouped by where the latch was created: the hot latch, named by its source line."""
    server = get_object_or_404(Server, pk=server_id)
    try:
        start, end = parse_range(request.GET)
    except BadRequest as exc:
        return bad_request(str(exc))
    rows = (
        SemaphoreWaitSample.objects.filter(server=server, ts__gte=start, ts__lt=end)
        .values("created_file", "created_line", "latch")
        .annotate(waits=Count("seq"), samples=Count("ts", distinct=True), longest_s=Max("seconds"))
        .order_by("-waits", "-longest_s")[:TOP_LATCHES]
    )
    return JsonResponse({"start": start.isoformat(), "end": end.isoformat(), "latches": list(rows)})
