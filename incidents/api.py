"""The incidents part of the JSON API: bursts, each second's readings, the downloads, and
"capture now" (POST /servers/<id>/capture)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.api import RefuseNul
from accounts.permissions import OperatorWrites
from incidents import export, queries, triggers
from incidents.models import Burst, BurstSecond
from servers.models import Server


class BurstSerializer(serializers.ModelSerializer):
    server_name = serializers.CharField(source="server.name", read_only=True)

    class Meta:
        model = Burst
        fields = ["id", "server", "server_name", "trigger", "reason", "status", "started_at", "ends_at",
                  "finished_at", "seconds_read", "failed_reads", "size_bytes", "last_error"]


class CaptureRequest(serializers.Serializer):
    duration_s = serializers.IntegerField(min_value=1, max_value=triggers.MAX_DURATION_S, required=False)


class BurstViewSet(RefuseNul, viewsets.ReadOnlyModelViewSet):
    """Bursts, newest first; `?server=<id>` for one server's."""

    serializer_class = BurstSerializer
    lookup_value_converter = "int"

    def get_queryset(self):
        qs = Burst.objects.select_related("server")
        server = self.request.query_params.get("server")
        if server is not None:
            qs = qs.filter(server_id=int(server)) if server.isdigit() else qs.none()
        return qs

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], url_path="seconds/<int:seq>")
    def second(self, request, pk=None, seq=None):
        """One second's readings: the status text, global status, process list, INNODB_TRX, disk."""
        second = get_object_or_404(BurstSecond, burst_id=pk, seq=int(seq))
        return Response(queries.second_detail(second))

    @extend_schema(responses={(200, "application/gzip"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"], url_path="capture")
    def capture(self, request, pk=None):
        """The burst in innowatch's capture format (JSON lines, gzip): `manage.py import_capture`."""
        burst = self.get_object()
        return _download(export.capture_jsonl_gz(burst), "application/gzip", f"{export.file_stem(burst)}.jsonl.gz")

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"], url_path="pt-stalk")
    def pt_stalk(self, request, pk=None):
        """The burst as a pt-stalk folder (zip), one collection per second."""
        burst = self.get_object()
        return _download(export.pt_stalk_zip(burst), "application/zip", f"{export.file_stem(burst)}.zip")


def _download(body: bytes, content_type: str, name: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


class ServerCaptureViewSet(RefuseNul, viewsets.GenericViewSet):
    queryset = Server.objects.all()
    lookup_value_converter = "int"
    serializer_class = CaptureRequest
    permission_classes = [OperatorWrites]
    written_things = "a capture"

    @extend_schema(request=CaptureRequest, responses={202: BurstSerializer})
    @action(detail=True, methods=["post"], url_path="capture")
    def capture(self, request, pk=None):
        """Capture now: read this server every second for `duration_s` (default: its trigger's)."""
        server = get_object_or_404(Server, pk=pk)
        body = CaptureRequest(data=request.data or {})
        body.is_valid(raise_exception=True)
        if server.imported or not server.host:
            return Response({"detail": "this server is not polled: there is nothing to capture"},
                            status=status.HTTP_400_BAD_REQUEST)
        try:
            burst = triggers.start_manual(server, request.user, body.validated_data.get("duration_s"))
        except triggers.BurstRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(BurstSerializer(burst).data, status=status.HTTP_202_ACCEPTED)
