"""Effect reports of tuning changes. Session or Bearer token (accounts.auth)."""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from accounts.auth import api_auth
from annotations import effects
from annotations.models import Annotation
from servers.api_params import BadRequest, bad_request, parse_time
from servers.models import Server


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
