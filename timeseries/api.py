"""The time series' part of the JSON API: series, thresholds, stored status text, hot latches."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, Max
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.api import RefuseNul
from accounts.api_params import BadRequest, IsoTimeField, TimeRangeQuery, validated
from analysis.purge import ViewHolder, hold_intervals
from servers.models import Server
from timeseries import series as series_reader
from timeseries.disk_series import disk_series_for
from timeseries.metrics import DISK_METRICS, METRICS
from timeseries.models import InnodbSample, ReadViewHolder, SemaphoreWaitSample
from timeseries.raw import deadlock_section, raw_status_at, status_text
from timeseries.thresholds import server_limits
from timeseries.variable_steps import STEP_VARIABLES, variable_steps

MAX_POINTS = 5000
MAX_METRICS = 20
TOP_LATCHES = 20
MAX_HOLDER_ROWS = 100_000


@extend_schema_field(OpenApiTypes.STR)
class MetricListField(serializers.Field):
    """Comma-separated metric names, each served once, in the order asked."""

    def to_internal_value(self, value):
        names = [n.strip() for n in str(value).split(",") if n.strip()]
        if not names:
            raise BadRequest("metrics is required, e.g. metrics=checkpoint_age_bytes,history_list_length")
        if len(set(names)) > MAX_METRICS:
            raise BadRequest(f"too many metrics: at most {MAX_METRICS} in one request")
        unknown = [n for n in names if n not in METRICS and n not in DISK_METRICS]
        if unknown:
            known = ", ".join(sorted([*METRICS, *DISK_METRICS]))
            raise BadRequest(f"unknown metric(s): {', '.join(unknown)}; known: {known}")
        return list(dict.fromkeys(names))

    def to_representation(self, value):
        return ",".join(value)


@extend_schema_field(OpenApiTypes.INT)
class PointsField(serializers.Field):
    def to_internal_value(self, value):
        if value == "":
            return 600
        try:
            points = int(value)
        except ValueError:
            raise BadRequest(f"points={value!r} is not a whole number") from None
        if not 1 <= points <= MAX_POINTS:
            raise BadRequest(f"points must be between 1 and {MAX_POINTS}")
        return points

    def to_representation(self, value):
        return value


class SeriesQuery(TimeRangeQuery):
    metrics = MetricListField(required=False, help_text="comma-separated metric names (required), e.g. "
                                                        "checkpoint_age_bytes,history_list_length")
    points = PointsField(required=False, help_text=f"at most this many buckets (1-{MAX_POINTS}, default 600)")
    device = serializers.CharField(required=False, allow_blank=True,
                                   help_text="disk metrics: comma-separated devices (default: datadir and redo)")

    def validate(self, attrs):
        if "metrics" not in attrs:
            raise BadRequest("metrics is required, e.g. metrics=checkpoint_age_bytes,history_list_length")
        return {"points": 600, **super().validate(attrs)}


class SeriesSerializer(serializers.Serializer):
    start = serializers.CharField()
    end = serializers.CharField()
    devices = serializers.ListField(child=serializers.CharField(), required=False)
    metrics = serializers.DictField(
        help_text='per metric: {"t": [epoch ms], "min": [...], "avg": [...], "max": [...]}')


class AtQuery(serializers.Serializer):
    at = IsoTimeField(help_text="ISO 8601 (default: now): the status stored at or before it")


class RawStatusSerializer(serializers.Serializer):
    ts = serializers.CharField()
    parser_version = serializers.CharField()
    text = serializers.CharField()
    latest_deadlock = serializers.CharField()


class LatchSerializer(serializers.Serializer):
    created_file = serializers.CharField()
    created_line = serializers.IntegerField(allow_null=True)
    latch = serializers.CharField()
    waits = serializers.IntegerField()
    samples = serializers.IntegerField()
    longest_s = serializers.FloatField(allow_null=True)


class LatchesSerializer(serializers.Serializer):
    start = serializers.CharField()
    end = serializers.CharField()
    latches = LatchSerializer(many=True)


class ThresholdsSerializer(serializers.Serializer):
    server = serializers.IntegerField()
    limits = serializers.DictField(help_text="redo capacity and InnoDB's async / sync / max points, in bytes")


class PurgeBlockerSerializer(serializers.Serializer):
    thread_id = serializers.IntegerField(allow_null=True)
    user = serializers.CharField(allow_null=True)
    host = serializers.CharField(allow_null=True)
    trx_id = serializers.CharField(allow_null=True)
    first_seen = serializers.CharField()
    last_seen = serializers.CharField()
    max_age_s = serializers.IntegerField(allow_null=True)
    statement = serializers.CharField(allow_null=True)
    rows_locked = serializers.IntegerField(allow_null=True, help_text="as last seen; INNODB_TRX or the status text")
    rows_modified = serializers.IntegerField(allow_null=True, help_text="as last seen; null: not shown")


def purge_blockers(server: Server, start, end) -> list[dict]:
    """The oldest-view holders over [start, end] as intervals, newest first (analysis.purge)."""
    rows = ReadViewHolder.objects.filter(server=server, ts__gte=start, ts__lte=end).order_by("ts", "rank")
    sightings = [(r.ts.timestamp(), ViewHolder(r.thread_id, r.user or None, r.host or None, r.trx_id or None,
                                               r.age_s, r.state or None, r.statement or None, r.rows_locked,
                                               r.rows_modified))
                 for r in rows[:MAX_HOLDER_ROWS]]
    gap_s = 3 * max(server.poll_interval_s, 1)
    return [{"thread_id": i.thread_id, "user": i.user, "host": i.host, "trx_id": i.trx_id,
             "first_seen": dt.datetime.fromtimestamp(i.first_seen, dt.UTC).isoformat(),
             "last_seen": dt.datetime.fromtimestamp(i.last_seen, dt.UTC).isoformat(),
             "max_age_s": i.max_age_s, "statement": i.statement, "rows_locked": i.rows_locked,
             "rows_modified": i.rows_modified}
            for i in hold_intervals(sightings, gap_s)]


class VariableStepsQuery(TimeRangeQuery):
    names = serializers.CharField(required=False, help_text=f"comma-separated, of: {', '.join(STEP_VARIABLES)}")

    def validate(self, attrs):
        names = [n.strip() for n in attrs.get("names", "").split(",") if n.strip()] or list(STEP_VARIABLES)
        unknown = [n for n in names if n not in STEP_VARIABLES]
        if unknown:
            raise BadRequest(f"unknown variable(s): {', '.join(unknown)}; known: {', '.join(STEP_VARIABLES)}")
        return {**super().validate(attrs), "names": list(dict.fromkeys(names))}


class ServerSeriesViewSet(RefuseNul, viewsets.GenericViewSet):
    """Per-server time series endpoints (under /api/v1/servers/<id>/)."""

    queryset = Server.objects.all()
    lookup_value_converter = "int"

    @extend_schema(parameters=[SeriesQuery], responses=SeriesSerializer)
    @action(detail=True, methods=["get"])
    def series(self, request, pk=None):
        """Min/avg/max per bucket of each metric; `..._per_s` metrics are rates of stored counters."""
        server = get_object_or_404(Server, pk=pk)
        query = validated(SeriesQuery, request.query_params)
        names, start, end = query["metrics"], query["start"], query["end"]
        disk_names = [n for n in names if n in DISK_METRICS]
        data = series_reader.series_for(server, [n for n in names if n not in DISK_METRICS], start, end,
                                        query["points"])
        body = {"start": start.isoformat(), "end": end.isoformat()}
        if disk_names:  # derived from raw disk counters; default devices: datadir/redo
            devices = [d.strip() for d in query.get("device", "").split(",") if d.strip()]
            disk_data, body["devices"] = disk_series_for(server, disk_names, start, end, query["points"], devices)
            data.update(disk_data)
        return Response({"metrics": {n: data[n] for n in names}, **body})

    @extend_schema(responses=ThresholdsSerializer)
    @action(detail=True, methods=["get"])
    def thresholds(self, request, pk=None):
        """InnoDB's own flush thresholds for this server (the bands of the checkpoint-age chart)."""
        server = get_object_or_404(Server, pk=pk)
        latest = InnodbSample.objects.filter(server=server).order_by("-ts").first()
        return Response({"server": server.pk, "limits": server_limits(server, latest).as_dict()})

    @extend_schema(parameters=[AtQuery], responses={200: RawStatusSerializer, 404: OpenApiResponse(
        description="no status text stored for this server")})
    @action(detail=True, methods=["get"])
    def raw(self, request, pk=None):
        """The SHOW ENGINE INNODB STATUS text stored at (or nearest before) `at`."""
        server = get_object_or_404(Server, pk=pk)
        at = validated(AtQuery, request.query_params).get("at") or timezone.now()
        row = raw_status_at(server, at)
        if row is None:
            return Response({"error": "no status text stored for this server"}, status=404)
        text = status_text(row)
        return Response({"ts": row.ts.isoformat(), "parser_version": row.parser_version,
                         "text": text, "latest_deadlock": deadlock_section(text)})

    @extend_schema(parameters=[TimeRangeQuery], responses=PurgeBlockerSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="purge-blockers")
    def purge_blockers(self, request, pk=None):
        """Who held the oldest read views (what holds purge back), as intervals, newest first."""
        server = get_object_or_404(Server, pk=pk)
        query = validated(TimeRangeQuery, request.query_params)
        return Response(purge_blockers(server, query["start"], query["end"]))

    @extend_schema(parameters=[VariableStepsQuery], responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], url_path="variable-steps")
    def variable_steps(self, request, pk=None):
        """Purge variables over the range as steps from the variable history:
        {"variables": {name: {"t": [epoch ms], "value": [...]}}}; null = not on this server."""
        server = get_object_or_404(Server, pk=pk)
        query = validated(VariableStepsQuery, request.query_params)
        steps = variable_steps(server, query["names"], query["start"], query["end"])
        return Response({"start": query["start"].isoformat(), "end": query["end"].isoformat(), "variables": steps})

    @extend_schema(parameters=[TimeRangeQuery], responses=LatchesSerializer)
    @action(detail=True, methods=["get"])
    def latches(self, request, pk=None):
        """Waits grouped by where the latch was created: the hot latch, named by its source line."""
        server = get_object_or_404(Server, pk=pk)
        query = validated(TimeRangeQuery, request.query_params)
        start, end = query["start"], query["end"]
        rows = (
            SemaphoreWaitSample.objects.filter(server=server, ts__gte=start, ts__lt=end)
            .values("created_file", "created_line", "latch")
            .annotate(waits=Count("seq"), samples=Count("ts", distinct=True), longest_s=Max("seconds"))
            .order_by("-waits", "-longest_s")[:TOP_LATCHES]
        )
        return Response({"start": start.isoformat(), "end": end.isoformat(), "latches": list(rows)})
