"""The what-if part of the JSON API: POST /api/v1/servers/<id>/what-if and GET .../redo-sizing."""

from __future__ import annotations

import datetime as dt

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.api import RefuseNul
from accounts.api_params import BadRequest, IsoTimeField, TimeRangeQuery, validated
from servers.models import Server
from timeseries import whatif

MAX_SPAN = dt.timedelta(days=2)


class WhatIfRequest(serializers.Serializer):
    start = IsoTimeField(help_text="ISO 8601; default: the worst hour (highest checkpoint age) of the last 7 days")
    end = IsoTimeField(help_text="ISO 8601; default: the end of that hour")
    calibrate_start = IsoTimeField(help_text="fit the workload on [calibrate_start, calibrate_end] (default: the range)")
    calibrate_end = IsoTimeField(help_text="end of the calibration window")
    overrides = serializers.DictField(required=False, default=dict,
                                      help_text='{"innodb_io_capacity": 2000, "innodb_adaptive_flushing": "ON", ...}')


class WhatIfResponse(serializers.Serializer):
    start = serializers.CharField()
    end = serializers.CharField()
    overrides = serializers.DictField()
    in_force = serializers.DictField()
    t = serializers.ListField(child=serializers.IntegerField(), help_text="epoch ms of each poll")
    measured = serializers.DictField(help_text="checkpoint_age_bytes, pages_dirty, flush_per_s by path")
    replayed = serializers.DictField(help_text="the model with the variables in force (its fit is `fit`)")
    what_if = serializers.DictField(help_text="the model with the overrides; crossings of async/sync/max")
    thresholds = serializers.DictField()
    fit = serializers.DictField(help_text="measured vs replayed checkpoint age: mean, p95 and their errors in %")
    peak_pct_of_async = serializers.DictField()
    verdict = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())


class RedoSizingResponse(serializers.Serializer):
    busiest_hour_start = serializers.CharField()
    busiest_hour_redo_bytes_per_s = serializers.IntegerField()
    capacity_bytes = serializers.IntegerField()
    minutes_held = serializers.FloatField(allow_null=True)
    smallest_capacity_below_async_bytes = serializers.IntegerField(allow_null=True)
    resize = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())


class RedoSizingQuery(TimeRangeQuery):
    default_span = dt.timedelta(days=7)


def _range(server, body: dict) -> tuple[dt.datetime, dt.datetime]:
    start, end = body.get("start"), body.get("end")
    if start is None and end is None:
        worst = whatif.worst_hour(server, timezone.now())
        if worst is None:
            raise BadRequest("no samples in the last 7 days: give start and end")
        return worst
    end = end or start + dt.timedelta(hours=1)
    start = start or end - dt.timedelta(hours=1)
    if start >= end:
        raise BadRequest("start must be before end")
    if end - start > MAX_SPAN:
        raise BadRequest(f"range too long for a replay: at most {MAX_SPAN.days} days")
    return start, end


class ServerWhatIfViewSet(RefuseNul, viewsets.GenericViewSet):
    queryset = Server.objects.all()
    lookup_value_converter = "int"

    @extend_schema(request=WhatIfRequest, responses=WhatIfResponse)
    @action(detail=True, methods=["post"], url_path="what-if")
    def what_if(self, request, pk=None):
        """Replay a stored range through InnoDB's flushing rules with variables overridden."""
        server = get_object_or_404(Server, pk=pk)
        if not isinstance(request.data, dict):
            raise BadRequest("the body must be a JSON object {start, end, overrides}")
        body = validated(WhatIfRequest, request.data)
        start, end = _range(server, body)
        try:
            calibration = None
            if body.get("calibrate_start") and body.get("calibrate_end"):
                calibration = (body["calibrate_start"], body["calibrate_end"])
            return Response(whatif.what_if(server, start, end, body.get("overrides") or {}, calibration))
        except whatif.WhatIfError as exc:
            raise BadRequest(str(exc)) from None

    @extend_schema(parameters=[RedoSizingQuery], responses=RedoSizingResponse)
    @action(detail=True, methods=["get"], url_path="redo-sizing")
    def redo_sizing(self, request, pk=None):
        """How long the redo log holds the busiest hour, and the smallest size that keeps it below async."""
        server = get_object_or_404(Server, pk=pk)
        query = validated(RedoSizingQuery, request.query_params)
        try:
            return Response(whatif.redo_advice(server, query["start"], query["end"]))
        except whatif.WhatIfError as exc:
            raise BadRequest(str(exc)) from None
