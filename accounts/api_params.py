"""Query parameters every API endpoint shares (times and time ranges), as DRF serializer fields,
with the messages users get. A bad value raises BadRequest: a 400 `{"error": "..."}`."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

MAX_RANGE = dt.timedelta(days=400)
# Times outside this window are typing errors, and near year 1 or 9999 date arithmetic overflows.
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)


class BadRequest(Exception):
    pass


def parse_time(value: str | None, name: str, default: dt.datetime | None) -> dt.datetime | None:
    if value is None or value == "":
        return default
    try:
        # ISO 8601 is ASCII; Python's \d would otherwise accept other scripts' digits.
        parsed = parse_datetime(value) if value.isascii() and value.isprintable() else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise BadRequest(f"{name}={value!r} is not an ISO 8601 date-time (e.g. 2026-11-22T10:00:00Z)")
    if timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, dt.UTC)
    if not EARLIEST <= parsed <= LATEST:
        raise BadRequest(f"{name} must be between {EARLIEST:%Y-%m-%d} and {LATEST:%Y-%m-%d}")
    return parsed


@extend_schema_field(OpenApiTypes.DATETIME)
class IsoTimeField(serializers.Field):
    """An ISO 8601 date-time; without a zone it is UTC. Empty = not given."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise BadRequest(f"{self.field_name} must be an ISO 8601 date-time string")
        return parse_time(data, self.field_name, None)

    def to_representation(self, value):
        return value.isoformat() if value else None


class TimeRangeQuery(serializers.Serializer):
    """`start`/`end`; by default the hour before now (or before `end`)."""

    start = IsoTimeField(help_text="ISO 8601; default: one hour before end")
    end = IsoTimeField(help_text="ISO 8601; default: now")
    default_span = dt.timedelta(hours=1)

    def validate(self, attrs):
        end = attrs.get("end") or timezone.now()
        start = attrs.get("start") or end - self.default_span
        if start >= end:
            raise BadRequest("start must be before end")
        if end - start > MAX_RANGE:
            raise BadRequest(f"range too long: at most {MAX_RANGE.days} days")
        return {**attrs, "start": start, "end": end}


def validated(serializer_class, params) -> dict:
    """The validated query of a request (`request.query_params`), or a 400."""
    query = serializer_class(data=params)
    query.is_valid(raise_exception=True)
    return query.validated_data
