"""Annotations API: list/create, read/edit/delete. Session or Bearer token, so deploy
tools can post; validation failures are 400 with a message a person can act on."""

from __future__ import annotations

import datetime as dt
import json

from django.db.models import Q
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_http_methods

from accounts.auth import api_auth
from accounts.roles import can_operate
from annotations.models import Annotation
from servers.api_params import BadRequest, bad_request, parse_time
from servers.models import Server

MAX_TEXT = 10_000
MAX_TAGS = 20
LIST_LIMIT = 1000
FIELDS = {"time", "time_end", "text", "tags", "server", "scope_tag", "kind"}


def annotation_json(a: Annotation) -> dict:
    return {
        "id": a.pk,
        "time": a.time.isoformat(),
        "time_end": a.time_end.isoformat() if a.time_end else None,
        "text": a.text,
        "tags": a.tags,
        "kind": a.kind,
        "server": a.server_id,
        "server_name": a.server.name if a.server_id else None,
        "scope_tag": a.scope_tag or None,
        "author": a.author.get_username() if a.author_id else None,
        "created_at": a.created_at.isoformat(),
    }


def resolve_server(value) -> Server | None:
    """A server by id (number or digits) or by name; None/"" means every server."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise BadRequest("server must be a server id or name")
    value = str(value)
    # isdigit() alone accepts '²', which int() rejects.
    query = Q(pk=int(value)) if value.isascii() and value.isdigit() else Q(name=value)
    server = Server.objects.filter(query).first()
    if server is None:
        raise BadRequest(f"server {value!r} does not exist")
    return server


def _parse_tags(value) -> list[str]:
    if isinstance(value, str):
        value = [t for t in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise BadRequest("tags must be a list of strings (or a comma-separated string)")
    tags = [t.strip() for t in value if t.strip()]
    if len(tags) > MAX_TAGS or any(len(t) > 50 for t in tags):
        raise BadRequest(f"at most {MAX_TAGS} tags of at most 50 characters each")
    return list(dict.fromkeys(tags))


def _required_time(value, name: str) -> dt.datetime:
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{name} is required: an ISO 8601 date-time (e.g. 2026-11-22T10:00:00Z)")
    return parse_time(value, name, None)


def _apply(annotation: Annotation, data: dict, *, creating: bool) -> None:
    """Validate `data` and set it on `annotation`; BadRequest says what is wrong."""
    unknown = set(data) - FIELDS
    if unknown:
        raise BadRequest(f"unknown field(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(FIELDS))}")
    if creating or "time" in data:
        annotation.time = _required_time(data.get("time"), "time")
    if "time_end" in data:
        end = data["time_end"]
        annotation.time_end = None if end in (None, "") else _required_time(end, "time_end")
    if creating or "text" in data:
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BadRequest("text is required and must be a non-empty string")
        if len(text) > MAX_TEXT:
            raise BadRequest(f"text is longer than {MAX_TEXT} characters")
        annotation.text = text.strip()
    if "tags" in data:
        annotation.tags = _parse_tags(data["tags"])
    if "server" in data:
        annotation.server = resolve_server(data["server"])
    if "scope_tag" in data:
        _apply_scope_tag(annotation, data["scope_tag"])
    if "kind" in data:
        if data["kind"] not in Annotation.Kind.values:
            raise BadRequest(f"kind must be one of: {', '.join(Annotation.Kind.values)}")
        annotation.kind = data["kind"]
    _check_consistent(annotation)


def _apply_scope_tag(annotation: Annotation, value) -> None:
    if value is not None and not isinstance(value, str):
        raise BadRequest("scope_tag must be a string (a server tag)")
    annotation.scope_tag = (value or "").strip()[:50]


def _check_consistent(annotation: Annotation) -> None:
    if annotation.time_end is not None and annotation.time_end < annotation.time:
        raise BadRequest("time_end must not be before time")
    if annotation.server_id and annotation.scope_tag:
        raise BadRequest("give either server or scope_tag, not both")


def _body(request) -> dict:
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the body must be a JSON object") from None
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    return data


def filter_annotations(params) -> "list[Annotation]":
    """GET filters: server (id or name; includes tag-scoped and global ones that cover it),
    tags (comma-separated, any of), start/end (annotations overlapping the range)."""
    qs = Annotation.objects.select_related("server", "author")
    server = resolve_server(params.get("server"))
    if server is not None:
        qs = qs.filter(
            Q(server=server) | Q(server__isnull=True, scope_tag__in=server.tags or [""])
            | Q(server__isnull=True, scope_tag="")
        )
    if params.get("tags"):
        qs = qs.filter(tags__overlap=_parse_tags(params["tags"]))
    if params.get("kind"):
        qs = qs.filter(kind__in=params["kind"].split(","))
    if params.get("start"):
        start = parse_time(params["start"], "start", None)
        qs = qs.filter(Q(time__gte=start) | Q(time_end__gte=start))
    if params.get("end"):
        qs = qs.filter(time__lte=parse_time(params["end"], "end", None))
    return list(qs.order_by("time")[:LIST_LIMIT])


@api_auth
@require_http_methods(["GET", "POST"])
def annotations(request):
    try:
        if request.method == "GET":
            return JsonResponse([annotation_json(a) for a in filter_annotations(request.GET)], safe=False)
        if not can_operate(request.user):
            return _needs_operator()
        annotation = Annotation(author=request.user)
        data = _body(request)
        _apply(annotation, data, creating=True)
        if "kind" not in data:
            annotation.kind = Annotation.Kind.MANUAL
    except BadRequest as exc:
        return bad_request(str(exc))
    annotation.save()
    return JsonResponse(annotation_json(annotation), status=201)


@api_auth
@require_http_methods(["GET", "PATCH", "DELETE"])
def annotation(request, annotation_id: int):
    obj = get_object_or_404(Annotation.objects.select_related("server", "author"), pk=annotation_id)
    if request.method == "GET":
        return JsonResponse(annotation_json(obj))
    if not can_operate(request.user):
        return _needs_operator()
    if request.method == "DELETE":
        obj.delete()
        return JsonResponse({"deleted": annotation_id})
    try:
        _apply(obj, _body(request), creating=False)
    except BadRequest as exc:
        return bad_request(str(exc))
    obj.save()
    return JsonResponse(annotation_json(obj))


def _needs_operator() -> JsonResponse:
    return JsonResponse({"error": "writing annotations needs the operator role"}, status=403)
