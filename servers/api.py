"""The servers' part of the JSON API: the inventory and the variable history."""

from __future__ import annotations

import datetime as dt

from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.auth import api_auth
from servers import changes
from servers.api_params import BadRequest, bad_request, parse_time
from servers.models import Server, VariableChange
from servers.status import server_status

CHANGES_LIMIT = 1000


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


@api_auth
@require_GET
def variables(request, server_id: int):
    """The global variables in force at `at` (default: the latest snapshot)."""
    server = get_object_or_404(Server, pk=server_id)
    try:
        at = parse_time(request.GET.get("at"), "at", None)
    except BadRequest as exc:
        return bad_request(str(exc))
    values = changes.variables_at(server, at) if at is not None else dict(server.variables or {})
    names = [n.strip() for n in request.GET.get("name", "").split(",") if n.strip()]
    if names:
        values = {n: values.get(n) for n in names}
    return JsonResponse({
        "server": server.pk,
        "at": (at or server.variables_at or timezone.now()).isoformat(),
        "snapshot_at": server.variables_at.isoformat() if server.variables_at else None,
        "variables": dict(sorted(values.items())),
    })


@api_auth
@require_GET
def variable_changes(request, server_id: int):
    server = get_object_or_404(Server, pk=server_id)
    qs = VariableChange.objects.filter(server=server)
    names = [n.strip() for n in request.GET.get("name", "").split(",") if n.strip()]
    if names:
        qs = qs.filter(name__in=names)
    try:
        if request.GET.get("start"):
            qs = qs.filter(ts__gte=parse_time(request.GET["start"], "start", None))
        if request.GET.get("end"):
            qs = qs.filter(ts__lte=parse_time(request.GET["end"], "end", None))
    except BadRequest as exc:
        return bad_request(str(exc))
    rows = [
        {"ts": c.ts.isoformat(), "name": c.name, "old_value": c.old_value, "new_value": c.new_value,
         "set_by": c.set_by or None}
        for c in qs.order_by("-ts", "name")[:CHANGES_LIMIT]
    ]
    return JsonResponse({"server": server.pk, "changes": rows})
