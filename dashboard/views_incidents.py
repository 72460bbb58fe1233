"""The incident page of a burst (one-second charts over it, its raw texts second by second, what
waited at the worst second, the downloads) and the "capture now" button."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.roles import OPERATOR, require_role
from dashboard import charts
from incidents import queries, triggers
from incidents.models import Burst, BurstSecond
from servers.models import Server
from timeseries.models import DiskSample
from timeseries.thresholds import server_limits

# The burst page's charts: what a stall is made of, one second apart.
BURST_CHARTS = ("chart-checkpoint", "chart-redo", "chart-flush", "chart-semaphores", "chart-threads",
                "chart-hll", "chart-disk")
CONTEXT = dt.timedelta(seconds=60)  # normal polls either side, so the burst is seen against them


def threads_chart() -> dict:
    return {"id": "chart-threads", "title": "Threads running", "y_title": "threads",
            "series": [{"metric": "threads_running", "label": "Threads_running", "scale": 1}]}


def burst_page_config(burst: Burst) -> dict:
    server = burst.server
    end = burst.finished_at or burst.ends_at
    has_disk = DiskSample.objects.filter(server=server, ts__gte=burst.started_at, ts__lte=end).exists()
    config = charts.page_config(server, server_limits(server), has_disk)
    config["charts"] = [c for c in config["charts"] + [threads_chart()] if c["id"] in BURST_CHARTS]
    config["charts"].sort(key=lambda c: BURST_CHARTS.index(c["id"]))
    config["kinds"]["threads_running"] = "gauge"
    config["fixed_range"] = [int((burst.started_at - CONTEXT).timestamp() * 1000),
                             int((end + CONTEXT).timestamp() * 1000)]
    config["burst"] = {
        "id": burst.pk,
        "seconds": list(BurstSecond.objects.filter(burst=burst).order_by("seq").values_list("seq", flat=True)),
        "second_url": f"/api/v1/bursts/{burst.pk}/seconds/",
    }
    return config


@login_required
def burst_page(request, burst_id: int):
    burst = get_object_or_404(Burst.objects.select_related("server", "requested_by"), pk=burst_id)
    worst = queries.worst_second(burst)
    detail = queries.second_detail(worst) if worst is not None else None
    config = burst_page_config(burst)
    return render(request, "dashboard/burst.html", {
        "burst": burst, "server": burst.server, "page_config": config, "worst": worst,
        "waiting": queries.longest_waiting_threads(detail) if detail else [],
        "transactions": queries.oldest_transactions(detail) if detail else [],
        "capture_url": reverse("api-burst-capture", args=[burst.pk]),
        "pt_stalk_url": reverse("api-burst-pt-stalk", args=[burst.pk]),
    })


@require_POST
@require_role(OPERATOR)
def capture_now(request, server_id: int):
    server = get_object_or_404(Server, pk=server_id)
    try:
        burst = triggers.start_manual(server, request.user)
    except triggers.BurstRefused as exc:
        running = Burst.objects.filter(server=server, status=Burst.Status.RUNNING).first()
        if running is not None:
            return redirect("burst", burst_id=running.pk)  # the capture asked for is under way
        return HttpResponse(f"No capture started: {exc}.", status=409, content_type="text/plain")
    return redirect("burst", burst_id=burst.pk)


def attach_bursts(items: list, server_id, at) -> None:
    """Set `item.burst` to the burst its server was in at `at(item)` (alerts link to it); one query."""
    times = {id(item): at(item) for item in items}
    known = [t for t in times.values() if t is not None]
    if not known:
        return
    bursts = list(Burst.objects.filter(server_id__in={server_id(i) for i in items}, started_at__lte=max(known),
                                       ends_at__gte=min(known)).order_by("-started_at"))
    for item in items:
        when = times[id(item)]
        item.burst = next((b for b in bursts if when is not None and b.server_id == server_id(item)
                           and b.started_at <= when <= (b.finished_at or b.ends_at)), None)
