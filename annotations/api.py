"""The annotations' part of the JSON API: list/create, read/edit/delete, and the effect report of
a change. Session or Bearer token, so deploy tools can post; validation failures are 400 with a
message a person can act on."""

from __future__ import annotations

import datetime as dt

from django.db.models import Q
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.api import RefuseNul
from accounts.api_params import BadRequest, IsoTimeField, parse_time, validated
from accounts.permissions import OperatorWrites
from annotations import effects
from annotations.models import Annotation
from servers.models import Server

MAX_TEXT = 10_000
MAX_TAGS = 20
LIST_LIMIT = 1000


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


def parse_tags(value) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise BadRequest("tags must be a list of strings (or a comma-separated string)")
    tags = [t.strip() for t in value if t.strip()]
    if len(tags) > MAX_TAGS or any(len(t) > 50 for t in tags):
        raise BadRequest(f"at most {MAX_TAGS} tags of at most 50 characters each")
    return list(dict.fromkeys(tags))


def _required_time(value, name: str):
    # Grafana and many deploy tools send epoch milliseconds.
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            moment = dt.datetime.fromtimestamp(value / 1000, dt.UTC)
        except (OverflowError, OSError, ValueError):
            raise BadRequest(f"{name}={value} is not a time in epoch milliseconds") from None
        return parse_time(moment.isoformat(), name, None)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{name} is required: an ISO 8601 date-time (e.g. 2026-11-22T10:00:00Z) "
                         f"or epoch milliseconds")
    return parse_time(value, name, None)


class AnnotationSerializer(serializers.ModelSerializer):
    """What is read back; writes go through `to_internal_value`, field by field, in this order:
    unknown fields, time, time_end, text, tags, server (id or name), scope_tag, kind."""

    time = serializers.DateTimeField(help_text="ISO 8601; required when creating")
    time_end = serializers.DateTimeField(allow_null=True, required=False, help_text="ISO 8601: a range's end")
    text = serializers.CharField(max_length=MAX_TEXT)
    tags = serializers.ListField(child=serializers.CharField(max_length=50), required=False,
                                 help_text="a list of strings, or one comma-separated string")
    server = serializers.CharField(required=False, allow_null=True,
                                   help_text="server id or name; with neither server nor scope_tag: every server")
    server_name = serializers.SerializerMethodField()
    scope_tag = serializers.CharField(required=False, allow_null=True, help_text="every server with this tag")
    kind = serializers.ChoiceField(choices=Annotation.Kind.choices, required=False)
    author = serializers.SerializerMethodField()

    class Meta:
        model = Annotation
        fields = ["id", "time", "time_end", "text", "tags", "kind", "server", "server_name", "scope_tag",
                  "author", "created_at"]
        read_only_fields = ["id", "created_at"]

    WRITABLE = ("time", "time_end", "text", "tags", "server", "scope_tag", "kind")
    # A Grafana annotation (its HTTP API or a webhook) names the end timeEnd and carries where it
    # was drawn; those are accepted, and the dashboard fields ignored.
    ALIASES = {"timeEnd": "time_end"}
    IGNORED = ("dashboardUID", "dashboardId", "panelId", "id")

    def get_server_name(self, annotation) -> str | None:
        return annotation.server.name if annotation.server_id else None

    def get_author(self, annotation) -> str | None:
        return annotation.author.get_username() if annotation.author_id else None

    def to_representation(self, a: Annotation) -> dict:
        return {"id": a.pk, "time": a.time.isoformat(), "time_end": a.time_end.isoformat() if a.time_end else None,
                "text": a.text, "tags": a.tags, "kind": a.kind, "server": a.server_id,
                "server_name": self.get_server_name(a), "scope_tag": a.scope_tag or None,
                "author": self.get_author(a), "created_at": a.created_at.isoformat()}

    def to_internal_value(self, data) -> dict:
        if not isinstance(data, dict):
            raise BadRequest("the body must be a JSON object")
        data = {self.ALIASES.get(k, k): v for k, v in data.items() if k not in self.IGNORED}
        unknown = set(data) - set(self.WRITABLE)
        if unknown:
            raise BadRequest(f"unknown field(s): {', '.join(sorted(unknown))}; known: "
                             f"{', '.join(sorted(self.WRITABLE))}")
        creating = self.instance is None
        out: dict = {}
        if creating or "time" in data:
            out["time"] = _required_time(data.get("time"), "time")
        if "time_end" in data:
            out["time_end"] = None if data["time_end"] in (None, "") else _required_time(data["time_end"], "time_end")
        if creating or "text" in data:
            text = data.get("text")
            if not isinstance(text, str) or not text.strip():
                raise BadRequest("text is required and must be a non-empty string")
            if len(text) > MAX_TEXT:
                raise BadRequest(f"text is longer than {MAX_TEXT} characters")
            out["text"] = text.strip()
        if "tags" in data:
            out["tags"] = parse_tags(data["tags"])
        if "server" in data:
            out["server"] = resolve_server(data["server"])
        if "scope_tag" in data:
            if data["scope_tag"] is not None and not isinstance(data["scope_tag"], str):
                raise BadRequest("scope_tag must be a string (a server tag)")
            out["scope_tag"] = (data["scope_tag"] or "").strip()[:50]
        if "kind" in data:
            if data["kind"] not in Annotation.Kind.values:
                raise BadRequest(f"kind must be one of: {', '.join(Annotation.Kind.values)}")
            out["kind"] = data["kind"]
        return out

    def validate(self, attrs):
        merged = {f: getattr(self.instance, f) for f in ("time", "time_end", "server", "scope_tag")} \
            if self.instance else {}
        merged.update(attrs)
        if merged.get("time_end") is not None and merged["time_end"] < merged["time"]:
            raise BadRequest("time_end must not be before time")
        if merged.get("server") and merged.get("scope_tag"):
            raise BadRequest("give either server or scope_tag, not both")
        return attrs


class AnnotationQuery(serializers.Serializer):
    server = serializers.CharField(required=False, allow_blank=True,
                                   help_text="id or name: its own annotations and those covering it by tag or globally")
    tags = serializers.CharField(required=False, allow_blank=True, help_text="comma-separated, any of")
    kind = serializers.CharField(required=False, allow_blank=True, help_text="comma-separated kinds")
    start = IsoTimeField(help_text="annotations overlapping [start, end]")
    end = IsoTimeField()


def filter_annotations(params) -> list[Annotation]:
    """GET filters: server (id or name; includes tag-scoped and global ones that cover it),
    tags (comma-separated, any of), kind, start/end (annotations overlapping the range)."""
    query = validated(AnnotationQuery, params)
    qs = Annotation.objects.select_related("server", "author")
    server = resolve_server(query.get("server"))
    if server is not None:
        qs = qs.filter(
            Q(server=server) | Q(server__isnull=True, scope_tag__in=server.tags or [""])
            | Q(server__isnull=True, scope_tag="")
        )
    if query.get("tags"):
        qs = qs.filter(tags__overlap=parse_tags(query["tags"]))
    if query.get("kind"):
        qs = qs.filter(kind__in=query["kind"].split(","))
    if query.get("start"):
        qs = qs.filter(Q(time__gte=query["start"]) | Q(time_end__gte=query["start"]))
    if query.get("end"):
        qs = qs.filter(time__lte=query["end"])
    return list(qs.order_by("time")[:LIST_LIMIT])


class GrafanaQuery(serializers.Serializer):
    server = serializers.CharField(required=False, allow_blank=True, help_text="id or name")
    kind = serializers.CharField(required=False, allow_blank=True,
                                 help_text="comma-separated kinds, e.g. variable_change,restart")
    tags = serializers.CharField(required=False, allow_blank=True)
    to = IsoTimeField(help_text="ISO 8601 end, e.g. Grafana's ${__to:date:iso}")

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = IsoTimeField(help_text="ISO 8601 start, e.g. Grafana's ${__from:date:iso}")  # a keyword
        return fields


class GrafanaAnnotationSerializer(serializers.Serializer):
    time = serializers.IntegerField(help_text="epoch ms")
    timeEnd = serializers.IntegerField(help_text="epoch ms")
    title = serializers.CharField()
    text = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    server = serializers.CharField(allow_null=True)


class EffectQuery(serializers.Serializer):
    window = serializers.CharField(required=False, allow_blank=True, help_text="e.g. 30m (default), 90s, 1h")
    settle = serializers.CharField(required=False, allow_blank=True,
                                   help_text="skipped after the change, e.g. 2m (default)")


class WindowsQuery(serializers.Serializer):
    before_start = IsoTimeField(help_text="ISO 8601 (required)")
    before_end = IsoTimeField(help_text="ISO 8601 (required)")
    after_start = IsoTimeField(help_text="ISO 8601 (required)")
    after_end = IsoTimeField(help_text="ISO 8601 (required)")

    def validate(self, attrs):
        for name in ("before_start", "before_end", "after_start", "after_end"):
            if attrs.get(name) is None:
                raise BadRequest(f"{name} is required (ISO 8601)")
        return attrs


class EffectReportSerializer(serializers.Serializer):
    server = serializers.IntegerField()
    windows = serializers.DictField()
    metrics = serializers.DictField(help_text="per metric: before/after stats, change_pct, p_value, significant")
    summary = serializers.CharField()
    workload_changed = serializers.BooleanField()


def _effect(server: Server, windows: effects.Windows) -> Response:
    try:
        body, *_ = effects.effect_report(server, windows)
    except effects.EffectError as exc:
        raise BadRequest(str(exc)) from None
    return Response(body)


class AnnotationViewSet(RefuseNul, viewsets.ModelViewSet):
    serializer_class = AnnotationSerializer
    permission_classes = [OperatorWrites]
    written_things = "annotations"
    http_method_names = ["get", "post", "patch", "delete"]
    lookup_value_converter = "int"

    def get_queryset(self):
        return Annotation.objects.select_related("server", "author")

    @extend_schema(parameters=[AnnotationQuery])
    def list(self, request):
        return Response(self.get_serializer(filter_annotations(request.query_params), many=True).data)

    def create(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        annotation = Annotation(author=request.user, kind=Annotation.Kind.MANUAL)
        for field, value in serializer.validated_data.items():
            setattr(annotation, field, value)
        annotation.save()
        return Response(self.get_serializer(annotation).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request, pk=None):
        annotation = self.get_object()
        serializer = self.get_serializer(annotation, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        for field, value in serializer.validated_data.items():
            setattr(annotation, field, value)
        annotation.save()
        return Response(self.get_serializer(annotation).data)

    def destroy(self, request, pk=None):
        annotation = self.get_object()
        deleted = annotation.pk
        annotation.delete()
        return Response({"deleted": deleted})

    @extend_schema(parameters=[GrafanaQuery], responses=GrafanaAnnotationSerializer(many=True))
    @action(detail=False, methods=["get"])
    def grafana(self, request):
        """Annotations for a Grafana JSON / Infinity datasource: detected tuning changes, restarts and
        the rest, with times in epoch milliseconds, so Grafana panels draw them too."""
        query = validated(GrafanaQuery, request.query_params)
        params = {k: v for k, v in {"server": query.get("server"), "kind": query.get("kind"),
                                    "tags": query.get("tags")}.items() if v}
        if query.get("from"):
            params["start"] = query["from"].isoformat()
        if query.get("to"):
            params["end"] = query["to"].isoformat()
        rows = filter_annotations(params)
        epoch_ms = lambda t: int(t.timestamp() * 1000) if t else None  # noqa: E731
        return Response([{"time": epoch_ms(a.time), "timeEnd": epoch_ms(a.time_end or a.time),
                          "title": a.get_kind_display(), "text": a.text, "tags": a.tags,
                          "server": a.server.name if a.server_id else None} for a in rows])

    @extend_schema(parameters=[EffectQuery], responses=EffectReportSerializer)
    @action(detail=True, methods=["get"])
    def effect(self, request, pk=None):
        """Before/after report around this annotation (it must be about one server)."""
        annotation = get_object_or_404(Annotation.objects.select_related("server"), pk=pk)
        if annotation.server is None:
            raise BadRequest("this annotation covers several servers; use /api/v1/servers/<id>/effect")
        query = validated(EffectQuery, request.query_params)
        try:
            windows = effects.annotation_windows(
                annotation,
                effects.parse_duration(query.get("window"), effects.DEFAULT_WINDOW, "window"),
                effects.parse_duration(query.get("settle"), effects.DEFAULT_SETTLE, "settle"),
            )
        except effects.EffectError as exc:
            raise BadRequest(str(exc)) from None
        return _effect(annotation.server, windows)


class ServerEffectViewSet(RefuseNul, viewsets.GenericViewSet):
    queryset = Server.objects.all()
    lookup_value_converter = "int"

    @extend_schema(parameters=[WindowsQuery], responses=EffectReportSerializer)
    @action(detail=True, methods=["get"])
    def effect(self, request, pk=None):
        """Before/after report for any two windows of one server."""
        server = get_object_or_404(Server, pk=pk)
        q = validated(WindowsQuery, request.query_params)
        windows = effects.Windows(q["after_start"], (q["before_start"], q["before_end"]),
                                  (q["after_start"], q["after_end"]))
        return _effect(server, windows)

