"""Pages. Views query, call analysis and charts, and render; they never talk to a monitored server."""

from __future__ import annotations

import redis
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone

from accounts.api_params import BadRequest, parse_time
from accounts.roles import can_operate
from collectors.tasks import last_heartbeat
from dashboard import charts
from dashboard.overview import overview_rows
from servers.models import CollectorRun, PollMinute, Server
from servers.status import server_status
from timeseries.models import DiskSample, RawStatus
from timeseries.raw import deadlock_section, raw_status_at, status_text


@login_required
def overview(request):
    now = timezone.now()
    tag = request.GET.get("tag", "").strip()
    servers = Server.objects.all()
    if tag:
        servers = servers.filter(tags__contains=[tag])
    all_tags = sorted({t for tags in Server.objects.values_list("tags", flat=True) for t in tags})
    rows = overview_rows(servers, now)
    return render(request, "dashboard/overview.html",
                  {"rows": rows, "now": now, "tag": tag, "tags": all_tags, "alerts_url": reverse("alerts"),
                   "collector_problem": collector_problem(now.timestamp(), any(r.server.enabled for r in rows))})


HEARTBEAT_STALE_S = 60


def collector_problem(now_s: float, polling_expected: bool) -> str | None:
    """Why no poll may be running (beat or worker down, Redis unreachable), or None if all is well.
    The heartbeat task is sent by beat every 10 s and run by a worker, so it proves both."""
    try:
        beat = last_heartbeat()
    except redis.RedisError as exc:
        return f"Redis (the Celery broker) is unreachable: {exc}"
    if beat is None:
        return "No collector heartbeat yet: are Celery beat and a worker running?" if polling_expected else None
    age = now_s - beat
    if age > HEARTBEAT_STALE_S:
        return f"The collector has been stalled for {int(age)} s: check Celery beat and the workers."
    return None


@login_required
def server_detail(request, server_id: int):
    server = get_object_or_404(Server, pk=server_id)
    now = timezone.now()
    row = overview_rows([server], now)[0]  # same status, runway and alerts as the overview
    limits = row.limits
    recent_runs = CollectorRun.objects.filter(server=server).order_by("-started_at")[:10]
    recent_minutes = PollMinute.objects.filter(server=server).order_by("-minute")[:10]
    return render(request, "dashboard/server.html", {
        "server": server,
        "status": server_status(server, now),
        "row": row,
        "limits": limits,
        "page_config": charts.page_config(server, limits, DiskSample.objects.filter(server=server).exists()),
        "recent_runs": recent_runs,
        "recent_minutes": recent_minutes,
        "bursts": server.bursts.all()[:10],
        "can_capture": can_operate(request.user) and server.enabled and not server.imported,
    })


@login_required
def raw_view(request, server_id: int):
    server = get_object_or_404(Server, pk=server_id)
    error = ""
    try:
        at = parse_time(request.GET.get("at"), "at", timezone.now())
    except BadRequest as exc:
        at, error = timezone.now(), str(exc)
    raw = raw_status_at(server, at)
    text = status_text(raw)
    older = newer = None
    if raw is not None:
        rows = RawStatus.objects.filter(server=server).values_list("ts", flat=True)
        older = rows.filter(ts__lt=raw.ts).order_by("-ts").first()
        newer = rows.filter(ts__gt=raw.ts).order_by("ts").first()
    # The server keeps printing its last deadlock, so the text at `at` holds the latest one.
    return render(request, "dashboard/raw.html", {
        "server": server, "at": at, "raw": raw, "text": text, "deadlock": deadlock_section(text),
        "error": error, "older": older, "newer": newer,
    })
