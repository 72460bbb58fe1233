"""Server-page JSON: limits, stored status text at a time, top latches by creation site."""

from __future__ import annotations

from django.db.models import Count, Max
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.views.decorators.http import require_GET

from dashboard.api import BadRequest, bad_request, parse_range, parse_time
from dashboard.auth import api_auth
from dashboard.models import InnodbSample, SemaphoreWaitSample, Server
from dashboard.thresholds import server_limits

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
    from dashboard.views import deadlock_section, raw_status_at, status_text

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
