"""Variable history and effect reports (issue 7). Session or Bearer token (dashboard.auth)."""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.views.decorators.http import require_GET

from dashboard import changes, effects
from dashboard.api import BadRequest, bad_request, parse_time
from dashboard.auth import api_auth
from dashboard.models import Annotation, Server, VariableChange

CHANGES_LIMIT = 1000


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


def _effect_response(server: Server, windows) -> JsonResponse:
    body, _, _ = effects.effect_report(server, windows)
    return JsonResponse(body)


@api_auth
@require_GET
def annotation_effect(request, annotation_id: int):
    """?window=30m&settle=2m; the annotation must be about one server."""
    annotation = get_object_or_404(Annotation.objects.select_related("server"), pk=annotation_id)
    if annotation.server is None:
        return bad_request("this annotation covers several servers; use /api/v1/servers/<id>/effect")
    try:
        windows = effects.annotation_windows(
            annotation,
            effects.parse_duration(request.GET.get("window"), effects.DEFAULT_WINDOW, "window"),
            effects.parse_duration(request.GET.get("settle"), effects.DEFAULT_SETTLE, "settle"),
        )
        return _effect_response(annotation.server, windows)
    except effects.EffectError as exc:
        return bad_request(str(exc))


@api_auth
@require_GET
def server_effect(request, server_id: int):
    """Any two windows: before_start, before_end, after_start, after_end (ISO 8601)."""
    server = get_object_or_404(Server, pk=server_id)
    try:
        bounds = [_required(request.GET, n) for n in ("before_start", "before_end", "after_start", "after_end")]
        windows = effects.Windows(bounds[2], (bounds[0], bounds[1]), (bounds[2], bounds[3]))
        return _effect_response(server, windows)
    except (BadRequest, effects.EffectError) as exc:
        return bad_request(str(exc))


def _required(params, name: str):
    value = parse_time(params.get(name), name, None)
    if value is None:
        raise BadRequest(f"{name} is required (ISO 8601)")
    return value
