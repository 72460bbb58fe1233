"""The alerts' part of the JSON API: firing and pending alerts now, and recent history."""

from __future__ import annotations

import datetime as dt

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.response import Response

from accounts.api import RefuseNul
from accounts.api_params import validated
from alerting.models import AlertEvent, AlertState

HISTORY_LIMIT = 200


def _epoch_iso(value: float | None) -> str | None:
    return None if value is None else dt.datetime.fromtimestamp(value, tz=dt.UTC).isoformat()


class AlertStateSerializer(serializers.ModelSerializer):
    rule = serializers.CharField(source="rule.name")
    severity = serializers.CharField(source="rule.severity")
    server = serializers.CharField(source="server.name")
    value = serializers.FloatField(source="last_value", allow_null=True)
    active_since = serializers.SerializerMethodField()
    firing_since = serializers.SerializerMethodField()
    acknowledged_at = serializers.SerializerMethodField()

    class Meta:
        model = AlertState
        fields = ["rule", "severity", "server", "state", "value", "active_since", "firing_since",
                  "acknowledged_at", "ack_note"]

    def get_active_since(self, row) -> str | None:
        return _epoch_iso(row.active_since)

    def get_firing_since(self, row) -> str | None:
        return _epoch_iso(row.firing_since)

    def get_acknowledged_at(self, row) -> str | None:
        return row.acknowledged_at.isoformat() if row.acknowledged_at else None


class AlertEventSerializer(serializers.ModelSerializer):
    rule = serializers.CharField(source="rule.name")
    server = serializers.CharField(source="server.name")
    ts = serializers.SerializerMethodField()

    class Meta:
        model = AlertEvent
        fields = ["rule", "severity", "server", "state", "ts", "value", "silenced"]

    def get_ts(self, event) -> str:
        return event.ts.isoformat()


class AlertsSerializer(serializers.Serializer):
    firing = AlertStateSerializer(many=True)
    pending = AlertStateSerializer(many=True)
    history = AlertEventSerializer(many=True)


class AlertsQuery(serializers.Serializer):
    server = serializers.CharField(required=False, allow_blank=True, help_text="a server's name")


def current_states(state: str, server: str | None = None):
    rows = AlertState.objects.select_related("rule", "server").filter(state=state)
    if server:
        rows = rows.filter(server__name=server)
    return rows.order_by("server__name", "rule__name")


class AlertViewSet(RefuseNul, viewsets.ViewSet):
    @extend_schema(parameters=[AlertsQuery], responses=AlertsSerializer)
    def list(self, request):
        server = validated(AlertsQuery, request.query_params).get("server") or None
        history = AlertEvent.objects.select_related("rule", "server").order_by("-ts", "-pk")
        if server:
            history = history.filter(server__name=server)
        return Response(AlertsSerializer({
            "firing": current_states(AlertState.State.FIRING, server),
            "pending": current_states(AlertState.State.PENDING, server),
            "history": history[:HISTORY_LIMIT],
        }).data)
