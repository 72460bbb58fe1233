"""The servers' part of the JSON API: the inventory and the variable history."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.api import RefuseNul
from accounts.api_params import IsoTimeField, validated
from servers import changes
from servers.models import Server, VariableChange
from servers.status import server_status

CHANGES_LIMIT = 1000


class ServerSerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField(help_text="ok / stale / unreachable / never / imported / "
                                                         "auth / privilege / timeout / parse / error")

    class Meta:
        model = Server
        fields = ["id", "name", "host", "port", "flavor", "version", "last_sample_at", "status"]

    def get_status(self, server: Server) -> str:
        return server_status(server, self.context["now"])

    def to_representation(self, server):
        # Built directly: the fields above document the shape; field-by-field rendering cost
        # more than the query on a list of hundreds of servers.
        return {"id": server.pk, "name": server.name, "host": server.host, "port": server.port,
                "flavor": server.flavor, "version": server.version,
                "last_sample_at": server.last_sample_at.isoformat() if server.last_sample_at else None,
                "status": server_status(server, self.context["now"])}


def _names(value: str) -> list[str]:
    return [n.strip() for n in (value or "").split(",") if n.strip()]


class VariablesQuery(serializers.Serializer):
    at = IsoTimeField(help_text="ISO 8601: the variables in force then (default: the latest snapshot)")
    name = serializers.CharField(required=False, allow_blank=True, help_text="comma-separated variable names")


class VariableChangesQuery(serializers.Serializer):
    name = serializers.CharField(required=False, allow_blank=True, help_text="comma-separated variable names")
    start = IsoTimeField()
    end = IsoTimeField()


class VariablesSerializer(serializers.Serializer):
    server = serializers.IntegerField()
    at = serializers.CharField()
    snapshot_at = serializers.CharField(allow_null=True)
    variables = serializers.DictField(child=serializers.CharField(allow_null=True))


class VariableChangeSerializer(serializers.ModelSerializer):
    ts = serializers.SerializerMethodField()
    set_by = serializers.SerializerMethodField()

    class Meta:
        model = VariableChange
        fields = ["ts", "name", "old_value", "new_value", "set_by"]

    def get_ts(self, change) -> str:
        return change.ts.isoformat()

    def get_set_by(self, change) -> str | None:
        return change.set_by or None


class VariableChangesSerializer(serializers.Serializer):
    server = serializers.IntegerField()
    changes = VariableChangeSerializer(many=True)


class ServerViewSet(RefuseNul, viewsets.GenericViewSet):
    queryset = Server.objects.only("id", "name", "host", "port", "flavor", "version", "last_sample_at", "imported",
                                   "last_poll_status", "poll_interval_s")
    serializer_class = ServerSerializer
    lookup_value_converter = "int"

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "now": timezone.now()}

    def list(self, request):
        return Response(self.get_serializer(self.get_queryset(), many=True).data)

    @extend_schema(parameters=[VariablesQuery], responses=VariablesSerializer)
    @action(detail=True, methods=["get"])
    def variables(self, request, pk=None):
        """The global variables in force at `at` (default: the latest snapshot)."""
        server = get_object_or_404(Server, pk=pk)
        query = validated(VariablesQuery, request.query_params)
        at = query.get("at")
        values = changes.variables_at(server, at) if at is not None else dict(server.variables or {})
        names = _names(query.get("name"))
        if names:
            values = {n: values.get(n) for n in names}
        return Response({
            "server": server.pk,
            "at": (at or server.variables_at or timezone.now()).isoformat(),
            "snapshot_at": server.variables_at.isoformat() if server.variables_at else None,
            "variables": dict(sorted(values.items())),
        })

    @extend_schema(parameters=[VariableChangesQuery], responses=VariableChangesSerializer)
    @action(detail=True, methods=["get"], url_path="variable-changes")
    def variable_changes(self, request, pk=None):
        """Every detected change of a global variable, newest first."""
        server = get_object_or_404(Server, pk=pk)
        query = validated(VariableChangesQuery, request.query_params)
        qs = VariableChange.objects.filter(server=server)
        if names := _names(query.get("name")):
            qs = qs.filter(name__in=names)
        if query.get("start"):
            qs = qs.filter(ts__gte=query["start"])
        if query.get("end"):
            qs = qs.filter(ts__lte=query["end"])
        rows = qs.order_by("-ts", "name")[:CHANGES_LIMIT]
        return Response({"server": server.pk, "changes": VariableChangeSerializer(rows, many=True).data})
